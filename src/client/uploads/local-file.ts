import { statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { hashInThread } from './hash-thread.ts';

/**
 * What a file was when it was registered: any later difference means its bytes are no longer the hashed ones.
 */
export interface FileIdentity {
  path: string;
  size: number;
  mtimeMs: number;
}

/** Size and mtime now (synchronous: registration happens before uploadAsync returns). */
export function identify(file: string): FileIdentity {
  const info = statSync(file);
  if (!info.isFile()) throw new Error(`${file} is not a regular file`);
  return { path: file, size: info.size, mtimeMs: info.mtimeMs };
}

/** Throws a clear error when the file is gone or differs from its registered size and mtime. */
export async function assertUnchanged(file: FileIdentity): Promise<void> {
  let info;
  try {
    info = await stat(file.path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new Error(`${file.path} was deleted after it was registered for upload`, { cause: error });
    throw error;
  }
  if (info.size !== file.size || info.mtimeMs !== file.mtimeMs) {
    throw new Error(
      `${file.path} changed after it was registered for upload (size ${file.size} → ${info.size}, mtime ${new Date(file.mtimeMs).toISOString()} → ${new Date(info.mtimeMs).toISOString()}); upload it again as a new asset`,
    );
  }
}

/** S3's most parts per object; a larger file gets larger parts. */
const MAX_PARTS = 10_000;
const MIB = 1024 * 1024;

/**
 * The part size this client cuts a file in (it declares the layout with the part checksums): `partBytes`,
 * grown in whole MiB when the file would otherwise need more than 10,000 parts. Null for a file of one part.
 */
export function partLayout(size: number, partBytes: number): number | null {
  if (size <= partBytes) return null;
  return Math.max(partBytes, Math.ceil(size / MAX_PARTS / MIB) * MIB);
}

/**
 * SHA-256 (hex) of the file and, when `partSize` is given, of each part of that size, in one streamed read;
 * refuses a file that changed before or while it was read. `onPart` hears each part's digest as soon as it is
 * read (the file may still change afterwards: the PUT checks it again).
 */
export async function sha256Of(
  file: FileIdentity,
  partSize: number | null = null,
  onPart?: (partNumber: number, sha256: string) => void,
): Promise<{ sha256: string; partSha256: string[] | null }> {
  await assertUnchanged(file);
  let digests;
  try {
    digests = await hashInThread(file.path, partSize, onPart);
  } catch (error) {
    await assertUnchanged(file); // "deleted" or "changed" says more than the read error
    throw error;
  }
  await assertUnchanged(file);
  return { sha256: digests.sha256, partSha256: partSize === null ? null : digests.partSha256 };
}
