// Run metrics: ingest of batched points by N concurrent simulated runners against our service on PostgreSQL,
// side by side with MLflow's runs/log-batch on the same PostgreSQL server (the runner-traffic harness starts
// both), and the downsampled read of a 1,000,000-point series against a 1,000-point one in the same run.
// Prints figures (not a test); every phase is bounded by --seconds; loopback only.
// Run: node bench/metrics.ts [--runners 100,1000] [--batches 1000,100] [--seconds 15] [--pace S]
//   [--read-points 1000000] [--skip-mlflow] [--skip-ingest]
import { mkdir, writeFile } from 'node:fs/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/server/db/database.ts';
import * as metricRepo from '../src/server/metrics/metric-repository.ts';
import { startAssay, type AssayServer } from './runner-traffic/assay.ts';
import { cpuAccount, cpuSplit, type CpuAccount, type CpuSplit } from './runner-traffic/cpu-account.ts';
import { JsonHttp, mapLimit } from './runner-traffic/http.ts';
import { ensureMlflow, MLFLOW_WORKERS, mlflowVersion, startMlflow } from './runner-traffic/mlflow.ts';
import { createDatabase, databaseUrl, dropDatabase, serverFacts } from './runner-traffic/postgres.ts';
import { Latencies } from './runner-traffic/stats.ts';
import { watchServer, type ServerView } from './support/server-view.ts';

const METRICS_ROUTE = '/experiments/:id/variations/:n/runs/:r/metrics';

const { values } = parseArgs({
  options: {
    runners: { type: 'string', default: '100,1000' },
    batches: { type: 'string', default: '1000,100' },
    seconds: { type: 'string', default: '15' },
    'read-points': { type: 'string', default: '1000000' },
    'read-requests': { type: 'string', default: '200' },
    'skip-mlflow': { type: 'boolean', default: false },
    'skip-ingest': { type: 'boolean', default: false },
    pace: { type: 'string', default: '0' },
    out: { type: 'string', default: 'bench/results/metrics.md' },
  },
});
const runnerCounts = values.runners.split(',').map(Number);
const batchSizes = values.batches.split(',').map(Number);
const seconds = Number(values.seconds);
const readPoints = Number(values['read-points']);
const readRequests = Number(values['read-requests']);
/** Seconds between a runner's batches (open loop, as the client's buffer sends by time); 0: closed loop. */
const pace = Number(values.pace);
const KEYS = 10;
if (
  runnerCounts.some((n) => !Number.isInteger(n) || n < 1 || n > 5000) ||
  batchSizes.some((b) => !Number.isInteger(b) || b < KEYS || b > 1000 || b % KEYS !== 0) ||
  !(seconds >= 2 && seconds <= 600) ||
  !(readPoints >= 1000 && readPoints <= 10_000_000) ||
  !(pace >= 0 && pace <= 60)
)
  throw new Error(
    '--runners 1..5000, --batches multiples of 10 up to 1000, --seconds 2..600, --read-points 1000..10^7, --pace 0..60',
  );

const abort = new AbortController();
const budgetS = runnerCounts.length * batchSizes.length * 2 * (seconds + 300) + 1200;
setTimeout(() => {
  console.error(`metrics bench: over its ${budgetS} s budget; stopping`);
  abort.abort();
  setTimeout(() => process.exit(2), 60_000).unref();
}, budgetS * 1000).unref();
process.on('SIGINT', () => {
  if (abort.signal.aborted) process.exit(130);
  abort.abort();
});

const databases = new Set<string>();
async function freshDatabase(label: string): Promise<string> {
  const name = await createDatabase(label);
  databases.add(name);
  return name;
}

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
const KEY_NAMES = Array.from({ length: KEYS }, (_, k) => (k === 0 ? 'train/loss' : `metric_${k}`));
/**
 * The batch a runner sends: `size / KEYS` steps of every key, steps following on from its earlier batches.
 */
function pointsOf(batchIndex: number, size: number) {
  const steps = size / KEYS;
  const now = Date.now();
  const points: { key: string; step: number; value: number; ts: number }[] = [];
  for (let s = 0; s < steps; s++) {
    const step = batchIndex * steps + s;
    for (const key of KEY_NAMES)
      points.push({ key, step, value: Math.sin(step / 100) + Math.random(), ts: now });
  }
  return points;
}

