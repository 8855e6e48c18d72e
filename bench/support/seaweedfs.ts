// SeaweedFS sized for benchmarks. test/support/seaweedfs.ts caps the store at 8 volumes of 64 MB (512 MB, ample
// for tests): a few GiB of benchmark uploads need bigger volumes. Everything else is the same start as there.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { freePorts } from '../../test/support/free-port.ts';
import { spawnProcessGroup } from '../../test/support/process-group.ts';
import { waitUntilReady } from '../../test/support/readiness.ts';
import type { SeaweedFs } from '../../test/support/seaweedfs.ts';
import { resolveTool } from '../../test/support/tool-paths.ts';

const host = '127.0.0.1';
const region = 'us-east-1';

/** A private SeaweedFS (master, volume, filer, S3 gateway) holding up to `volumes` × `volumeMb` MB, with one bucket. */
export async function startBenchSeaweedFs(o: { bucket: string; volumeMb: number; volumes: number }): Promise<SeaweedFs & { dir: string }> {
  const weed = resolveTool('weed');
  const dir = await mkdtemp(join(tmpdir(), 'assay-bench-seaweedfs-'));
  await mkdir(join(dir, 'data'));
  const accessKeyId = `AK${randomBytes(9).toString('hex').toUpperCase()}`;
  const secretAccessKey = randomBytes(24).toString('base64url');
  const identities = { identities: [{ name: 'assay-bench', credentials: [{ accessKey: accessKeyId, secretKey: secretAccessKey }], actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'] }] };
  await writeFile(join(dir, 's3-identities.json'), JSON.stringify(identities));
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
    `-master.volumeSizeLimitMB=${o.volumeMb}`,
    `-volume.port=${volume}`,
    `-volume.port.grpc=${volumeGrpc}`,
    `-volume.max=${o.volumes}`,
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
  // weed puts its gRPC unix sockets in /tmp, named by port, whatever TMPDIR says.
  const grpcSockets = [`master-grpc-${masterGrpc}`, `volume-grpc-${volumeGrpc}`, `filer-grpc-${filerGrpc}`, `s3-grpc-${s3Grpc}`].map((name) => `/tmp/seaweedfs-${name}.sock`);
  const server = spawnProcessGroup(weed, args, { name: 'weed server', cwd: dir, env: { ...process.env, TMPDIR: dir }, cleanupPaths: [dir, ...grpcSockets], stopGraceMs: 0 });
  const endpoint = `http://${host}:${s3}`;
  const client = new S3Client({ endpoint, region, forcePathStyle: true, credentials: { accessKeyId, secretAccessKey }, maxAttempts: 1 });
  try {
    await waitUntilReady(server, async () => {
      await client.send(new ListBucketsCommand({}), { abortSignal: AbortSignal.timeout(2_000) });
      return true;
    });
    await client.send(new CreateBucketCommand({ Bucket: o.bucket }));
  } catch (error) {
    await server.stop();
    throw error;
  } finally {
    client.destroy();
  }
  return { endpoint, region, accessKeyId, secretAccessKey, bucket: o.bucket, pid: server.pid, dir, stop: server.stop };
}
