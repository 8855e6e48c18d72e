// SIGTERM on a real `assay server`: requests in flight finish (up to ASSAY_SHUTDOWN_TIMEOUT_S), and one hung
// past that deadline does not keep the process alive. The slow request is a presigned upload whose body
// trickles in.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest, type ClientRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { startAssayServer, type AssayServer } from '../support/assay-server.ts';
import { createTestDatabase } from '../support/postgres.ts';

const DEADLINE_S = 4;
const SIZE = 64 * 1024;

describe('graceful shutdown of assay server', () => {
  let dataDir: string;
  const databases: Array<Awaited<ReturnType<typeof createTestDatabase>>> = [];
  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'assay-shutdown-'));
  });
  after(async () => {
    for (const database of databases) await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  let started = 0;
  /** A server on a fresh database, so that it prints a bootstrap admin key. */
  async function start(): Promise<AssayServer> {
    const database = await createTestDatabase();
    databases.push(database);
    return startAssayServer({
      DATABASE_URL: database.url,
      ASSAY_DATA_DIR: path.join(dataDir, String(++started)),
      ASSAY_ORCHESTRATOR: 'off',
      ASSAY_SHUTDOWN_TIMEOUT_S: String(DEADLINE_S),
    });
  }

  /** Starts a presigned upload and sends half its body; the server holds the request open for the rest. */
  async function halfUpload(server: AssayServer, key: string) {
    const created = await fetch(`${server.url}/assets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        presign: true,
        kind: 'output',
        name: 'slow',
        components: [{ name: 'f', size: SIZE }],
      }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    const target = ((await created.json()) as any).uploads.f;
    let req!: ClientRequest;
    const answered = new Promise<number | string>((resolve) => {
      req = httpRequest(target.url, {
        method: 'PUT',
        headers: { ...target.headers, 'content-length': String(SIZE) },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
    req.write(Buffer.alloc(SIZE / 2));
    await sleep(300); // the server is inside the handler, streaming the body to disk
    return { answered, rest: () => req.end(Buffer.alloc(SIZE / 2)) };
  }

  it('finishes a request in flight, refuses new connections, and exits 0', async () => {
    const server = await start();
    try {
      const upload = await halfUpload(server, server.bootstrapKey!);
      const signalled = Date.now();
      process.kill(server.process.pid, 'SIGTERM');
      await sleep(500);
      assert.ok(server.process.isRunning(), 'still running while the upload is in flight');
      await assert.rejects(fetch(`${server.url}/healthz`), 'no new connections while draining');
      upload.rest();
      assert.equal(await upload.answered, 200, 'the upload in flight completed');
      assert.equal(await server.process.exited, 'exited with code 0');
      assert.ok(Date.now() - signalled < DEADLINE_S * 1000, 'exited before the deadline');
    } finally {
      await server.stop();
    }
  });

  it('exits after the deadline when a request hangs', async () => {
    const server = await start();
    try {
      const upload = await halfUpload(server, server.bootstrapKey!);
      const signalled = Date.now();
      process.kill(server.process.pid, 'SIGTERM');
      const exited = await Promise.race([server.process.exited, sleep(DEADLINE_S * 1000 + 10_000, 'hung')]);
      assert.equal(exited, 'exited with code 0');
      const took = Date.now() - signalled;
      assert.ok(took >= DEADLINE_S * 1000 - 100, `waited for the request until the deadline (${took} ms)`);
      assert.notEqual(await upload.answered, 200, 'the hung upload was cut off');
    } finally {
      await server.stop();
    }
  });
});