interface IngestResult {
  target: string;
  runners: number;
  batch: number;
  batches: number;
  unfinished: number;
  errors: number;
  seconds: number;
  pointsPerS: number;
  p50: number;
  p99: number;
  /**
   * This load client's event-loop delay over the window (p99, max): a late client also makes batches late.
   */
  clientLag: { p99: number; max: number };
  /** What the server's own metrics saw over the window (ours only). */
  server: ServerView | undefined;
  cpu: CpuSplit;
}

/**
 * Every runner sends batch after batch for `seconds` (closed loop: the next as soon as the last answered).
 * Points/s counts batches answered inside the window; batches still in flight at its end get as long again to
 * answer (their latencies count), and any still open then are reported as unfinished and abandoned.
 */
async function ingestPhase(
  target: string,
  runners: number,
  batch: number,
  send: (runner: number, batchIndex: number) => Promise<void>,
  cpu: CpuAccount,
  warmUp: boolean,
  watch?: () => Promise<{ end(): Promise<ServerView> }>,
): Promise<IngestResult> {
  const latencies = new Latencies();
  let errors = 0;
  let inWindow = 0;
  let firstError: unknown;
  const next = new Array<number>(runners).fill(0);
  // Each runner's first batch creates its series; a warm-up batch keeps that out of the figures. A 503 (the
  // service's pool stayed busy past its wait when all runners' first batches land at once) is resent after a
  // pause, as the client's buffer resends it.
  if (warmUp)
    await mapLimit(
      Array.from({ length: runners }, (_, i) => i),
      runners,
      async (i) => {
        const k = next[i]!++;
        for (let attempt = 0; ; attempt++) {
          try {
            return await send(i, k);
          } catch (error) {
            if (attempt >= 5 || !String(error).includes('answered 503')) throw error;
            await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** attempt));
          }
        }
      },
    );
  const before = await cpu.snapshot();
  const watching = await watch?.();
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const start = performance.now();
  const end = start + seconds * 1000;
  let closed = false;
  let open = 0;
  const runnersDone = Promise.all(
    Array.from({ length: runners }, async (_, i) => {
      // Paced: runner i's batches are due every `pace` s from an offset that spreads the runners over the
      // first interval. Latency counts from when a batch was due, so a server that falls behind shows in it.
      let due = start + (pace * 1000 * i) / runners;
      while (performance.now() < end && !abort.signal.aborted && !closed) {
        if (pace > 0) {
          const wait = due - performance.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          if (performance.now() >= end) return;
        }
        const t0 = pace > 0 ? due : performance.now();
        due += pace * 1000;
        open++;
        try {
          await send(i, next[i]!++);
          if (closed) return;
          const t1 = performance.now();
          latencies.add(t1 - t0);
          if (t1 <= end) inWindow++;
        } catch (error) {
          if (closed) return;
          errors++;
          firstError ??= error;
        } finally {
          open--;
        }
      }
    }),
  );
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  lag.disable();
  const after = await cpu.snapshot();
  const server = await watching?.end();
  await Promise.race([runnersDone, new Promise((resolve) => setTimeout(resolve, seconds * 1000))]);
  closed = true;
  if (firstError) console.error(`  ${target}: ${errors} errors, the first: ${String(firstError)}`);
  const result = {
    target,
    runners,
    batch,
    batches: latencies.count,
    unfinished: open,
    errors,
    seconds,
    pointsPerS: (inWindow * batch) / seconds,
    p50: latencies.quantile(0.5),
    p99: latencies.quantile(0.99),
    clientLag: { p99: lag.percentile(99) / 1e6, max: lag.max / 1e6 },
    server,
    cpu: cpuSplit(before, after, inWindow * batch),
  };
  console.log(
    `  ${target}: ${runners} runners × ${batch}-point batches: ${Math.round(result.pointsPerS).toLocaleString('en-US')} points/s, p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms, ${open} unfinished, client event-loop delay p99 ${result.clientLag.p99.toFixed(1)} ms (max ${result.clientLag.max.toFixed(1)}), server ${(result.cpu.msPerOp.server * 1000).toFixed(1)} µs + PostgreSQL ${(result.cpu.msPerOp.postgres * 1000).toFixed(1)} µs CPU per point (load ${load()})`,
  );
  if (server) console.log(`  ${target}: inside the server, ${serverLine(server)}`);
  return result;
}

