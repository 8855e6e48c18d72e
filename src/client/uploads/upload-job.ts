import type { Dispatcher } from 'undici';
import { ConflictError } from '../core/errors.ts';
import type { AssetData, Assets, PresignedRequest, UploadTarget } from '../resources/assets.ts';
import { DEFAULT_UPLOAD_PART_BYTES } from '../config-values.ts';
import { assertUnchanged, partLayout, sha256Of } from './local-file.ts';
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
  readonly #targets = new Map<string, UploadTarget>();
  readonly #presigning = new Map<string, Promise<void>>();
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
   * Hashes every file, and each part of a file larger than one part, in one read; then creates the asset. The
   * service signs the digests into the upload URLs, so a store that verifies checksums refuses other bytes and
   * finalize need not read them back; a store that does not is checked by finalize reading them.
   */
  async #create(upload: StoredUpload): Promise<void> {
    const partSizeOf = (c: StoredComponent) => partLayout(c.size, DEFAULT_UPLOAD_PART_BYTES);
    await Promise.all(
      upload.components.map((c) =>
        this.#ctx.pool.run(async () => {
          this.#ctx.signal.throwIfAborted();
          const partSize = partSizeOf(c);
          if (c.sha256 !== null && (partSize === null || c.partSha256 !== null)) return assertUnchanged(c);
          const digests = await sha256Of(c, partSize);
          ({ sha256: c.sha256, partSha256: c.partSha256 } = digests);
          this.#ctx.store.setSha256(this.id, c.name, digests.sha256, digests.partSha256);
        }),
      ),
    );
    const components = upload.components.map((c) => ({
      name: c.name,
      size: c.size,
      contentType: c.contentType,
      sha256: c.sha256!,
      ...(c.partSha256 ? { partSize: partSizeOf(c)!, partSha256: c.partSha256 } : {}),
    }));
    // A kill between this answer and the write below leaves a pending asset on the server that nobody finalizes.
    const asset = await this.#ctx.assets.createPresigned({ ...upload.links, components });
    const multipart: Record<string, { uploadId: string; partSize: number }> = {};
    for (const [name, target] of Object.entries(asset.uploads)) {
      this.#targets.set(name, target);
      if ('multipart' in target) multipart[name] = { uploadId: target.upload_id, partSize: target.part_size };
    }
    this.#ctx.signal.throwIfAborted();
    this.#ctx.store.created(this.id, asset.id, multipart);
    this.#assetId = asset.id;
  }

  /** PUTs every piece not yet done; false when the asset turned out to be ready already (nothing left to do). */
  async #transfer(upload: StoredUpload): Promise<boolean> {
    const pending = upload.components.filter((c) => !c.done);
    const stale = pending.filter((c) => !this.#targets.has(c.name)).map((c) => c.name);
    if (stale.length > 0) {
      try {
        await this.#presign(stale);
      } catch (error) {
        if (!(error instanceof ConflictError && error.code === 'asset_ready')) throw error;
        this.#ctx.store.move(this.id, 'uploading', 'done');
        return false;
      }
      upload = this.#load(); // #presign may have voided parts of a restarted multipart upload
    }
    const pieces = upload.components.filter((c) => !c.done).flatMap((c) => this.#pieces(c));
    let failure: { error: unknown } | undefined;
    await Promise.allSettled(
      pieces.map((piece) =>
        this.#ctx.pool.run(async () => {
          if (failure || this.#ctx.signal.aborted) return; // fail fast: queued pieces of a failed upload never start
          await this.#put(piece).catch((error: unknown) => {
            failure ??= { error };
          });
        }),
      ),
    );
    if (failure) throw failure.error;
    this.#ctx.signal.throwIfAborted();
    for (const c of upload.components) if (!c.done) this.#ctx.store.componentDone(this.id, c.name);
    return true;
  }

  #pieces(c: StoredComponent): Piece[] {
    const target = this.#targets.get(c.name)!;
    if (!('multipart' in target)) return [{ component: c, part: null, offset: 0, size: c.size }];
    return target.parts
      .filter((p) => !c.doneParts.has(p.part_number))
      .map((p) => ({
        component: c,
        part: p.part_number,
        offset: (p.part_number - 1) * target.part_size,
        size: p.size,
      }));
  }

  async #put(piece: Piece): Promise<void> {
    const { component: c } = piece;
    await assertUnchanged(c);
    let sent = 0;
    try {
      await putFileRange(
        await this.#request(c.name, piece.part),
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

  /** The presigned request for a piece, presigning afresh when it is about to expire. */
  async #request(component: string, part: number | null): Promise<PresignedRequest> {
    const find = () => {
      const target = this.#targets.get(component)!;
      return 'multipart' in target ? target.parts.find((p) => p.part_number === part)! : target;
    };
    if (Date.parse(find().expires_at) - Date.now() < EXPIRY_MARGIN_MS) await this.#presign([component]);
    return find();
  }

  /** Fresh targets for some components (one request per batch, shared by concurrent pieces of a component). */
  async #presign(components: string[]): Promise<void> {
    const key = components.join('\n');
    let pending = this.#presigning.get(key);
    if (!pending) {
      pending = this.#ctx.assets.presign(this.#assetId!, components).then((asset) => {
        for (const [name, target] of Object.entries(asset.uploads)) {
          const known = this.#targets.get(name);
          if (
            known &&
            'multipart' in known &&
            'multipart' in target &&
            known.upload_id !== target.upload_id
          ) {
            throw new Error(
              `the server restarted the multipart upload of component ${name} while it was being sent`,
            );
          }
          this.#ctx.signal.throwIfAborted();
          if ('multipart' in target)
            this.#ctx.store.setMultipart(this.id, name, target.upload_id, target.part_size);
          this.#targets.set(name, target);
        }
      });
      this.#presigning.set(key, pending);
      void pending.finally(() => this.#presigning.delete(key)).catch(() => undefined);
    }
    await pending;
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

/** Bytes of part `n` (1-based) of a component cut in `partSize` pieces. */
function partBytes(c: StoredComponent, n: number): number {
  const size = c.partSize ?? c.size;
  return Math.max(0, Math.min(size, c.size - (n - 1) * size));
}
