import type { Assets, PresignedRequest } from '../resources/assets.ts';

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

/**
 * A promise settled from outside; a rejection nobody waits for (a piece that never started) is not unhandled.
 */
export function deferred<T>(): Deferred<T> {
  const d = Promise.withResolvers<T>();
  d.promise.catch(() => undefined);
  return d;
}

interface Entry {
  sha256?: string;
  parts: Map<number, string>;
  waiters: Array<{ part: number | null; d: Deferred<PresignedRequest> }>;
}

/** Most components in one declaration (the contract's limit). */
const MAX_COMPONENTS = 1000;

/**
 * Declares digests to `POST /assets/{id}/checksums` as they come, one request at a time: whatever was hashed
 * while a request was out goes in the next one, so small files cost a request per batch, not per file.
 * Each call answers the URL of the piece it declared.
 */
export class Declarer {
  readonly #assets: Assets;
  readonly #assetId: string;
  readonly #signal: AbortSignal;
  #queue = new Map<string, Entry>();
  #sending: Promise<void> | undefined;

  constructor(assets: Assets, assetId: string, signal: AbortSignal) {
    this.#assets = assets;
    this.#assetId = assetId;
    this.#signal = signal;
  }

  /** The PUT of a component sent whole, with its sha256 signed in. */
  single(name: string, sha256: string): Promise<PresignedRequest> {
    return this.#add(name, null, (e) => (e.sha256 = sha256));
  }

  /** The PUT of part `n` of a multipart component; `whole`, the file's sha256, goes with the last part. */
  part(name: string, n: number, sha256: string, whole?: string): Promise<PresignedRequest> {
    return this.#add(name, n, (e) => {
      e.parts.set(n, sha256);
      if (whole !== undefined) e.sha256 = whole;
    });
  }

  /** Resolves once every declaration made so far has been answered. */
  async drain(): Promise<void> {
    while (this.#sending) await this.#sending;
  }

  #add(name: string, part: number | null, fill: (e: Entry) => void): Promise<PresignedRequest> {
    let entry = this.#queue.get(name);
    if (!entry) this.#queue.set(name, (entry = { parts: new Map(), waiters: [] }));
    fill(entry);
    const d = deferred<PresignedRequest>();
    entry.waiters.push({ part, d });
    this.#sending ??= this.#sendAll().finally(() => (this.#sending = undefined));
    return d.promise;
  }

  async #sendAll(): Promise<void> {
    while (this.#queue.size > 0 && !this.#signal.aborted) {
      const batch = [...this.#queue].slice(0, MAX_COMPONENTS);
      for (const [name] of batch) this.#queue.delete(name);
      try {
        const { uploads } = await this.#assets.declareChecksums(
          this.#assetId,
          batch.map(([name, e]) => ({
            name,
            ...(e.sha256 === undefined ? {} : { sha256: e.sha256 }),
            ...(e.parts.size === 0
              ? {}
              : { parts: [...e.parts].map(([partNumber, sha256]) => ({ partNumber, sha256 })) }),
          })),
        );
        for (const [name, e] of batch) {
          const target = uploads[name];
          for (const w of e.waiters) {
            const found =
              target === undefined
                ? undefined
                : 'multipart' in target
                  ? target.parts.find((p) => p.part_number === w.part)
                  : w.part === null
                    ? target
                    : undefined;
            if (found) w.d.resolve(found);
            else w.d.reject(new Error(`the service answered no upload URL for component ${name}`));
          }
        }
      } catch (error) {
        for (const [, e] of batch) for (const w of e.waiters) w.d.reject(error);
      }
    }
    const reason: unknown = this.#signal.reason ?? new Error('the uploader was closed');
    for (const e of this.#queue.values()) for (const w of e.waiters) w.d.reject(reason);
    this.#queue.clear();
  }
}
