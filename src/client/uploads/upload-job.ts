import type { Dispatcher } from 'undici';
import { ConflictError } from '../core/errors.ts';
import type { AssetData, Assets, PresignedRequest } from '../resources/assets.ts';
import { DEFAULT_UPLOAD_PART_BYTES } from '../config-values.ts';
import { assertUnchanged, partLayout, sha256Of } from './local-file.ts';
import { Declarer, type Deferred, deferred } from './declarer.ts';
import { putFileRange } from './put-file-range.ts';
import type { Owner } from './upload-owner.ts';
import type { StoredComponent, StoredUpload, UploadStore } from './upload-store.ts';
import type { WorkerPool } from './worker-pool.ts';

export interface JobContext {
  store: UploadStore;
  assets: Assets;
  pool: WorkerPool;
  owner: Owner;
  dispatcher: Dispatcher;
  /** Aborted when the uploader closes: in-flight PUTs stop, queued ones never start. */
  signal: AbortSignal;
}

/** A URL this close to expiry is presigned afresh before use. */
const EXPIRY_MARGIN_MS = 30_000;

/** One PUT: a whole component (`part` null) or one part of a multipart one. */
interface Piece {
  component: StoredComponent;
  part: number | null;
  offset: number;
  size: number;
}

/** Drives one upload from whatever phase the store says it is in to a ready asset. */
export class UploadJob {
  readonly id: string;
  readonly #ctx: JobContext;
  #assetId: string | null = null;
  #bytesStored = 0;
  #bytesSending = 0;
  #bytesTotal = 0;

  constructor(ctx: JobContext, id: string) {
    this.#ctx = ctx;
    this.id = id;
    const upload = this.#load();
    this.#assetId = upload.assetId;
    for (const c of upload.components) {
      this.#bytesTotal += c.size;
      this.#bytesStored += c.done ? c.size : [...c.doneParts].reduce((sum, n) => sum + partBytes(c, n), 0);
    }
  }

  get assetId(): string | null {
    return this.#assetId;
  }

  progress(): { bytesDone: number; bytesTotal: number } {
    return { bytesDone: this.#bytesStored + this.#bytesSending, bytesTotal: this.#bytesTotal };
  }

  async run(): Promise<AssetData> {
    if (this.#load().state === 'new') await this.#create(this.#load());
    if (this.#load().state === 'uploading') {
      if (!(await this.#transfer(this.#load()))) return this.#ctx.assets.get(this.#assetId!);
      this.#ctx.store.move(this.id, 'uploading', 'finalizing');
      return this.#finalize(false);
    }
    if (this.#load().state === 'finalizing') return this.#finalize(true);
    return this.#ctx.assets.get(this.#assetId!);
  }

  #load(): StoredUpload {
    this.#ctx.signal.throwIfAborted(); // after close the store is gone: stop here rather than touch it
    const upload = this.#ctx.store.get(this.id);
    if (!upload) throw new Error(`upload ${this.id} is no longer in the upload store`);
    return upload;
  }

  /**
   * Creates the asset with every component's size and part layout but no digest (`deferredChecksums`): the
   * files are hashed during the transfer, each just ahead of its PUT, and each digest is declared to the
   * service, which answers that piece's URL with the digest signed in. A store that verifies checksums
   * refuses other bytes; finalize checks the rest.
   */
  async #create(upload: StoredUpload): Promise<void> {
    const components = upload.components.map((c) => {
      const partSize = partLayout(c.size, DEFAULT_UPLOAD_PART_BYTES);
      return { name: c.name, size: c.size, contentType: c.contentType, ...(partSize ? { partSize } : {}) };
    });
    // A kill between this answer and the write below leaves a pending asset on the server that
    // nobody finalizes.
    const asset = await this.#ctx.assets.createPresigned({
      ...upload.links,
      components,
      deferredChecksums: true,
    });
    const multipart: Record<string, { uploadId: string; partSize: number }> = {};
    for (const [name, target] of Object.entries(asset.uploads))
      if ('multipart' in target) multipart[name] = { uploadId: target.upload_id, partSize: target.part_size };
    this.#ctx.signal.throwIfAborted();
    this.#ctx.store.created(this.id, asset.id, multipart);
    this.#assetId = asset.id;
  }

  /**
   * Hashes the components not yet done, one after another, declaring each digest (batched) as soon as it is
   * known, while the pool PUTs every piece whose URL came back: hashing file k + 1 (or part k + 1) overlaps
   * sending file k. False when the asset turned out to be ready already (nothing left to do).
   */
  async #transfer(upload: StoredUpload): Promise<boolean> {
    const pending = upload.components.filter((c) => !c.done);
    const declarer = new Declarer(this.#ctx.assets, this.#assetId!, this.#ctx.signal);
    const pieces = pending.flatMap((c) => this.#pieces(c));
    const waiting = new Map(pieces.map((p) => [pieceKey(p), deferred<PresignedRequest>()]));
    let failure: { error: unknown } | undefined;
    const hashing = this.#hashAll(pending, declarer, waiting, () => failure !== undefined);
    hashing.catch((error: unknown) => {
      failure ??= { error };
      for (const w of waiting.values()) w.reject(error);
    });
    await Promise.allSettled(
      pieces.map((piece) =>
        this.#ctx.pool.run(async () => {
          // fail fast: queued pieces of a failed upload never start
          if (failure || this.#ctx.signal.aborted) return;
          try {
            const target = await waiting.get(pieceKey(piece))!.promise;
            if (failure || this.#ctx.signal.aborted) return;
            await this.#put(piece, target, declarer);
          } catch (error) {
            failure ??= { error };
          }
        }),
      ),
    );
    await hashing.catch(() => undefined);
    if (!failure) await declarer.drain().catch((error: unknown) => (failure ??= { error }));
    if (failure) {
      const { error } = failure;
      if (error instanceof ConflictError && error.code === 'asset_ready') {
        this.#ctx.store.move(this.id, 'uploading', 'done');
        return false;
      }
      throw error;
    }
    this.#ctx.signal.throwIfAborted();
    for (const c of upload.components) if (!c.done) this.#ctx.store.componentDone(this.id, c.name);
    return true;
  }

  /**
   * Hashes each component in one read (whole and per part), declaring a single component's sha256 when it is
   * known, and a part's as soon as that part is read (the whole file's with the last one); digests recorded
   * in the store by an earlier process are declared without reading the file again.
   */
  async #hashAll(
    components: StoredComponent[],
    declarer: Declarer,
    waiting: Map<string, Deferred<PresignedRequest>>,
    failed: () => boolean,
  ): Promise<void> {
    const settle = (c: StoredComponent, part: number | null, target: Promise<PresignedRequest>) => {
      const w = waiting.get(pieceKey({ component: c, part }));
      if (w) target.then(w.resolve, w.reject);
      else target.catch(() => undefined); // a part sent before the crash: declared for the whole digest only
    };
    for (const c of components) {
      this.#ctx.signal.throwIfAborted();
      if (failed()) return; // a PUT failed: the upload stops, hashing the rest would be wasted
      const partSize = c.partSize;
      const count = partSize === null ? 0 : Math.max(1, Math.ceil(c.size / partSize));
      const known = c.sha256;
      if (known !== null && (partSize === null || c.partSha256?.length === count)) {
        await assertUnchanged(c);
        if (partSize === null) settle(c, null, declarer.single(c.name, known));
        else
          c.partSha256!.forEach((h, i) =>
            settle(c, i + 1, declarer.part(c.name, i + 1, h, i + 1 === count ? known : undefined)),
          );
        continue;
      }
      // Kept on the component as they come: a URL that expires before its PUT is asked for again with them.
      const partDigests: string[] = [];
      c.partSha256 = partSize === null ? null : partDigests;
      const digests = await sha256Of(c, partSize, (n, h) => {
        partDigests[n - 1] = h;
        // The last part's digest waits for the whole file's, so both go in one declaration below.
        if (n < count) settle(c, n, declarer.part(c.name, n, h));
      });
      c.sha256 = digests.sha256;
      this.#ctx.store.setSha256(this.id, c.name, digests.sha256, digests.partSha256);
      if (partSize === null) settle(c, null, declarer.single(c.name, digests.sha256));
      else settle(c, count, declarer.part(c.name, count, digests.partSha256!.at(-1)!, digests.sha256));
    }
  }

  #pieces(c: StoredComponent): Piece[] {
    if (c.partSize === null) return [{ component: c, part: null, offset: 0, size: c.size }];
    const count = Math.max(1, Math.ceil(c.size / c.partSize));
    return Array.from({ length: count }, (_, i) => i + 1)
      .filter((n) => !c.doneParts.has(n))
      .map((n) => ({ component: c, part: n, offset: (n - 1) * c.partSize!, size: partBytes(c, n) }));
  }

