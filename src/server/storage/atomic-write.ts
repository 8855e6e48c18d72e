import { createHash, type Hash, randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../http/errors.ts';
import { StorageError } from './object-storage.ts';

const sizeMismatch = (message: string) => new AppError(400, 'size_mismatch', message);

/**
 * Passes `source` through, failing as soon as it exceeds `size` bytes (a larger body is cut off) or
 * ends short.
 */
async function* exactly(
  size: number,
  source: Iterable<Buffer> | AsyncIterable<Buffer>,
  hash: Hash | undefined,
): AsyncGenerator<Buffer> {
  let seen = 0;
  for await (const chunk of source) {
    seen += chunk.length;
    if (seen > size) throw sizeMismatch(`the body is longer than the signed size of ${size} bytes`);
    hash?.update(chunk);
    yield chunk;
  }
  if (seen !== size) throw sizeMismatch(`the body has ${seen} bytes; the URL was signed for ${size}`);
}

/** Which file this is: a renamed file keeps it, a rewritten one (always a new temp file) gets another. */
export async function fileIdentity(file: string): Promise<string> {
  const info = await stat(file, { bigint: true });
  return `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}`;
}

/**
 * Streams exactly `size` bytes into a temp file in `tmpDir`, fsyncs it, and renames it over `target`: readers
 * see the old file or the new one, never a torn one. A wrong size is a 400 `size_mismatch` and
 * leaves nothing.
 * `onWritten`, when given, gets the sha256 (hex) of the bytes and the new file's identity before the rename.
 */
export async function writeFileAtomically(
  tmpDir: string,
  target: string,
  source: Iterable<Buffer> | AsyncIterable<Buffer>,
  size: number,
  onWritten?: (written: { sha256: string; identity: string }) => Promise<void>,
): Promise<void> {
  const tmp = path.join(tmpDir, `${randomBytes(12).toString('hex')}.upload`);
  const fh = await open(tmp, 'wx', 0o600);
  const hash = onWritten ? createHash('sha256') : undefined;
  try {
    // `flush`: fsync before the stream closes the file, so the rename below never exposes unwritten data.
    await pipeline(
      source,
      (src: Iterable<Buffer> | AsyncIterable<Buffer>) => exactly(size, src, hash),
      fh.createWriteStream({ flush: true, highWaterMark: 1024 * 1024 }),
    );
    if (onWritten) await onWritten({ sha256: hash!.digest('hex'), identity: await fileIdentity(tmp) });
    await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    await rename(tmp, target);
    await syncDir(path.dirname(target));
  } catch (error) {
    await rm(tmp, { force: true });
    const code = (error as NodeJS.ErrnoException).code;
    // `a` stored as an object and `a/b` as another would need `a` to be both a file and a directory.
    if (code === 'ENOTDIR' || code === 'EISDIR' || code === 'EEXIST')
      throw new StorageError(
        'invalid_key',
        'the key collides with another object (one key is a prefix directory of the other)',
      );
    throw error;
  }
}

/** fsync of the directory makes the rename itself durable. */
export async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
