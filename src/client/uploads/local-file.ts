import { createHash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';

/** What a file was when it was registered: any later difference means its bytes are no longer the hashed ones. */
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

/** SHA-256 (hex) of the file, streamed; refuses a file that changed before or while it was read. */
export async function sha256Of(file: FileIdentity): Promise<string> {
  await assertUnchanged(file);
  const hash = createHash('sha256');
  try {
    await pipeline(createReadStream(file.path), hash);
  } catch (error) {
    await assertUnchanged(file); // "deleted" or "changed" says more than the read error
    throw error;
  }
  await assertUnchanged(file);
  return hash.digest('hex');
}