/** A committed experiment with `count` started runs; answers their paths. */
async function assayRuns(http: JsonHttp, count: number): Promise<{ paths: string[]; ids: string[] }> {
  const experiment = await http.call<{ id: string }>('POST', '/experiments', { name: 'metrics bench' });
  await http.call('POST', `/experiments/${experiment.id}/variations`, { config_yaml: 'lr: 0.1\n' });
  await http.call('POST', `/experiments/${experiment.id}/commit`);
  const runs = await mapLimit(Array.from({ length: count }), 32, async () => {
    const run = await http.call<{ id: string; r: number }>(
      'POST',
      `/experiments/${experiment.id}/variations/1/runs`,
    );
    const p = `/experiments/${experiment.id}/variations/1/runs/${run.r}`;
    await http.call('GET', `${p}/config`);
    await http.call('POST', `${p}/start`, { environment: {} });
    return { path: p, id: run.id };
  });
  return { paths: runs.map((r) => r.path), ids: runs.map((r) => r.id) };
}

const assayBody = (batchIndex: number, size: number) => ({
  metrics: pointsOf(batchIndex, size).map((p) => ({
    key: p.key,
    step: p.step,
    value: p.value,
    timestamp: new Date(p.ts).toISOString(),
  })),
});

async function assayIngest(runners: number): Promise<IngestResult[]> {
  const db = await freshDatabase('metrics_assay');
  const server = await startAssay(databaseUrl(db));
  const http = new JsonHttp(server.url, runners, { authorization: `Bearer ${server.key}` });
  const cpu = await cpuAccount(server.process.pid, db);
  try {
    const results: IngestResult[] = [];
    for (const batch of batchSizes) {
      const { paths } = await assayRuns(http, runners);
      results.push(
        await ingestPhase(
          'Assay',
          runners,
          batch,
          async (i, k) => void (await http.call('POST', `${paths[i]}/metrics`, assayBody(k, batch))),
          cpu,
          true,
          () => watchServer(server.url, 'POST', METRICS_ROUTE),
        ),
      );
    }
    return results;
  } finally {
    await cpu.close();
    await http.close();
    await server.process.stop();
    await dropDatabase(db);
    databases.delete(db);
  }
}

async function mlflowIngest(runners: number): Promise<IngestResult[] | string> {
  if (values['skip-mlflow']) return 'skipped (--skip-mlflow)';
  const missing = ensureMlflow();
  if (missing) return `not installed: ${missing}`;
  const db = await freshDatabase('metrics_mlflow');
  console.log('  MLflow: starting (its migrations take a while on an empty database)');
  const server = await startMlflow(databaseUrl(db));
  const http = new JsonHttp(server.url, runners);
  const cpu = await cpuAccount(server.process.pid, db);
  const api = '/api/2.0/mlflow';
  try {
    const results: IngestResult[] = [];
    for (const batch of batchSizes) {
      // setupCall resends after a dropped connection, which may follow a create that went through.
      const name = `metrics-${process.pid}-${batch}`;
      const experiment_id = await http
        .setupCall<{ experiment_id: string }>('POST', `${api}/experiments/create`, { name })
        .then(
          (r) => r.experiment_id,
          async (error: unknown) => {
            if (!String(error).includes('RESOURCE_ALREADY_EXISTS')) throw error;
            return (
              await http.setupCall<{ experiment: { experiment_id: string } }>(
                'GET',
                `${api}/experiments/get-by-name?experiment_name=${name}`,
              )
            ).experiment.experiment_id;
          },
        );
      const runIds = await mapLimit(
        Array.from({ length: runners }),
        32,
        async () =>
          (
            await http.setupCall<{ run: { info: { run_id: string } } }>('POST', `${api}/runs/create`, {
              experiment_id,
              start_time: Date.now(),
            })
          ).run.info.run_id,
      );
      results.push(
        await ingestPhase(
          `MLflow (${MLFLOW_WORKERS} workers)`,
          runners,
          batch,
          async (i, k) =>
            void (await http.call('POST', `${api}/runs/log-batch`, {
              run_id: runIds[i],
              metrics: pointsOf(k, batch).map((p) => ({
                key: p.key,
                value: p.value,
                timestamp: p.ts,
                step: p.step,
              })),
            })),
          cpu,
          false,
        ),
      );
    }
    return results;
  } finally {
    await cpu.close();
    await http.close();
    await server.process.stop();
    await dropDatabase(db);
    databases.delete(db);
  }
}

