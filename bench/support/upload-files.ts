// Random (incompressible) files for the upload benchmark, hashed as they are written.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, stat } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_UPLOAD_PART_BYTES } from '../../src/client/config-values.ts';
import { partLayout, sha256Of } from '../../src/client/uploads/local-file.ts';
import type { BenchFile } from './curl-upload.ts';

const CHUNK = 4 * 1024 * 1024;

async function randomFile(file: string, size: number): Promise<BenchFile> {
  const hash = createHash('sha256');
  const fh = await open(file, 'w');
  try {
    for (let done = 0; done < size;) {
      const chunk = randomBytes(Math.min(CHUNK, size - done));
      hash.update(chunk);
      await fh.write(chunk);
      done += chunk.length;
    }
  } finally {
    await fh.close();
  }
  const sha256 = hash.digest('hex');
  // The part layout and checksums the client declares for this file, so curl gets the same kind of URLs.
  const partSize = partLayout(size, DEFAULT_UPLOAD_PART_BYTES);
  if (partSize === null) return { path: file, name: path.basename(file), size, sha256, parts: null };
  const { mtimeMs } = await stat(file);
  const { partSha256 } = await sha256Of({ path: file, size, mtimeMs }, partSize);
  return {
    path: file,
    name: path.basename(file),
    size,
    sha256,
    parts: { partSize, partSha256: partSha256! },
  };
}

/** `count` files of `size` bytes each in `dir` (named 0000.bin, 0001.bin, …). */
export async function randomFiles(dir: string, count: number, size: number): Promise<BenchFile[]> {
  await mkdir(dir, { recursive: true });
  const files: BenchFile[] = [];
  for (let i = 0; i < count; i++)
    files.push(await randomFile(path.join(dir, `${String(i).padStart(4, '0')}.bin`), size));
  return files;
}
