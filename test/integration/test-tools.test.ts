// Proves the launchers start the real servers: each answers its own protocol, and S3 enforces credentials.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startMoto, type Moto } from '../support/moto.ts';
import { acceptsTcp } from '../support/readiness.ts';
import { startSeaweedFs, type SeaweedFs } from '../support/seaweedfs.ts';
import { startTemporalDevServer, type TemporalDevServer } from '../support/temporal.ts';

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

// stop() must leave no member of the server's process group behind.
async function stopAndCheck(server: { pid: number; stop(): Promise<void> } | undefined): Promise<void> {
  if (!server) return;
  await server.stop();
  assert.equal(groupAlive(server.pid), false, `process group ${server.pid} survived stop()`);
}

function s3Client(store: SeaweedFs, secretAccessKey = store.secretAccessKey): S3Client {
  return new S3Client({
    endpoint: store.endpoint,
    region: store.region,
    forcePathStyle: true,
    credentials: { accessKeyId: store.accessKeyId, secretAccessKey },
    maxAttempts: 1,
  });
}

describe('SeaweedFS', () => {
  let store: SeaweedFs;
  before(async () => {
    store = await startSeaweedFs();
  });
  after(() => stopAndCheck(store));

  test('stores and returns an object', async () => {
    const client = s3Client(store);
    const body = new Uint8Array([0, 1, 2, 254, 255]);
    await client.send(new PutObjectCommand({ Bucket: store.bucket, Key: 'probe/bytes.bin', Body: body }));
    const got = await client.send(new GetObjectCommand({ Bucket: store.bucket, Key: 'probe/bytes.bin' }));
    assert.deepEqual(await got.Body!.transformToByteArray(), body);
    client.destroy();
  });

  test('refuses a request signed with the wrong secret', async () => {
    const client = s3Client(store, 'not-the-secret');
    await assert.rejects(
      client.send(new GetObjectCommand({ Bucket: store.bucket, Key: 'probe/bytes.bin' })),
      {
        name: 'SignatureDoesNotMatch',
      },
    );
    client.destroy();
  });

  test('refuses an unsigned request', async () => {
    const response = await fetch(`${store.endpoint}/${store.bucket}/probe/bytes.bin`);
    assert.equal(response.status, 403);
    await response.body?.cancel();
  });
});

describe('moto', () => {
  let moto: Moto;
  before(async () => {
    moto = await startMoto();
  });
  after(() => stopAndCheck(moto));

  test('answers EC2 DescribeRegions', async () => {
    // moto checks no signature, but routes a request to a service by the credential scope in Authorization.
    const response = await fetch(moto.endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization:
          'AWS4-HMAC-SHA256 Credential=testing/20250101/us-east-1/ec2/aws4_request, SignedHeaders=host, Signature=0',
      },
      body: 'Action=DescribeRegions&Version=2016-11-15',
    });
    const xml = await response.text();
    assert.equal(response.status, 200, xml);
    assert.match(xml, /<DescribeRegionsResponse/);
    assert.match(xml, /<regionName>us-east-1<\/regionName>/);
  });
});

describe('Temporal dev server', () => {
  let temporal: TemporalDevServer;
  before(async () => {
    temporal = await startTemporalDevServer();
  });
  after(() => stopAndCheck(temporal));

  test('is alive and accepts gRPC connections on its address', async () => {
    assert.equal(groupAlive(temporal.pid), true);
    const [host, port] = temporal.address.split(':');
    assert.equal(await acceptsTcp(host!, Number(port)), true);
    assert.equal(temporal.namespace, 'default');
  });
});
