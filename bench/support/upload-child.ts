// One client upload in a process of its own, so its memory can be read apart from the benchmark's.
// argv[2]: JSON { serverUrl, apiKey, storePath, files: string[] }. Prints one JSON line of UploadReport.
import { Client } from '../../src/client/index.ts';
import { procMemory } from './report.ts';

export interface UploadReport {
  assetId: string;
  state: string;
  workers: number;
  /** RSS after imports and client construction, just before uploadAsync. */
  baselineRss: number;
  /** VmHWM at the end: the process's peak RSS. */
  peakRss: number;
  /**
   * Seconds from uploadAsync: the create request (POST /assets; files are hashed during the transfer) sent
   * and answered, the finalize request (PUT …/finalize, after every
   * storage PUT was answered) sent and answered.
   */
  createS: number;
  createdS: number;
  finalizeS: number;
  readyS: number;
}

const input = JSON.parse(process.argv[2]!) as {
  serverUrl: string;
  apiKey: string;
  storePath: string;
  files: string[];
};
let started = 0;
const marks = { createS: Number.NaN, createdS: Number.NaN, finalizeS: Number.NaN };
const seconds = () => (performance.now() - started) / 1000;
// The service calls go through this fetch (storage PUTs do not): it marks where create and finalize happen.
const timedFetch: typeof fetch = async (url, init) => {
  const call = `${init?.method ?? 'GET'} ${new URL(String(url)).pathname}`;
  const isCreate = call === 'POST /assets';
  const isFinalize = call.startsWith('PUT ') && call.endsWith('/finalize');
  if (isCreate) marks.createS = seconds();
  if (isFinalize) marks.finalizeS = seconds();
  const res = await fetch(url, init);
  if (isCreate) marks.createdS = seconds();
  return res;
};
const client = new Client({
  serverUrl: input.serverUrl,
  apiKey: input.apiKey,
  uploadStorePath: input.storePath,
  // On a busy 2-core machine finalizing 256 components took longer than the default 30 s per request.
  timeout: 600,
  fetch: timedFetch,
});
await new Promise((resolve) => setTimeout(resolve, 500)); // let startup garbage settle before the baseline
const baselineRss = process.memoryUsage.rss();
started = performance.now();
try {
  const asset = await client.uploadAsync({
    kind: 'output',
    name: 'bench-upload',
    files: input.files.map((path) => ({ path })),
  }).done;
  const readyS = seconds();
  const report: UploadReport = {
    assetId: asset.id,
    state: asset.state,
    workers: client.settings.maxUploadWorkers,
    baselineRss,
    peakRss: procMemory('self', 'VmHWM') ?? Number.NaN,
    ...marks,
    readyS,
  };
  console.log(JSON.stringify(report));
} finally {
  client.close();
}
