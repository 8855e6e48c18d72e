// The baseline of the upload benchmark: the same bytes PUT with curl to the same kind of presigned URLs.
import { spawn } from 'node:child_process';
import { open } from 'node:fs/promises';
import path from 'node:path';
import type { PresignedAsset, PresignedRequest } from '@assay/contract';

export interface BenchFile {
  path: string;
  name: string;
  size: number;
  sha256: string;
  /** The part layout and part checksums the client declares for a file larger than one part. */
  parts: { partSize: number; partSha256: string[] } | null;
}

/** One curl PUT: a whole file, or one part file of a multipart component. */
export interface CurlPut {
  file: string;
  target: PresignedRequest;
}

async function call<T>(
  api: { url: string; key: string },
  method: string,
  route: string,
  body?: unknown,
): Promise<T> {
  const res = await fetch(`${api.url}${route}`, {
    method,
    headers: {
      authorization: `Bearer ${api.key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(600_000),
  });
  const json = (await res.json()) as T;
  if (!res.ok) throw new Error(`${method} ${route} answered ${res.status}: ${JSON.stringify(json)}`);
  return json;
}

/**
 * A second asset with the same components (sizes, checksums and part layout): fresh presigned URLs for curl.
 */
export function presign(
  api: { url: string; key: string },
  name: string,
  files: readonly BenchFile[],
): Promise<PresignedAsset> {
  const components = files.map((f) => ({
    name: f.name,
    size: f.size,
    content_type: 'application/octet-stream',
    sha256: f.sha256,
    ...(f.parts ? { part_size: f.parts.partSize, part_sha256: f.parts.partSha256 } : {}),
  }));
  return call(api, 'POST', '/assets', { presign: true, kind: 'output', name, components });
}

/** Finalize: the service checks every component's size and sha256 against what the store holds. */
export function finalize(api: { url: string; key: string }, assetId: string): Promise<{ state: string }> {
  return call(api, 'PUT', `/assets/${encodeURIComponent(assetId)}/finalize`);
}

/**
 * Copies `size` bytes at `offset` of `source` into `target` (part files
 * for curl, written before the clock starts).
 */
async function copyRange(source: string, target: string, offset: number, size: number): Promise<void> {
  const from = await open(source, 'r');
  const to = await open(target, 'w');
  try {
    const buffer = Buffer.alloc(8 * 1024 * 1024);
    for (let done = 0; done < size;) {
      const { bytesRead } = await from.read(buffer, 0, Math.min(buffer.length, size - done), offset + done);
      await to.write(buffer, 0, bytesRead);
      done += bytesRead;
    }
  } finally {
    await from.close();
    await to.close();
  }
}

/**
 * The PUTs of an asset's uploads: whole files as they are, multipart
 * components cut into part files in `partDir`.
 */
export async function curlPuts(
  asset: PresignedAsset,
  files: readonly BenchFile[],
  partDir: string,
): Promise<CurlPut[]> {
  const puts: CurlPut[] = [];
  for (const f of files) {
    const target = asset.uploads[f.name]!;
    if (!('multipart' in target)) {
      puts.push({ file: f.path, target });
      continue;
    }
    for (const part of target.parts) {
      const file = path.join(partDir, `${f.name}.part${part.part_number}`);
      await copyRange(f.path, file, (part.part_number - 1) * target.part_size, part.size);
      puts.push({ file, target: part });
    }
  }
  return puts;
}

function curl(put: CurlPut): Promise<void> {
  const headers = Object.entries(put.target.headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
  const child = spawn(
    'curl',
    ['-sS', '-f', '-X', put.target.method, ...headers, '--upload-file', put.file, put.target.url],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`curl PUT of ${put.file} exited ${code}: ${stderr.trim()}`)),
    );
  });
}

/**
 * Runs every PUT with `parallel` curl processes at a time; answers the seconds from the first start to the
 * last exit.
 */
export async function runCurl(puts: readonly CurlPut[], parallel: number): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      for (let i = next++; i < puts.length; i = next++) await curl(puts[i]!);
    }),
  );
  return (performance.now() - started) / 1000;
}

/**
 * The whole curl upload of `files`: presign a new asset, cut part files (untimed), PUT everything with
 * `parallel` curl processes (timed), then finalize (timed apart: the service's size and sha256 checks).
 */
export async function curlUpload(
  api: { url: string; key: string },
  files: readonly BenchFile[],
  partDir: string,
  parallel: number,
) {
  const asset = await presign(api, 'curl-upload', files);
  const puts = await curlPuts(asset, files, partDir);
  const putS = await runCurl(puts, parallel);
  const started = performance.now();
  const final = await finalize(api, asset.id);
  if (final.state !== 'ready') throw new Error(`the curl asset ended ${final.state}`);
  return { puts: puts.length, putS, finalizeS: (performance.now() - started) / 1000 };
}
