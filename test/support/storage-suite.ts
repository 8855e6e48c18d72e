// The behaviour every object store owes the service, registered as tests for one store at a time: the local
// backend and S3 run the same cases, so a difference between them shows as a failure, not as a missing test.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { StorageError, type ObjectStorage } from '../../src/server/storage/object-storage.ts';
import {
  errorCode,
  type HttpAnswer,
  removeParam,
  replaceParam,
  send,
  sha256,
  tamperParam,
} from './presigned-http.ts';

const MIB = 1024 * 1024;
const ttl = { expiresInS: 600 };

/** How a store refuses a request: the status and the error code (JSON `error.code`, or S3's XML `<Code>`). */
export type Refusal = [status: number, code: string];

/** What differs between stores and is not a difference in behaviour: limits, parameter names, error codes. */
export interface StoreTraits {
  /** The part size the multipart cases ask for. */
  partSize: number;
  /** The smallest part size the store takes. */
  minPartSize: number;
  /** Query parameters of a presigned URL: the signature, and the one that sets when it expires. */
  signatureParam: string;
  expiresParam: string;
  refusals: {
    signature: Refusal;
    unsigned: Refusal;
    expired: Refusal;
    /** A body (or part) of another size than the URL was signed for. */
    size: Refusal;
    missing: Refusal;
    /** A part sent after its upload completed. */
    finishedUpload: Refusal;
  };
}

export interface StoreUnderTest {
  storage: ObjectStorage;
  /** The instance the moveObject cases use (S3 passes one that copies in parts from 5 MiB). */
  mover: ObjectStorage;
}

