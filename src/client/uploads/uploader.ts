import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Agent } from 'undici';
import { UploadError, type UploadFailure } from '../core/errors.ts';
import type { AssetData, AssetLinks, Assets, RunRef } from '../resources/assets.ts';
import { identify } from './local-file.ts';
import { UploadJob } from './upload-job.ts';
import { HEARTBEAT_MS, newOwner } from './upload-owner.ts';
import { UploadStore } from './upload-store.ts';
import { WorkerPool } from './worker-pool.ts';

export interface UploadFile {
  /** Local file to upload. */
  path: string;
  /** Component name; defaults to the file's base name. */
  name?: string;
  contentType?: string;
}

export type UploadParams = AssetLinks & { files: UploadFile[] };

export interface UploadProgress {
  bytesDone: number;
  bytesTotal: number;
}

export interface UploadHandle {
  /** The local id of the upload in the recovery store. */
  readonly id: string;
  /** Resolves with the ready asset; rejects with UploadError. */
  readonly done: Promise<AssetData>;
  progress(): UploadProgress;
}

export interface UploaderOptions {
  assets: Assets;
  serverUrl: string;
  storePath: string;
  maxWorkers: number;
  timeoutS: number;
}

export interface Uploader {
  uploadAsync(params: UploadParams): UploadHandle;
  resume(): Promise<UploadHandle[]>;
  waitForRun(run: { experimentId: string; n: number; r: number }): Promise<void>;
  close(): void;
}

interface Tracked {
  handle: UploadHandle;
  run: RunRef | undefined;
  settled: boolean;
}

/**
 * The crash-safe uploader: each upload is written to the local store before any byte moves, then hashed,
 * created, sent by a pool of `maxWorkers` and finalized, every step recorded so another process can resume.
 */
export function createUploader(options: UploaderOptions): Uploader {
  const serverUrl = options.serverUrl.replace(/\/+$/, '');
  const store = UploadStore.open(options.storePath);
  const owner = newOwner();
  const closing = new AbortController();
  const timeoutMs = options.timeoutS * 1000;
  // headersTimeout counts only once the body is sent, so a long part upload is never cut short.
  const dispatcher = new Agent({ headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const ctx = {
    store,
    assets: options.assets,
    pool: new WorkerPool(options.maxWorkers),
    owner,
    dispatcher,
    signal: closing.signal,
  };
  const tracked = new Map<string, Tracked>();
  const beat = setInterval(() => store.heartbeat(owner), HEARTBEAT_MS);
  beat.unref(); // uploads in flight keep the process alive, the heartbeat alone does not

  function start(id: string, run: RunRef | undefined): UploadHandle {
    const job = new UploadJob(ctx, id);
    const done = job.run().then(
      (asset) => {
        entry.settled = true;
        if (store.isOpen) store.release(id, owner);
        tracked.delete(id); // waitForRun only needs the unfinished and the failed
        return asset;
      },
      (cause: unknown) => {
        entry.settled = true;
        if (store.isOpen) store.release(id, owner, cause instanceof Error ? cause.message : String(cause));
        throw new UploadError([{ uploadId: id, assetId: job.assetId ?? undefined, cause }]);
      },
    );
    // a caller that never awaits `done` must not crash the process; waitForRun reports it
    done.catch(() => undefined);
    const handle: UploadHandle = { id, done, progress: () => job.progress() };
    const entry: Tracked = { handle, run, settled: false };
    tracked.set(id, entry);
    return handle;
  }

  return {
    uploadAsync(params) {
      const { files, ...links } = params;
      const id = randomUUID();
      if (files.length === 0) throw new UploadError([], 'an upload needs at least one file');
      const components = files.map((f) => ({
        ...identifyOrThrow(f.path),
        name: f.name ?? path.basename(f.path),
        contentType: f.contentType ?? 'application/octet-stream',
      }));
      const names = components.map((c) => c.name);
      const duplicate = names.find((n, i) => names.indexOf(n) !== i);
      if (duplicate !== undefined)
        throw new UploadError([], `two files of one upload are both named ${JSON.stringify(duplicate)}`);
      store.register({ id, serverUrl, links, components }, owner);
      return start(id, links.run);
    },

    async resume() {
      const handles: UploadHandle[] = [];
      for (const id of store.incomplete(serverUrl)) {
        const mine = tracked.get(id);
        if (mine && !mine.settled) continue; // still running in this process
        if (!store.claim(id, owner)) continue; // a live process is on it
        handles.push(start(id, store.get(id)?.links.run));
      }
      return handles;
    },

    async waitForRun(run) {
      const same = (r: RunRef | undefined) =>
        r !== undefined && r.experimentId === run.experimentId && r.n === run.n && r.r === run.r;
      const results = await Promise.allSettled(
        [...tracked.values()].filter((t) => same(t.run)).map((t) => t.handle.done),
      );
      const failures: UploadFailure[] = results.flatMap((r) =>
        r.status === 'rejected' ? (r.reason as UploadError).failures : [],
      );
      if (failures.length > 0) throw new UploadError(failures);
    },

    close() {
      if (!store.isOpen) return;
      clearInterval(beat);
      closing.abort(
        new Error('the uploader was closed; the upload stays in the store and resumes in a later process'),
      );
      for (const [id, t] of tracked)
        if (!t.settled) store.release(id, owner, 'interrupted: the uploader was closed');
      store.close();
      void dispatcher.destroy().catch(() => undefined);
    },
  };
}

function identifyOrThrow(file: string) {
  try {
    return identify(path.resolve(file));
  } catch (error) {
    throw new UploadError([], `cannot upload ${file}: ${(error as Error).message}`);
  }
}