interface ReadResult {
  label: string;
  p50: number;
  p95: number;
  points: number;
}

async function timeReads(label: string, count: number, read: () => Promise<number>): Promise<ReadResult> {
  const latencies = new Latencies();
  let points = 0;
  for (let i = 0; i < count && !abort.signal.aborted; i++) {
    const t0 = performance.now();
    points = await read();
    latencies.add(performance.now() - t0);
  }
  const result = { label, p50: latencies.quantile(0.5), p95: latencies.quantile(0.95), points };
  console.log(
    `  ${label}: p50 ${result.p50.toFixed(1)} ms, p95 ${result.p95.toFixed(1)} ms (${points} points)`,
  );
  return result;
}

/**
 * One series of `readPoints` points and one of 1,000, read downsampled through HTTP and, for scale, in SQL.
 */
async function readPhase(): Promise<{ results: ReadResult[]; seedS: number }> {
  const db = await freshDatabase('metrics_read');
  const server: AssayServer = await startAssay(databaseUrl(db));
  const http = new JsonHttp(server.url, 8, { authorization: `Bearer ${server.key}` });
  const direct = await openDatabase({
    databaseUrl: databaseUrl(db),
    dataDir: '',
    statementTimeoutMs: 0,
    idleInTransactionTimeoutMs: 0,
  });
  try {
    const { paths, ids } = await assayRuns(http, 1);
    const run = paths[0]!;
    const t0 = performance.now();
    console.log(`  read: logging ${readPoints.toLocaleString('en-US')} points of one key (1,000 a batch)`);
    await mapLimit(
      Array.from({ length: readPoints / 1000 }, (_, b) => b),
      4,
      async (b) => {
        const metrics = Array.from({ length: 1000 }, (_, i) => {
          const step = b * 1000 + i;
          return { key: 'long', step, value: step === 654_321 ? 1e6 : Math.sin(step / 1000) };
        });
        await http.call('POST', `${run}/metrics`, { metrics });
      },
    );
    await http.call('POST', `${run}/metrics`, {
      metrics: Array.from({ length: 1000 }, (_, step) => ({ key: 'short', step, value: Math.cos(step) })),
    });
    const seedS = (performance.now() - t0) / 1000;
    const get = (key: string) => async () =>
      (await http.call<{ points: unknown[] }>('GET', `${run}/metrics/${key}?max_points=1000`)).points.length;
    const long = await metricRepo.findSeries(direct, ids[0]!, 'long');
    const results = [
      await timeReads(
        `GET ${readPoints.toLocaleString('en-US')}-point series, max_points=1000`,
        readRequests,
        get('long'),
      ),
      await timeReads('GET 1,000-point series, max_points=1000 (baseline)', readRequests, get('short')),
      await timeReads(
        'SQL: bucket extremes from the blocks (the GET’s query)',
        readRequests,
        async () =>
          (await metricRepo.downsample(direct, long!.id, 0, readPoints - 1, 500, metricRepo.COARSE_BLOCKS))
            .length,
      ),
      await timeReads(
        'SQL: bucket extremes from every point (what the blocks avoid)',
        5,
        async () => (await metricRepo.downsample(direct, long!.id, 0, readPoints - 1, 500, undefined)).length,
      ),
    ];
    return { results, seedS };
  } finally {
    await direct.close();
    await http.close();
    await server.process.stop();
    await dropDatabase(db);
    databases.delete(db);
  }
}

/** The server's own view of a window, in words. */
const serverLine = (v: ServerView) =>
  `${v.requests} batches: p50 ${v.p50}, p99 ${v.p99} from arrival to answer (its request histogram); its event-loop delay p99 ${v.lagP99Ms.toFixed(1)} ms, max ${v.lagMaxMs.toFixed(1)} ms`;

const f = (x: number) =>
  Number.isFinite(x) ? (x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(1)) : 'n/a';

