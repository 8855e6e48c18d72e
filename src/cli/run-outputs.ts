// Watches the outputs directory of `assay run` and uploads each file once it is complete.
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { AssetData, UploadHandle, UploadProgress } from '../client/index.ts';

/**
 * Starts the upload of one file (the crash-safe uploader's uploadAsync, once loaded); may reject when the
 * file vanished.
 */
export type StartUpload = (file: string, relativePath: string) => Promise<UploadHandle>;

export interface OutputsOptions {
  /** A file counts as complete when its size and mtime have not changed for this long. */
  stableMs: number;
  pollMs: number;
  onUploaded?(relativePath: string, asset: AssetData): void;
  onFailed?(relativePath: string, error: unknown): void;
  /** A file appeared or changed: an upload is coming (at least `stableMs` later, or at the end). */
  onChange?(): void;
}

interface Seen {
  size: number;
  mtimeMs: number;
  since: number;
  /** Size and mtime of the version uploaded, if one was. */
  uploaded?: { size: number; mtimeMs: number };
}

export interface OutputsSummary {
  uploaded: AssetData[];
  failures: Array<{ relativePath: string; error: unknown }>;
}

/**
 * Polls rather than using fs.watch: polling sees files in any subdirectory on every platform, and a file must
 * be quiet for `stableMs` anyway. Dot files and symlinks are skipped (write `.x.tmp`, then rename it to `x`).
 * A file is uploaded once while the command runs; one that changed after its upload is uploaded again at
 * the end.
 */
export class OutputsWatcher {
  readonly #dir: string;
  readonly #upload: StartUpload;
  readonly #options: OutputsOptions;
  readonly #seen = new Map<string, Seen>();
  readonly #handles: Array<Promise<AssetData | undefined>> = [];
  readonly #active: UploadHandle[] = [];
  readonly #summary: OutputsSummary = { uploaded: [], failures: [] };
  #settled = 0;
  #timer: NodeJS.Timeout | undefined;
  #scanning: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(dir: string, upload: StartUpload, options: OutputsOptions) {
    this.#dir = dir;
    this.#upload = upload;
    this.#options = options;
  }

  /**
   * Takes the files already in the directory as they are: a previous run's outputs are not this run's. They
   * are uploaded only if the command changes them. Answers how many there were.
   */
  async baseline(): Promise<number> {
    const files = await listFiles(this.#dir);
    for (const relativePath of files) {
      const info = await stat(path.join(this.#dir, relativePath)).catch(() => undefined);
      if (info)
        this.#seen.set(relativePath, {
          size: info.size,
          mtimeMs: info.mtimeMs,
          since: 0,
          uploaded: { size: info.size, mtimeMs: info.mtimeMs },
        });
    }
    return files.length;
  }

  start(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      // A scan that fails (the directory removed under us) is simply tried again on the next tick.
      this.#scanning = this.#scan(false)
        .catch(() => undefined)
        .finally(() => this.start());
    }, this.#options.pollMs);
  }

  /** Bytes of the uploads started so far, and how many are still going. */
  progress(): UploadProgress & { pending: number } {
    const all = this.#active.map((h) => h.progress());
    return {
      bytesDone: all.reduce((s, p) => s + p.bytesDone, 0),
      bytesTotal: all.reduce((s, p) => s + p.bytesTotal, 0),
      pending: this.#handles.length - this.#settled,
    };
  }

  /**
   * Stops watching, uploads every file not yet uploaded (complete or not: the command is gone), waits
   * for all.
   */
  async finish(): Promise<OutputsSummary> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#scanning;
    await this.#scan(true);
    await Promise.all(this.#handles);
    return this.#summary;
  }

  async #scan(final: boolean): Promise<void> {
    const now = Date.now();
    for (const relativePath of await listFiles(this.#dir)) {
      const file = path.join(this.#dir, relativePath);
      const info = await stat(file).catch(() => undefined);
      if (!info) continue; // gone between listing and stat
      let seen = this.#seen.get(relativePath);
      if (!seen || seen.size !== info.size || seen.mtimeMs !== info.mtimeMs) {
        seen = { size: info.size, mtimeMs: info.mtimeMs, since: now, uploaded: seen?.uploaded };
        this.#seen.set(relativePath, seen);
        this.#options.onChange?.();
      }
      const due = final
        ? seen.uploaded === undefined ||
          seen.uploaded.size !== seen.size ||
          seen.uploaded.mtimeMs !== seen.mtimeMs
        : seen.uploaded === undefined && now - seen.since >= this.#options.stableMs;
      if (!due) continue;
      seen.uploaded = { size: seen.size, mtimeMs: seen.mtimeMs };
      this.#start(file, relativePath);
    }
  }

  #start(file: string, relativePath: string): void {
    const failed = (error: unknown) => {
      this.#summary.failures.push({ relativePath, error });
      this.#options.onFailed?.(relativePath, error);
      return undefined;
    };
    const done = this.#upload(file, relativePath)
      .then((handle) => {
        this.#active.push(handle);
        return handle.done;
      })
      .then((asset) => {
        this.#summary.uploaded.push(asset);
        this.#options.onUploaded?.(relativePath, asset);
        return asset;
      }, failed)
      .finally(() => this.#settled++);
    this.#handles.push(done);
  }
}

/** Regular files under dir, as relative paths with `/`; dot files and dot directories left out. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
    .filter((rel) => !rel.split('/').some((segment) => segment.startsWith('.')))
    .sort();
}
