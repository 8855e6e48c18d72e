import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError } from '../../../src/server/config.ts';
import { storageConfig } from '../../../src/server/storage/storage-config.ts';

const where = { dataDir: '/data', publicUrl: 'http://127.0.0.1:8080/' };
const s3 = { ASSAY_STORAGE: 's3', S3_BUCKET: 'assay-objects' };
const MIB = 1024 ** 2;
const GIB = 1024 ** 3;

function refuses(env: Record<string, string>, variable: string) {
  assert.throws(
    () => storageConfig(env, where),
    (error: unknown) => error instanceof ConfigError && error.message.includes(variable),
    `${JSON.stringify(env)} should name ${variable}`,
  );
}

describe('storage config', () => {
  it('defaults to local storage in the data directory, frozen', () => {
    const c = storageConfig({}, where);
    assert.deepEqual(c, {
      kind: 'local',
      dir: path.resolve('/data/objects'),
      secret: undefined,
      secretFile: path.resolve('/data/storage-secret'),
      publicUrl: 'http://127.0.0.1:8080',
      uploadUrlTtlS: 3600,
      multipartThresholdBytes: 5 * GIB,
      multipartPartBytes: 512 * MIB,
    });
    assert.ok(Object.isFrozen(c));
  });

  it('reads the local variables', () => {
    const c = storageConfig(
      {
        ASSAY_STORAGE: 'local',
        ASSAY_STORAGE_DIR: '/srv/objects',
        ASSAY_STORAGE_SECRET: 's'.repeat(32),
        ASSAY_UPLOAD_URL_TTL_S: '60',
      },
      where,
    );
    assert.equal(c.kind, 'local');
    assert.deepEqual(
      [c.kind === 'local' && c.dir, c.kind === 'local' && c.secret, c.uploadUrlTtlS],
      ['/srv/objects', 's'.repeat(32), 60],
    );
  });

  it('lets the local backend use tiny parts (for tests) but not s3', () => {
    assert.equal(
      storageConfig({ ASSAY_MULTIPART_PART_BYTES: '1024', ASSAY_MULTIPART_THRESHOLD_BYTES: '4096' }, where)
        .multipartPartBytes,
      1024,
    );
    refuses({ ...s3, ASSAY_MULTIPART_PART_BYTES: '1024' }, 'ASSAY_MULTIPART_PART_BYTES');
    assert.equal(
      storageConfig({ ...s3, ASSAY_MULTIPART_PART_BYTES: String(5 * MIB) }, where).multipartPartBytes,
      5 * MIB,
    );
    refuses({ ASSAY_MULTIPART_PART_BYTES: String(5 * GIB + 1) }, 'ASSAY_MULTIPART_PART_BYTES');
    // One S3 PUT takes at most 5 GiB.
    refuses(
      { ...s3, ASSAY_MULTIPART_THRESHOLD_BYTES: String(5 * GIB + 1) },
      'ASSAY_MULTIPART_THRESHOLD_BYTES',
    );
    assert.equal(
      storageConfig({ ASSAY_MULTIPART_THRESHOLD_BYTES: String(6 * GIB) }, where).multipartThresholdBytes,
      6 * GIB,
    );
  });

  it('reads the s3 variables, with the default credential chain when no keys are given', () => {
    const c = storageConfig(
      {
        ...s3,
        S3_REGION: 'eu-west-1',
        S3_ENDPOINT: 'http://127.0.0.1:8333/',
        S3_FORCE_PATH_STYLE: 'true',
        S3_ACCESS_KEY_ID: 'AK',
        S3_SECRET_ACCESS_KEY: 'SK',
      },
      where,
    );
    assert.deepEqual(c, {
      kind: 's3',
      bucket: 'assay-objects',
      region: 'eu-west-1',
      endpoint: 'http://127.0.0.1:8333',
      forcePathStyle: true,
      credentials: { accessKeyId: 'AK', secretAccessKey: 'SK' },
      checksums: 'auto',
      uploadUrlTtlS: 3600,
      multipartThresholdBytes: 5 * GIB,
      multipartPartBytes: 512 * MIB,
    });
    assert.ok(Object.isFrozen(c) && c.kind === 's3' && Object.isFrozen(c.credentials));
    const aws = storageConfig(s3, where);
    assert.deepEqual(
      [
        aws.kind === 's3' && aws.region,
        aws.kind === 's3' && aws.endpoint,
        aws.kind === 's3' && aws.forcePathStyle,
        aws.kind === 's3' && aws.credentials,
      ],
      ['us-east-1', undefined, false, undefined],
    );
  });

  it('treats empty values as unset', () => {
    assert.equal(
      storageConfig({ ASSAY_STORAGE: '', ASSAY_UPLOAD_URL_TTL_S: ' ', S3_BUCKET: '' }, where).kind,
      'local',
    );
  });

  it('names the variable in every refusal', () => {
    refuses({ ASSAY_STORAGE: 'gcs' }, 'ASSAY_STORAGE');
    refuses({ ASSAY_STORAGE: 's3' }, 'S3_BUCKET');
    refuses({ ...s3, S3_BUCKET: 'Bad_Bucket' }, 'S3_BUCKET');
    refuses({ ...s3, S3_ENDPOINT: 'ftp://x' }, 'S3_ENDPOINT');
    refuses({ ...s3, S3_ENDPOINT: 'not a url' }, 'S3_ENDPOINT');
    refuses({ ...s3, S3_FORCE_PATH_STYLE: 'maybe' }, 'S3_FORCE_PATH_STYLE');
    refuses({ ...s3, S3_ACCESS_KEY_ID: 'AK' }, 'S3_SECRET_ACCESS_KEY');
    refuses({ ASSAY_STORAGE_SECRET: 'short' }, 'ASSAY_STORAGE_SECRET');
    refuses({ ASSAY_UPLOAD_URL_TTL_S: '0' }, 'ASSAY_UPLOAD_URL_TTL_S');
    refuses({ ASSAY_UPLOAD_URL_TTL_S: '604801' }, 'ASSAY_UPLOAD_URL_TTL_S');
    refuses({ ASSAY_UPLOAD_URL_TTL_S: '1.5' }, 'ASSAY_UPLOAD_URL_TTL_S');
    refuses({ ASSAY_MULTIPART_PART_BYTES: '1e6' }, 'ASSAY_MULTIPART_PART_BYTES');
    assert.throws(() => storageConfig({}, { dataDir: '/data', publicUrl: 'localhost:8080' }), ConfigError);
  });

  it('refuses a bucket that would be silently ignored', () => {
    refuses({ S3_BUCKET: 'assay-objects' }, 'ASSAY_STORAGE');
    assert.equal(storageConfig({ ASSAY_STORAGE: 'local', S3_BUCKET: 'assay-objects' }, where).kind, 'local');
  });
});
