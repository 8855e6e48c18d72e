// The S3 backend against a real SeaweedFS: presigned URLs are used with plain fetch, as a client would.
// The shared cases (test/support/storage-suite.ts) run here and on the local backend; the rest are S3's.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createObjectStorage } from '../../src/server/storage/create-storage.ts';
import { S3Storage } from '../../src/server/storage/s3-storage.ts';
import { storageConfig } from '../../src/server/storage/storage-config.ts';
import { send } from '../support/presigned-http.ts';
import { s3StorageEnv, startSeaweedFs, type SeaweedFs } from '../support/seaweedfs.ts';
import { storageSuite } from '../support/storage-suite.ts';

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

  storageSuite(() => ({ storage, mover: smallCopies }), {
    // S3 takes parts from 5 MiB (but the last).
    partSize: 5 * MIB,
    minPartSize: 5 * MIB,
    signatureParam: 'X-Amz-Signature',
    expiresParam: 'X-Amz-Expires',
    refusals: {
      signature: [403, 'SignatureDoesNotMatch'],
      unsigned: [400, 'MissingFields'],
      expired: [403, 'AccessDenied'],
      size: [403, 'SignatureDoesNotMatch'],
      missing: [404, 'NoSuchKey'],
      finishedUpload: [404, 'NoSuchUpload'],
    },
  });

  async function upload(key: string, body: Buffer, contentType: string) {
    return send(await storage.presignPut(key, { size: body.length, contentType, ...ttl }), body);
  }

  // The local backend neither signs nor keeps a content type: it serves every object as octet-stream.
  test('Content-Type is signed, and a download answers the declared one', async () => {
    const put = await storage.presignPut('assets/typed/x', { size: 3, contentType: 'text/plain', ...ttl });
    assert.equal((await send(put, Buffer.from('abc'), { 'content-type': 'text/html' })).status, 403);
    assert.equal(await storage.head('assets/typed/x'), undefined);
    assert.equal((await upload('assets/typed/x', Buffer.from('abc'), 'text/plain')).status, 200);
    const got = await send(await storage.presignGet('assets/typed/x', ttl));
    assert.equal(got.status, 200);
    assert.equal(got.headers.get('content-type'), 'text/plain');
  });
});
