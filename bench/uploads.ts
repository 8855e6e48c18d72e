// The client's crash-safe upload to S3 (SeaweedFS) against curl PUTting the same bytes to the same kind of
// presigned URLs: many small files and one large multipart file; MB/s, ratio, and the client's peak RSS.
// Prints figures (not a test).
// Run: node bench/uploads.ts [--gib 1] [--files 256] [--part-mib 64] [--rounds 2]
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_MAX_UPLOAD_WORKERS, DEFAULT_UPLOAD_PART_BYTES } from '../src/client/config-values.ts';
import { startBenchService } from './support/bench-service.ts';
import { clientUpload } from './support/client-upload.ts';
import { type BenchFile, curlPuts, curlUpload, finalize, presign, runCurl } from './support/curl-upload.ts';
import { machine, mib, options, publish } from './support/report.ts';
import { s3StorageEnv, startSeaweedFs } from '../test/support/seaweedfs.ts';
import { randomFiles } from './support/upload-files.ts';
import { roundsTable, summaryTable, type UploadResult } from './support/upload-report.ts';

const o = options(process.argv.slice(2), { gib: 1, files: 256, 'part-mib': 64, rounds: 2 });
const MIB = 1024 * 1024;
const bytes = Math.round(o.gib * 1024 * MIB);
const partBytes = o['part-mib'] * MIB;
const workers = DEFAULT_MAX_UPLOAD_WORKERS;
const log = (line: string) => console.log(`[uploads] ${line}`);

const dir = await mkdtemp(path.join(tmpdir(), 'assay-bench-uploads-'));
const scenarios: Array<{ label: string; files: BenchFile[] }> = [];
log(`writing ${o.files} random files of ${mib(bytes / o.files)} and one of ${mib(bytes)} to ${dir}`);
scenarios.push({
  label: `${o.files} files × ${mib(bytes / o.files)}`,
  files: await randomFiles(path.join(dir, 'many'), o.files, Math.floor(bytes / o.files)),
});
scenarios.push({
  label: `1 file × ${mib(bytes)}, ${Math.ceil(bytes / DEFAULT_UPLOAD_PART_BYTES)} parts`,
  files: await randomFiles(path.join(dir, 'one'), 1, bytes),
});

// weed's own default volume size (30 GB; volumes are not preallocated): the first write grows all the volumes
// the run needs, during the warm-up below, rather than again in the middle of a measured upload.
const seaweed = await startSeaweedFs({ bucket: 'assay-bench', volumeSizeMb: 30_000, volumes: 8 });
const results: UploadResult[] = [];

/**
 * Flushes what the last upload left dirty (SeaweedFS's gigabyte) and
 * idles a moment, so it does not slow the next.
 */
async function settle(): Promise<void> {
  await promisify(execFile)('sync');
  await new Promise((resolve) => setTimeout(resolve, 2000));
}

try {
  const service = await startBenchService('uploads', {
    ...s3StorageEnv(seaweed),
    // Components declared without part checksums go in parts of
    // --part-mib; the client declares its own layout.
    ASSAY_MULTIPART_THRESHOLD_BYTES: String(partBytes),
    ASSAY_MULTIPART_PART_BYTES: String(partBytes),
  });
  const api = { url: service.url, key: service.key };
  try {
    log('warm-up (not measured): curl and finalize of 8 small files');
    const warm = scenarios[0]!.files.slice(0, 8);
    const warmAsset = await presign(api, 'warm-up', warm);
    await runCurl(await curlPuts(warmAsset, warm, dir), workers);
    await finalize(api, warmAsset.id);
    for (let round = 1; round <= o.rounds; round++) {
      for (const s of scenarios) {
        const runClient = async () => {
          await settle();
          log(`round ${round}, ${s.label}: client upload`);
          const home = path.join(dir, `home-${round}-${s.files.length}`);
          await mkdir(home);
          return clientUpload({
            serverUrl: service.url,
            apiKey: service.key,
            home,
            files: s.files.map((f) => f.path),
          });
        };
        const runCurlUpload = async () => {
          await settle();
          log(`round ${round}, ${s.label}: curl, ${workers} at a time`);
          const partDir = path.join(dir, `parts-${round}`);
          await mkdir(partDir);
          const result = await curlUpload(api, s.files, partDir, workers);
          await rm(partDir, { recursive: true, force: true });
          return result;
        };
        // Which goes first alternates between rounds.
        const curlFirst = round % 2 === 0 ? await runCurlUpload() : undefined;
        const client = await runClient();
        const curl = curlFirst ?? (await runCurlUpload());
        results.push({ round, scenario: s, client, curl });
      }
    }
  } finally {
    await service.stop();
  }
} finally {
  await seaweed.stop();
  await rm(dir, { recursive: true, force: true });
}

await publish(
  'uploads',
  `### Uploads: ${mib(bytes)} to S3 (SeaweedFS), client against curl (${new Date().toISOString().slice(0, 10)})

Command: \`${['node bench/uploads.ts', ...process.argv.slice(2)].join(' ')}\` · ${machine()} · curl ${await curlVersion()}.
SeaweedFS ${seaweed.endpoint.replace(/^http:\/\//, '')} (\`weed server\` with filer and S3 gateway, one process, loopback), the service as its own
process with \`ASSAY_STORAGE=s3\`, \`ASSAY_MULTIPART_THRESHOLD_BYTES=ASSAY_MULTIPART_PART_BYTES=${partBytes}\` (${o['part-mib']} MiB) and
\`ASSAY_S3_CHECKSUMS\` on its default. The client cuts files over ${mib(DEFAULT_UPLOAD_PART_BYTES)} in parts of ${mib(DEFAULT_UPLOAD_PART_BYTES)} and declares their sha256 while it sends (the
${mib(bytes)} file goes in ${Math.ceil(bytes / DEFAULT_UPLOAD_PART_BYTES)} parts, the small files in one PUT each). Random files in a temp dir (in the page
cache for both). Client: \`client.uploadAsync\` (all files as one asset) in a child process on its defaults
(max_upload_workers ${workers}, a 600 s request timeout); curl: \`curl -sS -f -X PUT --upload-file <file> <url>\`, ${workers} processes at a time, on
fresh presigned URLs of a second asset with the same components and checksums (part files cut beforehand for the
multipart one), then finalize. MB/s are 10^6 bytes/s.

Client time = create (until \`POST /assets\`, with \`deferred_checksums\`, answers) + transfer (hashing each file or part
and declaring its sha256 at \`POST /assets/{id}/checksums\`, which answers its URL, overlapped with the PUTs of the
ones before; until the last storage PUT is answered and \`PUT …/finalize\` goes out) + finalize (the service completes the multipart upload, moves every component out of
the upload keys and checks its sha256: from the store's checksum when the store verified the signed checksums on
upload, else by reading it back). Every upload starts after \`sync\` and 2 s idle; client and curl take turns going first.
Ratio = client MB/s / curl MB/s. Medians over ${o.rounds} rounds:

${summaryTable(results)}

Each round (client peak RSS in its child process: VmHWM, and VmRSS sampled every 20 ms):

${roundsTable(results)}
`,
);

async function curlVersion(): Promise<string> {
  const { stdout } = await promisify(execFile)('curl', ['--version']);
  return /curl (\S+)/.exec(stdout)?.[1] ?? 'unknown';
}
