// Measures memory while 1 GiB streams through the local backend: PUT over HTTP, sha256, GET over HTTP.
// Prints figures (not a test). Run: node bench/local-storage-rss.ts [bytes]
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import Fastify from 'fastify';
import { installErrorHandling } from '../src/server/http/error-handler.ts';
import { LocalStorage } from '../src/server/storage/local-storage.ts';
import { localStorageRoutes } from '../src/server/storage/local-storage-routes.ts';

const MIB = 1024 * 1024;
const size = Number(process.argv[2] ?? 1024 * MIB);
const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;

/** Highest RSS seen, sampled every 50 ms, resettable per phase. */
const sampler = { peak: 0 };
const timer = setInterval(() => (sampler.peak = Math.max(sampler.peak, process.memoryUsage.rss())), 50);

async function vmHwm(): Promise<string> {
  const status = await readFile('/proc/self/status', 'utf8');
  return /VmHWM:\s+(.*)/.exec(status)?.[1]?.trim() ?? 'n/a';
}

/**
 * `size` bytes made on the fly, 1 MiB at a time (a random block stamped with its index), hashed as they go.
 */
function generated(): { chunks: AsyncGenerator<Buffer>; digest: () => string } {
  const block = randomBytes(MIB);
  const hash = createHash('sha256');
  async function* chunks() {
    for (let sent = 0; sent < size; sent += MIB) {
      const chunk = Buffer.from(block.subarray(0, Math.min(MIB, size - sent)));
      chunk.writeUInt32BE((sent / MIB) >>> 0, 0);
      hash.update(chunk);
      yield chunk;
    }
  }
  return { chunks: chunks(), digest: () => hash.digest('hex') };
}

/**
 * The client side uses node:http, not fetch: undici's fetch keeps every chunk of a streamed request body
 * until the request ends (nodejs/undici#4058), which would measure the client, not the storage.
 */
function httpRequest(
  method: 'PUT' | 'GET',
  url: string,
  headers: Record<string, string>,
  body?: AsyncIterable<Buffer>,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, resolve);
    req.on('error', reject);
    if (body) pipeline(body, req).catch(reject);
    else req.end();
  });
}

async function phase<T>(name: string, run: () => Promise<T>): Promise<T> {
  sampler.peak = process.memoryUsage.rss();
  const started = performance.now();
  const result = await run();
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `${name.padEnd(8)} peak RSS ${mib(sampler.peak).padStart(10)}   ${seconds.toFixed(1)} s   ${mib(size / seconds)}/s`,
  );
  return result;
}

const dir = await mkdtemp(path.join(tmpdir(), 'assay-rss-'));
let base = '';
const storage = await LocalStorage.open({ dir, secret: randomBytes(32), publicUrl: () => base });
const app = Fastify({ logger: false, bodyLimit: 2 * MIB });
installErrorHandling(app);
await app.register(localStorageRoutes(storage));
await app.listen({ host: '127.0.0.1', port: 0 });
base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

try {
  await new Promise((resolve) => setTimeout(resolve, 200));
  console.log(`streaming ${mib(size)} through the local backend (server and client in this process)`);
  console.log(`baseline RSS ${mib(process.memoryUsage.rss())}, VmHWM ${await vmHwm()}`);
  const key = 'assets/bench/big.bin';
  const body = generated();
  await phase('PUT', async () => {
    const put = await storage.presignPut(key, {
      size,
      contentType: 'application/octet-stream',
      expiresInS: 3600,
    });
    const res = await httpRequest('PUT', put.url, put.headers, body.chunks);
    res.resume();
    if (res.statusCode !== 200) throw new Error(`PUT answered ${res.statusCode}`);
  });
  const sent = body.digest();
  const stored = await phase('sha256', () => storage.sha256(key));
  const got = await phase('GET', async () => {
    const res = await httpRequest('GET', (await storage.presignGet(key, { expiresInS: 3600 })).url, {});
    const hash = createHash('sha256');
    let bytes = 0;
    for await (const chunk of res as AsyncIterable<Buffer>) {
      hash.update(chunk);
      bytes += chunk.length;
    }
    if (bytes !== size) throw new Error(`GET returned ${bytes} bytes`);
    return hash.digest('hex');
  });
  if (stored !== sent || got !== sent) throw new Error('checksums differ');
  console.log(
    `checksums match; after: RSS ${mib(process.memoryUsage.rss())}, VmHWM (process peak) ${await vmHwm()}`,
  );
} finally {
  clearInterval(timer);
  await app.close();
  await rm(dir, { recursive: true, force: true });
}
