import { createHash, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '../../src/client/index.ts';

export const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Writes `size` random bytes to `dir/name` and answers the path and the digest. */
export async function randomFile(
  dir: string,
  name: string,
  size: number,
): Promise<{ path: string; sha256: string }> {
  const bytes = randomBytes(size);
  const file = path.join(dir, name);
  await writeFile(file, bytes);
  return { path: file, sha256: sha256(bytes) };
}

/** Downloads every component of a ready asset through its presigned URLs; answers each one's SHA-256. */
export async function downloadedDigests(client: Client, assetId: string): Promise<Record<string, string>> {
  const download = await client.assets.download(assetId);
  const out: Record<string, string> = {};
  for (const [name, c] of Object.entries(download.components)) {
    const res = await fetch(c.url, { headers: c.headers });
    if (!res.ok) throw new Error(`GET ${name}: ${res.status}`);
    out[name] = sha256(Buffer.from(await res.arrayBuffer()));
  }
  return out;
}
