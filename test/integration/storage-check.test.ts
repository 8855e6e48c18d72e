// A wrong S3 address or bucket shows at start and in /readyz, naming the setting, not at the first upload.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DeleteBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { loadConfig } from '../../src/server/config.ts';
import { createService } from '../../src/server/service.ts';
import { freePort } from '../support/free-port.ts';
import { s3StorageEnv, startSeaweedFs, type SeaweedFs } from '../support/seaweedfs.ts';

const silent = { level: 'silent' } as never;

describe('the S3 store is checked through the configured endpoint', () => {
  let store: SeaweedFs;
  let dataDir: string;
  const start = (env: Record<string, string>) =>
    createService(loadConfig({ ASSAY_DATA_DIR: dataDir, ...s3StorageEnv(store), ...env }), {
      logger: silent,
    });

  before(async () => {
    store = await startSeaweedFs();
    dataDir = await mkdtemp(path.join(tmpdir(), 'assay-s3-check-'));
  });
  after(async () => {
    await store?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('a start with an endpoint where no store answers fails, naming S3_ENDPOINT', async () => {
    const endpoint = `http://127.0.0.1:${await freePort()}`;
    await assert.rejects(start({ S3_ENDPOINT: endpoint }), (err: Error) => {
      assert.equal(err.name, 'ConfigError');
      assert.match(err.message, new RegExp(`at S3_ENDPOINT ${endpoint} is unreachable; check S3_ENDPOINT`));
      return true;
    });
  });

  test('a start with a bucket the store does not hold fails, naming S3_BUCKET', async () => {
    await assert.rejects(
      start({ S3_BUCKET: 'no-such-bucket' }),
      /S3_BUCKET "no-such-bucket" at S3_ENDPOINT .* does not exist/,
    );
  });

  test('a start with a wrong secret fails, naming the key settings', async () => {
    await assert.rejects(
      start({ S3_SECRET_ACCESS_KEY: 'wrong-secret' }),
      /refused access \(403\); check S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY/,
    );
  });

  test('/readyz answers 503 naming S3_BUCKET once the bucket is gone', async () => {
    const service = await start({});
    try {
      const ready = await service.app.inject({ url: '/readyz' });
      assert.equal(ready.statusCode, 200, ready.body);
      const client = new S3Client({
        endpoint: store.endpoint,
        region: store.region,
        forcePathStyle: true,
        credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey },
      });
      await client.send(new DeleteBucketCommand({ Bucket: store.bucket }));
      client.destroy();
      const gone = await service.app.inject({ url: '/readyz' });
      assert.equal(gone.statusCode, 503);
      const { error } = gone.json() as { error: { code: string; message: string } };
      assert.equal(error.code, 'storage_unavailable');
      assert.match(
        error.message,
        new RegExp(`^S3_BUCKET "${store.bucket}" at S3_ENDPOINT ${store.endpoint} does not exist`),
      );
    } finally {
      await service.close();
    }
  });
});