  async #put(piece: Piece, target: PresignedRequest, declarer: Declarer): Promise<void> {
    const { component: c } = piece;
    await assertUnchanged(c);
    // A URL about to expire (the hashing ran far ahead) is asked for again: declaring the same digest
    // is allowed.
    if (Date.parse(target.expires_at) - Date.now() < EXPIRY_MARGIN_MS) {
      target = await (piece.part === null
        ? declarer.single(c.name, c.sha256!)
        : declarer.part(c.name, piece.part, c.partSha256![piece.part - 1]!));
    }
    let sent = 0;
    try {
      await putFileRange(
        target,
        { path: c.path, offset: piece.offset, size: piece.size },
        {
          dispatcher: this.#ctx.dispatcher,
          signal: this.#ctx.signal,
          onBytes: (n) => {
            sent += n;
            this.#bytesSending += n;
          },
        },
      );
    } catch (error) {
      await assertUnchanged(c); // "deleted" or "changed" says more than a read error or a short body
      throw error;
    } finally {
      this.#bytesSending -= sent;
    }
    await assertUnchanged(c); // the bytes that went out are the hashed ones only if the file never moved
    this.#ctx.signal.throwIfAborted();
    // Recorded only after the 2xx: a kill before this line re-sends the piece, never skips it.
    if (piece.part === null) this.#ctx.store.componentDone(this.id, c.name);
    else this.#ctx.store.partDone(this.id, c.name, piece.part);
    this.#bytesStored += piece.size;
  }

  /** Finalizes exactly once: a resumed "finalizing" upload may have been finalized just before the kill. */
  async #finalize(resumed: boolean): Promise<AssetData> {
    if (resumed) {
      const asset = await this.#ctx.assets.get(this.#assetId!);
      if (asset.state === 'ready') {
        this.#ctx.store.move(this.id, 'finalizing', 'done');
        return asset;
      }
    }
    const asset = await this.#ctx.assets.finalize(this.#assetId!);
    this.#ctx.signal.throwIfAborted();
    this.#ctx.store.move(this.id, 'finalizing', 'done');
    return asset;
  }
}

const pieceKey = (p: { component: StoredComponent; part: number | null }) =>
  `${p.component.name}\n${p.part ?? 0}`;

/** Bytes of part `n` (1-based) of a component cut in `partSize` pieces. */
function partBytes(c: StoredComponent, n: number): number {
  const size = c.partSize ?? c.size;
  return Math.max(0, Math.min(size, c.size - (n - 1) * size));
}