async function main(): Promise<void> {
  const started = new Date().toISOString();
  const loadBefore = load();
  console.log(`metrics bench: load average ${loadBefore}; ${await serverFacts()}`);
  const rows: { runners: number; assay: IngestResult[]; mlflow: IngestResult[] | string }[] = [];
  for (const runners of values['skip-ingest'] ? [] : runnerCounts) {
    console.log(`${runners} runners`);
    const assay = await assayIngest(runners);
    const mlflow = await mlflowIngest(runners);
    rows.push({ runners, assay, mlflow });
  }
  console.log('read');
  const read = await readPhase();
  const lines = [
    '## Run metrics',
    '',
    `\`node bench/metrics.ts --runners ${values.runners} --batches ${values.batches} --seconds ${seconds}${pace > 0 ? ` --pace ${pace}` : ''} --read-points ${readPoints}\`, ${started.slice(0, 16)} UTC,`,
    `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}; load average (1/5/15 min) ${loadBefore} at start, ${load()} at the end`,
    `(the machine is shared: ratios within the run count, absolute figures move with the load). MLflow ${await mlflowVersion()}`,
    `with its default ${MLFLOW_WORKERS} workers, \`POST /api/2.0/mlflow/runs/log-batch\`; both on the same PostgreSQL server, each its own database.`,
    pace > 0
      ? `Paced (open loop): each runner sends a batch every ${pace} s, as the client's buffer sends by time (offered: runners × batch / ${pace} points/s); a batch's latency counts from when it was due, so a server falling behind shows in p99. Points/s counts batches answered in the window; batches still open a window later are "unfinished"; a batch holds`
      : 'Closed loop: each runner sends its next batch when the last one answered (points/s counts batches answered in the window; batches still open a window later are "unfinished"); a batch holds',
    `${KEYS} keys × (batch / ${KEYS}) steps. CPU per point is the server's process group and its PostgreSQL backends;`,
    "the client's delay is this load client's own event-loop delay over the window (p99 / max), by which it sent late.",
    '',
    '| runners | batch | target | points/s | p50 / p99 per batch | CPU per point: server + PostgreSQL | errors / unfinished | client delay | ours / MLflow |',
    '| ------: | ----: | ------ | -------: | ------------------: | ---------------------------------: | ------------------: | -----------: | ------------: |',
  ];
  for (const row of rows) {
    for (const a of row.assay) {
      const m = typeof row.mlflow === 'string' ? undefined : row.mlflow.find((x) => x.batch === a.batch);
      for (const r of m ? [a, m] : [a]) {
        lines.push(
          `| ${r.runners} | ${r.batch} | ${r.target} | ${f(r.pointsPerS)} | ${f(r.p50)} / ${f(r.p99)} ms | ${(r.cpu.msPerOp.server * 1000).toFixed(1)} + ${(r.cpu.msPerOp.postgres * 1000).toFixed(1)} µs | ${r.errors} / ${r.unfinished} | ${f(r.clientLag.p99)} / ${f(r.clientLag.max)} ms | ${r === a && m ? `${(a.pointsPerS / m.pointsPerS).toFixed(1)}×` : ''} |`,
        );
      }
      if (!m) lines.push(`| ${row.runners} | ${a.batch} | MLflow | ${String(row.mlflow)} | | | | | |`);
    }
  }
  const inside = rows.flatMap((row) =>
    row.assay.flatMap((a) =>
      a.server
        ? [`- ${a.runners} runners × ${a.batch}-point batches, inside Assay: ${serverLine(a.server)}.`]
        : [],
    ),
  );
  if (inside.length > 0) lines.push('', ...inside);
  lines.push(
    '',
    `Read: one key of ${readPoints.toLocaleString('en-US')} points (logged through the API in ${read.seedS.toFixed(0)} s), ${readRequests} sequential GETs each:`,
    '',
    '| read | p50 | p95 | points answered |',
    '| ---- | --: | --: | --------------: |',
    ...read.results.map((r) => `| ${r.label} | ${f(r.p50)} ms | ${f(r.p95)} ms | ${r.points} |`),
    `| ratio long / 1,000-point series (p95) | | ${(read.results[0]!.p95 / read.results[1]!.p95).toFixed(2)}× | |`,
    '',
  );
  const text = lines.join('\n');
  await mkdir(path.dirname(values.out), { recursive: true });
  await writeFile(values.out, text);
  console.log(`\n${text}\nwritten to ${values.out}`);
}

try {
  await main();
} finally {
  for (const name of databases) await dropDatabase(name).catch(() => {});
}
