import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { freePorts } from './free-port.ts';
import { spawnProcessGroup } from './process-group.ts';
import { waitUntilReady } from './readiness.ts';
import { resolveTool } from './tool-paths.ts';

export type SeaweedFs = {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  bucket: string;
  /** Leader of the server's process group. */
  pid: number;
  stop(): Promise<void>;
};

const host = '127.0.0.1';
const region = 'us-east-1';

/**
 * Starts a private SeaweedFS (master, volume, filer, S3 gateway) with one credentialed identity and one
 * bucket. It holds up to `volumes` × `volumeSizeMb` MB: 512 MB is ample for tests; benchmarks moving GiBs ask
 * for more.
 */
export async function startSeaweedFs({
  bucket = 'assay-test',
  volumeSizeMb = 64,
  volumes = 8,
}: { bucket?: string; volumeSizeMb?: number; volumes?: number } = {}): Promise<SeaweedFs> {
  const weed = resolveTool('weed');
  const dir = await mkdtemp(join(tmpdir(), 'assay-seaweedfs-'));
  await mkdir(join(dir, 'data'));
  const accessKeyId = `AK${randomBytes(9).toString('hex').toUpperCase()}`;
  const secretAccessKey = randomBytes(24).toString('base64url');
  // With an identity configured the gateway refuses anonymous and wrongly signed requests.
  const identities = {
    identities: [
      {
        name: 'assay-test',
        credentials: [{ accessKey: accessKeyId, secretKey: secretAccessKey }],
        actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
      },
    ],
  };
  await writeFile(join(dir, 's3-identities.json'), JSON.stringify(identities));

  // Every listener gets an explicit port: gRPC ports otherwise default to http port + 10000, which
  // collides between suites running in parallel.
  const [master, masterGrpc, volume, volumeGrpc, filer, filerGrpc, s3, s3Grpc] = await freePorts(8);
  const args = [
    '-logtostderr',
    'server',
    `-dir=${join(dir, 'data')}`,
    `-ip=${host}`,
    `-ip.bind=${host}`,
    `-master.port=${master}`,
    `-master.port.grpc=${masterGrpc}`,
    '-master.telemetry=false',
    `-master.volumeSizeLimitMB=${volumeSizeMb}`,
    `-volume.port=${volume}`,
    `-volume.port.grpc=${volumeGrpc}`,
    `-volume.max=${volumes}`,
    '-filer',
    `-filer.port=${filer}`,
    `-filer.port.grpc=${filerGrpc}`,
    `-filer.localSocket=${join(dir, 'filer.sock')}`,
    '-s3',
    `-s3.port=${s3}`,
    `-s3.port.grpc=${s3Grpc}`,
    '-s3.port.iceberg=0',
    '-s3.port.lance=0',
    `-s3.localSocket=${join(dir, 's3.sock')}`,
    `-s3.config=${join(dir, 's3-identities.json')}`,
  ];
  // weed always puts its gRPC unix sockets in /tmp, named by port, whatever TMPDIR says.
  const grpcSockets = [
    `master-grpc-${masterGrpc}`,
    `volume-grpc-${volumeGrpc}`,
    `filer-grpc-${filerGrpc}`,
    `s3-grpc-${s3Grpc}`,
  ].map((name) => `/tmp/seaweedfs-${name}.sock`);
  const server = spawnProcessGroup(weed, args, {
    name: 'weed server',
    cwd: dir,
    env: { ...process.env, TMPDIR: dir },
    cleanupPaths: [dir, ...grpcSockets],
    // Its graceful shutdown takes ~17 s and the data is thrown away anyway.
    stopGraceMs: 0,
  });

  const endpoint = `http://${host}:${s3}`;
  const client = new S3Client({
    endpoint,
    region,
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
    maxAttempts: 1,
  });
  try {
    await waitUntilReady(server, async () => {
      await client.send(new ListBucketsCommand({}), { abortSignal: AbortSignal.timeout(2_000) });
      return true;
    });
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    await server.stop();
    throw error;
  } finally {
    client.destroy();
  }
  return { endpoint, region, accessKeyId, secretAccessKey, bucket, pid: server.pid, stop: server.stop };
}

/** The service's settings (ASSAY_STORAGE and S3_*) that point it at this store. */
export function s3StorageEnv(store: SeaweedFs): Record<string, string> {
  return {
    ASSAY_STORAGE: 's3',
    S3_BUCKET: store.bucket,
    S3_REGION: store.region,
    S3_ENDPOINT: store.endpoint,
    S3_FORCE_PATH_STYLE: 'true',
    S3_ACCESS_KEY_ID: store.accessKeyId,
    S3_SECRET_ACCESS_KEY: store.secretAccessKey,
  };
}
