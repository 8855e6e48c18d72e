// Random (incompressible) files for the upload benchmark, hashed as they are written.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open } from 'node:fs/promises';
import path from 'node:path';
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
  return { path: file, name: path.basename(file), size, sha256: hash.digest('hex') };
}

/** `count` files of `size` bytes each in `dir` (named 0000.bin, 0001.bin, …). */
export async function randomFiles(dir: string, count: number, size: number): Promise<BenchFile[]> {
  await mkdir(dir, { recursive: true });
  const files: BenchFile[] = [];
  for (let i = 0; i < count; i++)
    files.push(await randomFile(path.join(dir, `${String(i).padStart(4, '0')}.bin`), size));
  return files;
}
