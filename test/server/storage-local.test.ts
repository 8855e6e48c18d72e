// The local backend over real HTTP: a minimal Fastify app with only the storage routes, driven by fetch.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { installErrorHandling } from '../../src/server/http/error-handler.ts';
import { createObjectStorage } from '../../src/server/storage/create-storage.ts';
import { LocalStorage } from '../../src/server/storage/local-storage.ts';
import { localStorageRoutes } from '../../src/server/storage/local-storage-routes.ts';
import { StorageError } from '../../src/server/storage/object-storage.ts';
import { storageConfig } from '../../src/server/storage/storage-config.ts';
import { errorCode, replaceParam, send, sha256, tamperParam } from '../support/presigned-http.ts';

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
    // The service's own limits: a 2 MiB body limit and 200-character path parameters must not touch storage routes.
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

  async function upload(key: string, body: Buffer, contentType = 'application/octet-stream') {
    const put = await storage.presignPut(key, { size: body.length, contentType, ...ttl });
    return send(put, body);
  }

  for (const size of [0, 1, 50 * MIB]) {
    test(`uploads and downloads ${size} bytes`, async () => {
      const body = randomBytes(size);
      const key = `assets/${size}/blob.bin`;
      const put = await upload(key, body);
      assert.equal(put.status, 200, put.body.toString());
      assert.deepEqual(await storage.head(key), { size });
      assert.equal(await storage.sha256(key), sha256(body));
      const got = await send(await storage.presignGet(key, ttl));
      assert.equal(got.status, 200);
      assert.equal(got.headers.get('content-length'), String(size));
      assert.equal(sha256(got.body), sha256(body));
    });
  }

  test('keeps many components apart, whatever their names', async () => {
    const names = [
      'a b.txt',
      'ü/é.json',
      '#hash?query%20&.bin',
      'plus+semi;colon',
      "quote'paren(1)*",
      'x'.repeat(250),
      `${'d/'.repeat(300)}deep`,
    ];
    const bodies = names.map((_, i) => randomBytes(1000 + i));
    const puts = await Promise.all(names.map((name, i) => upload(`assets/many/${name}`, bodies[i]!)));
    assert.deepEqual(
      puts.map((p) => p.status),
      names.map(() => 200),
    );
    for (const [i, name] of names.entries()) {
      const got = await send(await storage.presignGet(`assets/many/${name}`, ttl));
      assert.equal(sha256(got.body), sha256(bodies[i]!), name);
    }
  });

  test('serves ranges, HEAD and a download name', async () => {
    const body = Buffer.from('0123456789');
    await upload('assets/range/digits', body);
    const get = await storage.presignGet('assets/range/digits', { ...ttl, filename: 'résumé "final".txt' });
    const mid = await send(get, undefined, { range: 'bytes=2-4' });
    assert.equal(mid.status, 206);
    assert.equal(mid.body.toString(), '234');
    assert.equal(mid.headers.get('content-range'), 'bytes 2-4/10');
    assert.equal((await send(get, undefined, { range: 'bytes=-3' })).body.toString(), '789');
    assert.equal((await send(get, undefined, { range: 'bytes=7-' })).body.toString(), '789');
    assert.equal((await send(get, undefined, { range: 'bytes=10-' })).status, 416);
    assert.equal(
      (await send(get, undefined, { range: 'bytes=5-2' })).status,
      200,
      'a malformed range is ignored',
    );
    const full = await send(get);
    assert.equal(
      full.headers.get('content-disposition'),
      `attachment; filename="r_sum_ _final_.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22.txt`,
    );
    const head = await send({ ...get, method: 'HEAD' as never });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), '10');
    assert.equal(head.body.length, 0);
  });

  test('refuses expired URLs with 403 url_expired', async () => {
    await upload('assets/expiry/x', Buffer.from('x'));
    const put = await storage.presignPut('assets/expiry/y', {
      size: 1,
      contentType: 'text/plain',
      expiresInS: 1,
    });
    const get = await storage.presignGet('assets/expiry/x', { expiresInS: 1 });
    await sleep(Date.parse(put.expires_at) - Date.now() + 50);
    const refusedPut = await send(put, Buffer.from('y'));
    assert.equal(refusedPut.status, 403);
    assert.equal(errorCode(refusedPut), 'url_expired');
    const refusedGet = await send(get);
    assert.deepEqual([refusedGet.status, errorCode(refusedGet)], [403, 'url_expired']);
    assert.equal(await storage.head('assets/expiry/y'), undefined);
  });

  test('refuses tampered URLs with 403 signature_invalid', async () => {
    const put = await storage.presignPut('assets/tamper/x', { size: 3, contentType: 'text/plain', ...ttl });
    const cases: Array<[string, string, Buffer]> = [
      ['one character of the signature', tamperParam(put.url, 'signature'), Buffer.from('abc')],
      ['the size', replaceParam(put.url, 'size', '4'), Buffer.from('abcd')],
      [
        'the expiry',
        replaceParam(put.url, 'expires', String(Math.floor(Date.now() / 1000) + 99_999)),
        Buffer.from('abc'),
      ],
      ['the key', put.url.replace('/tamper/x', '/tamper/y'), Buffer.from('abc')],
      ['no signature', put.url.replace(/&signature=[^&]+/, ''), Buffer.from('abc')],
    ];
    for (const [what, url, body] of cases) {
      const res = await send({ ...put, url }, body);
      assert.deepEqual([res.status, errorCode(res)], [403, 'signature_invalid'], what);
    }
    // A download URL does not grant an upload, and the other way round.
    await upload('assets/tamper/x', Buffer.from('abc'));
    const get = await storage.presignGet('assets/tamper/x', ttl);
    assert.equal((await send({ ...get, method: 'PUT' }, Buffer.from('abc'))).status, 403);
    assert.equal((await send({ ...put, method: 'GET' })).status, 403);
    assert.equal((await send({ ...get, url: tamperParam(get.url, 'signature') })).status, 403);
  });

  test('refuses a body of another size with 400 and stores nothing', async () => {
    const put = await storage.presignPut('assets/size/x', { size: 10, contentType: 'text/plain', ...ttl });
    for (const body of [Buffer.alloc(11), Buffer.alloc(9)]) {
      const res = await send(put, body);
      assert.deepEqual([res.status, errorCode(res)], [400, 'size_mismatch'], `${body.length} bytes`);
    }
    // Chunked, with no Content-Length to check up front: cut off once it passes the signed size.
    const chunked = await rawPut(put.url, [Buffer.alloc(6), Buffer.alloc(6), Buffer.alloc(100)]);
    assert.deepEqual([chunked.status, JSON.parse(chunked.body).error.code], [400, 'size_mismatch']);
    const exact = await rawPut(put.url, [Buffer.alloc(4), Buffer.alloc(6)]);
    assert.equal(exact.status, 200);
    assert.deepEqual(await storage.head('assets/size/x'), { size: 10 });
    assert.deepEqual(await readdir(path.join(storage.dir, '.tmp')), [], 'no temp file left behind');
  });

  test('stores a JSON-typed body as bytes, not as parsed JSON', async () => {
    const body = Buffer.from('{not json');
    assert.equal((await upload('assets/json/x', body, 'application/json')).status, 200);
    assert.equal(await storage.sha256('assets/json/x'), sha256(body));
  });

  test('multipart: missing parts named, re-presigned parts, completed twice', async () => {
    const body = randomBytes(10 * 1024 + 7);
    const key = 'assets/multi/model.safetensors';
    const mp = await storage.startMultipart(key, {
      size: body.length,
      contentType: 'application/octet-stream',
      partSize: 4096,
      ...ttl,
    });
    assert.equal(mp.part_size, 4096);
    assert.deepEqual(
      mp.parts.map((p) => [p.part_number, p.size]),
      [
        [1, 4096],
        [2, 4096],
        [3, 2055],
      ],
    );
    const slice = (n: number) => body.subarray((n - 1) * 4096, Math.min(n * 4096, body.length));
    for (const n of [1, 3]) assert.equal((await send(mp.parts[n - 1]!, slice(n))).status, 200);
    // A part of the wrong size is refused by the part's own URL.
    assert.equal((await send(mp.parts[1]!, slice(1).subarray(0, 100))).status, 400);
    await assert.rejects(
      storage.completeMultipart(key, mp.upload_id, { size: body.length, partSize: 4096 }),
      (error: unknown) => {
        assert.ok(error instanceof StorageError);
        assert.equal(error.code, 'incomplete_upload');
        assert.deepEqual(error.details, { missing_parts: [2], wrong_size_parts: [] });
        return true;
      },
    );
    const [fresh] = await storage.presignParts(key, mp.upload_id, {
      size: body.length,
      partSize: 4096,
      partNumbers: [2],
      ...ttl,
    });
    assert.equal(fresh!.part_number, 2);
    assert.equal((await send(fresh!, slice(2))).status, 200);
    // Two completions at once and one after: all succeed, the object is whole.
    await Promise.all(
      [1, 2].map(() => storage.completeMultipart(key, mp.upload_id, { size: body.length, partSize: 4096 })),
    );
    await storage.completeMultipart(key, mp.upload_id, { size: body.length, partSize: 4096 });
    assert.equal(await storage.sha256(key), sha256(body));
    assert.equal(sha256((await send(await storage.presignGet(key, ttl))).body), sha256(body));
    // A stale part URL can no longer write anything.
    const late = await send(mp.parts[0]!, slice(1));
    assert.deepEqual([late.status, errorCode(late)], [404, 'upload_not_found']);
    await assert.rejects(
      storage.presignParts(key, mp.upload_id, {
        size: body.length,
        partSize: 4096,
        partNumbers: [1],
        ...ttl,
      }),
      { code: 'not_found' },
    );
  });

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

  test('putObject, getObject, head and sha256 of missing objects', async () => {
    const body = Buffer.from('{"inline": true}');
    await storage.putObject('assets/inline/report.json', body, 'application/json');
    const chunks: Buffer[] = [];
    for await (const chunk of await storage.getObject('assets/inline/report.json'))
      chunks.push(chunk as Buffer);
    assert.deepEqual(Buffer.concat(chunks), body);
    assert.equal(await storage.head('assets/none/x'), undefined);
    assert.equal(await storage.head('assets/inline'), undefined, 'a directory is not an object');
    await assert.rejects(storage.getObject('assets/none/x'), { code: 'not_found' });
    await assert.rejects(storage.sha256('assets/none/x'), { code: 'not_found' });
    const missing = await send(await storage.presignGet('assets/none/x', ttl));
    assert.deepEqual([missing.status, errorCode(missing)], [404, 'not_found']);
  });

  test('refuses keys that could escape the directory or break a URL', async () => {
    const bad = [
      '',
      '/assets/x',
      'assets/../x',
      'assets/./x',
      'assets//x',
      'assets/x/',
      'assets/\0x',
      'assets/\nx',
      '.tmp/x',
      `assets/${'x'.repeat(256)}`,
      `assets/${'x/'.repeat(600)}`,
      'assets/\ud800',
    ];
    for (const key of bad) {
      await assert.rejects(
        storage.presignPut(key, { size: 1, contentType: 'text/plain', ...ttl }),
        { code: 'invalid_key' },
        JSON.stringify(key),
      );
      await assert.rejects(storage.head(key), { code: 'invalid_key' }, JSON.stringify(key));
    }
    // One key cannot be a file and the directory of another.
    await storage.putObject('assets/clash/a', Buffer.from('a'), 'text/plain');
    await assert.rejects(storage.putObject('assets/clash/a/b', Buffer.from('b'), 'text/plain'), {
      code: 'invalid_key',
    });
  });

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

  test('moveObject renames an object over another; a missing source is not_found', async () => {
    const body = randomBytes(1000);
    assert.equal((await upload('uploads/mv/a.bin', body)).status, 200);
    assert.equal((await upload('assets/mv/a.bin', randomBytes(3))).status, 200);
    await storage.moveObject('uploads/mv/a.bin', 'assets/mv/a.bin');
    assert.equal(await storage.head('uploads/mv/a.bin'), undefined);
    assert.equal(sha256((await send(await storage.presignGet('assets/mv/a.bin', ttl))).body), sha256(body));
    await assert.rejects(storage.moveObject('uploads/mv/a.bin', 'assets/mv/a.bin'), { code: 'not_found' });
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
