// The local backend over real HTTP: a minimal Fastify app with only the storage routes, driven by fetch.
// The shared cases (test/support/storage-suite.ts) run here and on S3; the rest are this backend's alone.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { installErrorHandling } from '../../src/server/http/error-handler.ts';
import { createObjectStorage } from '../../src/server/storage/create-storage.ts';
import { LocalStorage } from '../../src/server/storage/local-storage.ts';
import { localStorageRoutes } from '../../src/server/storage/local-storage-routes.ts';
import { storageConfig } from '../../src/server/storage/storage-config.ts';
import { errorCode, replaceParam, send } from '../support/presigned-http.ts';
import { storageSuite } from '../support/storage-suite.ts';

const MIB = 1024 * 1024;
const ttl = { expiresInS: 600 };

describe('local storage over HTTP', () => {
  let dataDir: string;
  let app: FastifyInstance;
  let storage: LocalStorage;
  let base = '';

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'assay-storage-'));
    const config = storageConfig({}, { dataDir, publicUrl: 'http://placeholder.invalid' });
    storage = (await createObjectStorage(config, { publicUrl: () => base })) as LocalStorage;
    // The service's own limits (2 MiB bodies, 200-character path parameters) must not touch storage routes.
    app = Fastify({ logger: false, bodyLimit: 2 * MIB, routerOptions: { maxParamLength: 200 } });
    installErrorHandling(app);
    await app.register(localStorageRoutes(storage));
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await app.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  storageSuite(() => ({ storage, mover: storage }), {
    // Any part size from one byte: parts are files joined at completion.
    partSize: 4096,
    minPartSize: 1,
    signatureParam: 'signature',
    expiresParam: 'expires',
    refusals: {
      signature: [403, 'signature_invalid'],
      unsigned: [403, 'signature_invalid'],
      expired: [403, 'url_expired'],
      size: [400, 'size_mismatch'],
      missing: [404, 'not_found'],
      finishedUpload: [404, 'upload_not_found'],
    },
  });

  async function upload(key: string, body: Buffer) {
    const put = await storage.presignPut(key, {
      size: body.length,
      contentType: 'application/octet-stream',
      ...ttl,
    });
    return send(put, body);
  }

  // S3 signs the method too, so its GET URL answers no HEAD, and it refuses a malformed range with 416.
  test('answers HEAD on a download URL and ignores a malformed range', async () => {
    await upload('assets/head/digits', Buffer.from('0123456789'));
    const get = await storage.presignGet('assets/head/digits', ttl);
    const malformed = await send(get, undefined, { range: 'bytes=5-2' });
    assert.equal(malformed.status, 200, 'a malformed range is ignored');
    assert.equal(malformed.body.toString(), '0123456789');
    const head = await send({ ...get, method: 'HEAD' as never });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), '10');
    assert.equal(head.body.length, 0);
  });

  // S3 URLs carry no size: Content-Length is a signed header there, checked by the shared size case.
  test('refuses a URL whose signed size was changed', async () => {
    const put = await storage.presignPut('assets/tamper-size/x', {
      size: 3,
      contentType: 'text/plain',
      ...ttl,
    });
    const res = await send({ ...put, url: replaceParam(put.url, 'size', '4') }, Buffer.from('abcd'));
    assert.deepEqual([res.status, errorCode(res)], [403, 'signature_invalid']);
    assert.equal(await storage.head('assets/tamper-size/x'), undefined);
  });

  // An S3 URL needs its signed Content-Length, so a chunked body is no client's path there.
  test('cuts a chunked body off past the signed size and leaves no temp file', async () => {
    const put = await storage.presignPut('assets/size/chunked', {
      size: 10,
      contentType: 'text/plain',
      ...ttl,
    });
    const chunked = await rawPut(put.url, [Buffer.alloc(6), Buffer.alloc(6), Buffer.alloc(100)]);
    assert.deepEqual([chunked.status, JSON.parse(chunked.body).error.code], [400, 'size_mismatch']);
    const exact = await rawPut(put.url, [Buffer.alloc(4), Buffer.alloc(6)]);
    assert.equal(exact.status, 200);
    assert.deepEqual(await storage.head('assets/size/chunked'), { size: 10 });
    assert.deepEqual(await readdir(path.join(storage.dir, '.tmp')), [], 'no temp file left behind');
  });

  // S3 presigns parts without asking the store; the part URL itself is still refused after completion.
  test('multipart: no fresh part URLs once the upload is complete', async () => {
    const key = 'assets/multi/done';
    const layout = { size: 10, partSize: 4 };
    const mp = await storage.startMultipart(key, { ...layout, contentType: 'x/y', ...ttl });
    for (const part of mp.parts) assert.equal((await send(part, Buffer.alloc(part.size))).status, 200);
    await storage.completeMultipart(key, mp.upload_id, layout);
    await assert.rejects(storage.presignParts(key, mp.upload_id, { ...layout, partNumbers: [1], ...ttl }), {
      code: 'not_found',
    });
  });

  // The rule is shared (storage-limits.ts); on S3 the grown upload signs 10,000 part URLs: ~50 s when busy.
  test('multipart grows the part size to stay within 10,000 parts', async () => {
    const mp = await storage.startMultipart('assets/multi/huge', {
      size: 20_000 * 4096,
      contentType: 'application/octet-stream',
      partSize: 4096,
      ...ttl,
    });
    assert.equal(mp.part_size, MIB);
    assert.equal(mp.parts.length, Math.ceil((20_000 * 4096) / MIB));
  });

  // S3 keys are flat names: there `a` and `a/b` are two objects.
  test('one key cannot be a file and the directory of another', async () => {
    await storage.putObject('assets/clash/a', Buffer.from('a'), 'text/plain');
    await assert.rejects(storage.putObject('assets/clash/a/b', Buffer.from('b'), 'text/plain'), {
      code: 'invalid_key',
    });
  });

  // S3 URLs are signed with the bucket's credentials; only this backend keeps a secret of its own.
  test('a generated secret is kept (mode 600), so URLs survive a restart', async () => {
    const config = storageConfig({}, { dataDir, publicUrl: base });
    const again = await createObjectStorage(config);
    const put = await again.presignPut('assets/restart/x', { size: 2, contentType: 'text/plain', ...ttl });
    assert.equal(
      (await send(put, Buffer.from('ok'))).status,
      200,
      'the running server accepts a URL signed by the restarted one',
    );
    assert.equal((await stat(config.kind === 'local' ? config.secretFile : '')).mode & 0o777, 0o600);
    const other = await createObjectStorage(
      storageConfig({ ASSAY_STORAGE_SECRET: 'x'.repeat(32) }, { dataDir, publicUrl: base }),
    );
    const foreign = await other.presignPut('assets/restart/y', {
      size: 2,
      contentType: 'text/plain',
      ...ttl,
    });
    assert.equal((await send(foreign, Buffer.from('no'))).status, 403);
  });
});

/** A PUT with a chunked body (no Content-Length), written piece by piece. */
function rawPut(url: string, pieces: Buffer[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'PUT', headers: { 'transfer-encoding': 'chunked' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    for (const piece of pieces) req.write(piece);
    req.end();
  });
}
