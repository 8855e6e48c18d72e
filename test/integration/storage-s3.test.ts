// The S3 backend against a real SeaweedFS: presigned URLs are used with plain fetch, as a client would.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { createObjectStorage } from '../../src/server/storage/create-storage.ts';
import { StorageError } from '../../src/server/storage/object-storage.ts';
import { S3Storage } from '../../src/server/storage/s3-storage.ts';
import { storageConfig } from '../../src/server/storage/storage-config.ts';
import { errorCode, send, sha256, tamperParam } from '../support/presigned-http.ts';
import { s3StorageEnv, startSeaweedFs, type SeaweedFs } from '../support/seaweedfs.ts';

const MIB = 1024 * 1024;
const ttl = { expiresInS: 600 };

describe('S3 storage against SeaweedFS', () => {
  let store: SeaweedFs;
  let storage: S3Storage;
  // Moves objects over 5 MiB by a multipart copy, as the real one does over 5 GiB.
  let smallCopies: S3Storage;

  before(async () => {
    store = await startSeaweedFs();
    const config = storageConfig(s3StorageEnv(store), {
      dataDir: '/nonexistent',
      publicUrl: 'http://127.0.0.1:1',
    });
    storage = (await createObjectStorage(config)) as S3Storage;
    if (config.kind !== 's3') throw new Error('expected the s3 backend');
    smallCopies = new S3Storage({ ...config, maxSingleCopyBytes: 5 * MIB });
  });
  after(async () => {
    await smallCopies?.close();
    await storage?.close();
    await store?.stop();
  });

  async function upload(key: string, body: Buffer, contentType = 'application/octet-stream') {
    return send(await storage.presignPut(key, { size: body.length, contentType, ...ttl }), body);
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
    ];
    const bodies = names.map((_, i) => randomBytes(1000 + i));
    const puts = await Promise.all(names.map((name, i) => upload(`assets/many/${name}`, bodies[i]!)));
    assert.deepEqual(
      puts.map((p) => p.status),
      names.map(() => 200),
      puts.map((p) => p.body.toString()).join('\n'),
    );
    for (const [i, name] of names.entries()) {
      assert.equal(await storage.sha256(`assets/many/${name}`), sha256(bodies[i]!), name);
      const got = await send(await storage.presignGet(`assets/many/${name}`, ttl));
      assert.equal(sha256(got.body), sha256(bodies[i]!), name);
    }
  });

  test('a download URL names the file', async () => {
    await upload('assets/named/x', Buffer.from('report'), 'text/plain');
    const got = await send(
      await storage.presignGet('assets/named/x', { ...ttl, filename: 'résumé "final".txt' }),
    );
    assert.equal(got.status, 200);
    assert.equal(
      got.headers.get('content-disposition'),
      `attachment; filename="r_sum_ _final_.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22.txt`,
    );
    assert.equal(got.headers.get('content-type'), 'text/plain');
  });

  test('refuses expired URLs with 403', async () => {
    await upload('assets/expiry/x', Buffer.from('x'));
    const put = await storage.presignPut('assets/expiry/y', {
      size: 1,
      contentType: 'text/plain',
      expiresInS: 1,
    });
    const get = await storage.presignGet('assets/expiry/x', { expiresInS: 1 });
    await sleep(Date.parse(put.expires_at) - Date.now() + 1100); // S3 dates have whole seconds
    const refusedPut = await send(put, Buffer.from('y'));
    assert.equal(refusedPut.status, 403, refusedPut.body.toString());
    assert.equal((await send(get)).status, 403);
    assert.equal(await storage.head('assets/expiry/y'), undefined);
  });

  test('refuses tampered URLs and bodies of another size or type with 403', async () => {
    const put = await storage.presignPut('assets/tamper/x', { size: 3, contentType: 'text/plain', ...ttl });
    const tampered = await send({ ...put, url: tamperParam(put.url, 'X-Amz-Signature') }, Buffer.from('abc'));
    assert.deepEqual([tampered.status, errorCode(tampered)], [403, 'SignatureDoesNotMatch']);
    // Content-Length and Content-Type are signed: the store refuses any other size or type.
    for (const body of [Buffer.from('abcd'), Buffer.from('ab')]) {
      const res = await send(put, body);
      assert.equal(res.status, 403, `${body.length} bytes: ${res.body.toString()}`);
    }
    assert.equal((await send(put, Buffer.from('abc'), { 'content-type': 'text/html' })).status, 403);
    assert.equal(await storage.head('assets/tamper/x'), undefined);
    assert.equal((await send(put, Buffer.from('abc'))).status, 200);
    const get = await storage.presignGet('assets/tamper/x', ttl);
    assert.equal((await send({ ...get, url: tamperParam(get.url, 'X-Amz-Signature') })).status, 403);
    assert.equal((await send({ ...get, url: get.url.replace('/tamper/x', '/tamper/y') })).status, 403);
  });

  test('multipart: missing parts named, re-presigned parts, completed twice', async () => {
    const partSize = 5 * MIB;
    const body = randomBytes(2 * partSize + 12_345);
    const key = 'assets/multi/model.safetensors';
    const mp = await storage.startMultipart(key, {
      size: body.length,
      contentType: 'application/octet-stream',
      partSize,
      ...ttl,
    });
    assert.deepEqual(
      mp.parts.map((p) => [p.part_number, p.size]),
      [
        [1, partSize],
        [2, partSize],
        [3, 12_345],
      ],
    );
    const slice = (n: number) => body.subarray((n - 1) * partSize, Math.min(n * partSize, body.length));
    for (const n of [1, 3]) assert.equal((await send(mp.parts[n - 1]!, slice(n))).status, 200);
    assert.equal(
      (await send(mp.parts[1]!, slice(2).subarray(1))).status,
      403,
      'a part of the wrong size is refused',
    );
    await assert.rejects(
      storage.completeMultipart(key, mp.upload_id, { size: body.length, partSize }),
      (error: unknown) => {
        assert.ok(error instanceof StorageError);
        assert.equal(error.code, 'incomplete_upload');
        assert.deepEqual(error.details, { missing_parts: [2], wrong_size_parts: [] });
        return true;
      },
    );
    const [fresh] = await storage.presignParts(key, mp.upload_id, {
      size: body.length,
      partSize,
      partNumbers: [2],
      ...ttl,
    });
    assert.equal((await send(fresh!, slice(2))).status, 200);
    await storage.completeMultipart(key, mp.upload_id, { size: body.length, partSize });
    await storage.completeMultipart(key, mp.upload_id, { size: body.length, partSize });
    assert.deepEqual(await storage.head(key), { size: body.length });
    assert.equal(await storage.sha256(key), sha256(body));
    assert.equal(sha256((await send(await storage.presignGet(key, ttl))).body), sha256(body));
  });

  test('multipart refuses parts under 5 MiB (S3 would at completion)', async () => {
    await assert.rejects(
      storage.startMultipart('assets/multi/small', {
        size: 10 * MIB,
        contentType: 'x/y',
        partSize: MIB,
        ...ttl,
      }),
      { code: 'invalid_argument' },
    );
  });

  for (const size of [0, 3 * MIB, 12 * MIB + 7])
    test(`moveObject moves ${size} bytes and leaves nothing at the source`, async () => {
      const body = randomBytes(size);
      const from = `uploads/move-${size}/x.bin`;
      const to = `assets/move-${size}/x.bin`;
      await upload(to, randomBytes(5)); // overwritten
      assert.equal((await upload(from, body)).status, 200);
      await smallCopies.moveObject(from, to);
      assert.equal(await storage.head(from), undefined);
      assert.deepEqual(await storage.head(to), { size });
      assert.equal(sha256((await send(await storage.presignGet(to, ttl))).body), sha256(body));
      await assert.rejects(smallCopies.moveObject(from, to), { code: 'not_found' });
    });

  test('putObject, getObject, head and sha256 of missing objects', async () => {
    const body = Buffer.from('{"inline": true}');
    await storage.putObject('assets/inline/report.json', body, 'application/json');
    const chunks: Buffer[] = [];
    for await (const chunk of await storage.getObject('assets/inline/report.json'))
      chunks.push(chunk as Buffer);
    assert.deepEqual(Buffer.concat(chunks), body);
    assert.equal(await storage.head('assets/none/x'), undefined);
    await assert.rejects(storage.getObject('assets/none/x'), { code: 'not_found' });
    await assert.rejects(storage.sha256('assets/none/x'), { code: 'not_found' });
    await assert.rejects(storage.presignPut('assets/../x', { size: 1, contentType: 'x/y', ...ttl }), {
      code: 'invalid_key',
    });
  });
});