/** Registers the shared storage tests in the current `describe`; `store` is read once `before` has run. */
export function storageSuite(store: () => StoreUnderTest, traits: StoreTraits): void {
  const { refusals } = traits;
  const storage = () => store().storage;
  const refusal = (res: HttpAnswer) => [res.status, errorCode(res)];

  async function upload(key: string, body: Buffer, contentType = 'application/octet-stream') {
    return send(await storage().presignPut(key, { size: body.length, contentType, ...ttl }), body);
  }

  for (const size of [0, 1, 50 * MIB]) {
    test(`uploads and downloads ${size} bytes`, async () => {
      const body = randomBytes(size);
      const key = `assets/${size}/blob.bin`;
      const put = await upload(key, body);
      assert.equal(put.status, 200, put.body.toString());
      assert.deepEqual(await storage().head(key), { size });
      assert.equal(await storage().sha256(key), sha256(body));
      const got = await send(await storage().presignGet(key, ttl));
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
      puts.map((p) => p.body.toString()).join('\n'),
    );
    for (const [i, name] of names.entries()) {
      assert.equal(await storage().sha256(`assets/many/${name}`), sha256(bodies[i]!), name);
      const got = await send(await storage().presignGet(`assets/many/${name}`, ttl));
      assert.equal(sha256(got.body), sha256(bodies[i]!), name);
    }
  });

  test('serves ranges and a download name', async () => {
    await upload('assets/range/digits', Buffer.from('0123456789'), 'text/plain');
    const get = await storage().presignGet('assets/range/digits', { ...ttl, filename: 'résumé "final".txt' });
    const mid = await send(get, undefined, { range: 'bytes=2-4' });
    assert.equal(mid.status, 206);
    assert.equal(mid.body.toString(), '234');
    assert.equal(mid.headers.get('content-range'), 'bytes 2-4/10');
    assert.equal((await send(get, undefined, { range: 'bytes=-3' })).body.toString(), '789');
    assert.equal((await send(get, undefined, { range: 'bytes=7-' })).body.toString(), '789');
    assert.equal((await send(get, undefined, { range: 'bytes=10-' })).status, 416);
    const full = await send(get);
    assert.equal(full.status, 200);
    assert.equal(full.body.toString(), '0123456789');
    assert.equal(
      full.headers.get('content-disposition'),
      `attachment; filename="r_sum_ _final_.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22.txt`,
    );
  });

  test('refuses expired URLs with 403', async () => {
    await upload('assets/expiry/x', Buffer.from('x'));
    const put = await storage().presignPut('assets/expiry/y', {
      size: 1,
      contentType: 'text/plain',
      expiresInS: 1,
    });
    const get = await storage().presignGet('assets/expiry/x', { expiresInS: 1 });
    await sleep(Date.parse(put.expires_at) - Date.now() + 1100); // S3 dates have whole seconds
    const refusedPut = await send(put, Buffer.from('y'));
    assert.deepEqual(refusal(refusedPut), refusals.expired, refusedPut.body.toString());
    assert.deepEqual(refusal(await send(get)), refusals.expired);
    assert.equal(await storage().head('assets/expiry/y'), undefined);
  });

  test('refuses tampered URLs with 403', async () => {
    const put = await storage().presignPut('assets/tamper/x', { size: 3, contentType: 'text/plain', ...ttl });
    const { signatureParam: sig, expiresParam: expires } = traits;
    const later = String(Number(new URL(put.url).searchParams.get(expires)) + 99_999);
    const cases: Array<[string, string, Refusal]> = [
      ['one character of the signature', tamperParam(put.url, sig), refusals.signature],
      ['the expiry', replaceParam(put.url, expires, later), refusals.signature],
      ['the key', put.url.replace('/tamper/x', '/tamper/y'), refusals.signature],
      ['no signature', removeParam(put.url, sig), refusals.unsigned],
    ];
    for (const [what, url, expected] of cases) {
      const res = await send({ ...put, url }, Buffer.from('abc'));
      assert.deepEqual(refusal(res), expected, `${what}: ${res.body.toString()}`);
    }
    assert.equal(await storage().head('assets/tamper/x'), undefined);
    assert.equal(await storage().head('assets/tamper/y'), undefined);
    assert.equal((await send(put, Buffer.from('abc'))).status, 200);
    // A download URL does not grant an upload, and the other way round.
    const get = await storage().presignGet('assets/tamper/x', ttl);
    assert.equal((await send({ ...get, method: 'PUT' }, Buffer.from('abc'))).status, 403);
    assert.equal((await send({ ...put, method: 'GET' })).status, 403);
    assert.equal((await send({ ...get, url: tamperParam(get.url, sig) })).status, 403);
    assert.equal((await send({ ...get, url: get.url.replace('/tamper/x', '/tamper/y') })).status, 403);
  });

  test('refuses a body of another size and stores nothing', async () => {
    const put = await storage().presignPut('assets/size/x', { size: 10, contentType: 'text/plain', ...ttl });
    for (const body of [Buffer.alloc(11), Buffer.alloc(9)]) {
      const res = await send(put, body);
      assert.deepEqual(refusal(res), refusals.size, `${body.length} bytes: ${res.body.toString()}`);
    }
    assert.equal(await storage().head('assets/size/x'), undefined);
    assert.equal((await send(put, Buffer.alloc(10))).status, 200);
    assert.deepEqual(await storage().head('assets/size/x'), { size: 10 });
  });

  test('stores a JSON-typed body as bytes, not as parsed JSON', async () => {
    const body = Buffer.from('{not json');
    assert.equal((await upload('assets/json/x', body, 'application/json')).status, 200);
    assert.equal(await storage().sha256('assets/json/x'), sha256(body));
  });

  test('multipart: missing parts named, re-presigned parts, completed twice', async () => {
    const { partSize } = traits;
    const body = randomBytes(2 * partSize + 2055);
    const key = 'assets/multi/model.safetensors';
    const layout = { size: body.length, partSize };
    const mp = await storage().startMultipart(key, {
      ...layout,
      contentType: 'application/octet-stream',
      ...ttl,
    });
    assert.equal(mp.part_size, partSize);
    assert.deepEqual(
      mp.parts.map((p) => [p.part_number, p.size]),
      [
        [1, partSize],
        [2, partSize],
        [3, 2055],
      ],
    );
    const slice = (n: number) => body.subarray((n - 1) * partSize, Math.min(n * partSize, body.length));
    for (const n of [1, 3]) assert.equal((await send(mp.parts[n - 1]!, slice(n))).status, 200);
    const wrongSize = await send(mp.parts[1]!, slice(2).subarray(1));
    assert.deepEqual(refusal(wrongSize), refusals.size, 'a part of the wrong size is refused');
    await assert.rejects(storage().completeMultipart(key, mp.upload_id, layout), (error: unknown) => {
      assert.ok(error instanceof StorageError);
      assert.equal(error.code, 'incomplete_upload');
      assert.deepEqual(error.details, { missing_parts: [2], wrong_size_parts: [] });
      return true;
    });
    const [fresh] = await storage().presignParts(key, mp.upload_id, { ...layout, partNumbers: [2], ...ttl });
    assert.equal(fresh!.part_number, 2);
    assert.equal((await send(fresh!, slice(2))).status, 200);
    // Two completions at once and one after: all succeed, the object is whole.
    await Promise.all([1, 2].map(() => storage().completeMultipart(key, mp.upload_id, layout)));
    await storage().completeMultipart(key, mp.upload_id, layout);
    assert.deepEqual(await storage().head(key), { size: body.length });
    assert.equal(await storage().sha256(key), sha256(body));
    assert.equal(sha256((await send(await storage().presignGet(key, ttl))).body), sha256(body));
    // A stale part URL can no longer write anything.
    assert.deepEqual(refusal(await send(mp.parts[0]!, slice(1))), refusals.finishedUpload);
  });

  test('multipart refuses parts under the store minimum', async () => {
    await assert.rejects(
      storage().startMultipart('assets/multi/small', {
        size: 10 * MIB,
        contentType: 'x/y',
        partSize: traits.minPartSize - 1,
        ...ttl,
      }),
      { code: 'invalid_argument' },
    );
  });

  for (const size of [0, 3 * MIB, 12 * MIB + 7])
    test(`moveObject moves ${size} bytes over another object and leaves nothing at the source`, async () => {
      const { mover } = store();
      const body = randomBytes(size);
      const from = `uploads/move-${size}/x.bin`;
      const to = `assets/move-${size}/x.bin`;
      assert.equal((await upload(to, randomBytes(5))).status, 200); // overwritten
      assert.equal((await upload(from, body)).status, 200);
      await mover.moveObject(from, to);
      assert.equal(await storage().head(from), undefined);
      assert.deepEqual(await storage().head(to), { size });
      assert.equal(sha256((await send(await storage().presignGet(to, ttl))).body), sha256(body));
      await assert.rejects(mover.moveObject(from, to), { code: 'not_found' });
    });

  test('deleteObject removes an object, an unfinished multipart upload, and is fine with nothing there', async () => {
    const key = 'assets/delete/a.bin';
    assert.equal((await upload(key, randomBytes(10))).status, 200);
    await storage().deleteObject(key);
    assert.equal(await storage().head(key), undefined);
    await storage().deleteObject(key);
    const { partSize } = traits;
    const body = randomBytes(partSize + 10);
    const layout = { size: body.length, partSize };
    const mp = await storage().startMultipart(key, {
      ...layout,
      contentType: 'application/octet-stream',
      ...ttl,
    });
    // Every part sent, never completed (a draft deleted mid-upload): the abort is what stops a completion.
    assert.equal((await send(mp.parts[0]!, body.subarray(0, partSize))).status, 200);
    assert.equal((await send(mp.parts[1]!, body.subarray(partSize))).status, 200);
    await storage().deleteObject(key, { uploadId: mp.upload_id });
    await assert.rejects(storage().completeMultipart(key, mp.upload_id, layout));
    assert.equal(await storage().head(key), undefined);
    await storage().deleteObject(key, { uploadId: mp.upload_id });
  });

  test('putObject, getObject, head and sha256 of missing objects', async () => {
    const body = Buffer.from('{"inline": true}');
    await storage().putObject('assets/inline/report.json', body, 'application/json');
    const chunks: Buffer[] = [];
    for await (const chunk of await storage().getObject('assets/inline/report.json'))
      chunks.push(chunk as Buffer);
    assert.deepEqual(Buffer.concat(chunks), body);
    assert.equal(await storage().head('assets/none/x'), undefined);
    assert.equal(await storage().head('assets/inline'), undefined, 'a directory is not an object');
    await assert.rejects(storage().getObject('assets/none/x'), { code: 'not_found' });
    await assert.rejects(storage().sha256('assets/none/x'), { code: 'not_found' });
    const missing = await send(await storage().presignGet('assets/none/x', ttl));
    assert.deepEqual(refusal(missing), refusals.missing);
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
        storage().presignPut(key, { size: 1, contentType: 'text/plain', ...ttl }),
        { code: 'invalid_key' },
        JSON.stringify(key),
      );
      await assert.rejects(storage().head(key), { code: 'invalid_key' }, JSON.stringify(key));
    }
  });
}
