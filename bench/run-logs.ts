// Run console logs: N simulated runners each printing L lines/s for T s, shipped as `assay run` ships them
// (one chunk per runner per second holding that second's lines, POST …/runs/{r}/logs) to the service on
// PostgreSQL; then the same volume as metric points through POST …/runs/{r}/metrics, in the same run.
// Reports p50/p99 per request, lines stored against sent (read back: none lost, none twice), service and
// PostgreSQL CPU per 1,000 lines, and the log's size at rest (the figures docs/run-logs.md quotes).
// Prints figures (not a test); loopback only.
// Run: node bench/run-logs.ts [--runners 1000] [--rate 100] [--seconds 60] [--skip-metrics] [--cpu-prof DIR]
import { mkdir, writeFile } from 'node:fs/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startAssay } from './runner-traffic/assay.ts';
import { cpuAccount, cpuSplit, type CpuSplit } from './runner-traffic/cpu-account.ts';
import { JsonHttp, mapLimit } from './runner-traffic/http.ts';
import { createDatabase, databaseUrl, dropDatabase, serverFacts } from './runner-traffic/postgres.ts';
import { Latencies } from './runner-traffic/stats.ts';
import { watchServer, type ServerView } from './support/server-view.ts';

const { values } = parseArgs({
  options: {
    runners: { type: 'string', default: '1000' },
    rate: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '60' },
    'skip-metrics': { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
    out: { type: 'string', default: 'bench/results/run-logs.md' },
  },
});
const runners = Number(values.runners);
const rate = Number(values.rate);
const seconds = Number(values.seconds);
if (
  !(Number.isInteger(runners) && runners >= 1 && runners <= 5000) ||
  !(Number.isInteger(rate) && rate >= 10 && rate <= 1000 && rate % 10 === 0) ||
  !(Number.isInteger(seconds) && seconds >= 2 && seconds <= 600)
)
  throw new Error('--runners 1..5000, --rate 10..1000 (a multiple of 10), --seconds 2..600');

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');

/** What a training script prints: progress lines of ~90 bytes, varied enough not to compress to nothing. */
function lineText(runner: number, seq: number): string {
  const step = seq * 7 + runner;
  const loss = (2.5 / Math.sqrt(1 + step / 50) + Math.random() * 0.01).toFixed(5);
  return `epoch ${Math.floor(step / 5000)} step ${step % 5000}/5000 loss=${loss} lr=3.0e-4 grad_norm=${(Math.random() * 3).toFixed(3)} ${Math.round(Math.random() * 900 + 100)} samples/s`;
}

interface Phase {
  label: string;
  requests: number;
  errors: number;
  retried: number;
  /** From send to answer. */
  p50: number;
  p99: number;
  /** From when the runner's second was over (the chunk was due) to the answer: includes a late client. */
  dueP99: number;
  units: number;
  cpu: CpuSplit;
  server: ServerView | undefined;
  clientLag: { p99: number; max: number };
}

/**
 * Every runner sends one request per second for `seconds`, its first offset over the first second so the
 * runners spread as real ones do; a failed request is resent (as the runner's buffer does) and counted.
 */
async function pacedPhase(
  label: string,
  route: string,
  url: string,
  send: (runner: number, second: number) => Promise<void>,
  cpu: Awaited<ReturnType<typeof cpuAccount>>,
  unitsPerRequest: number,
): Promise<Phase> {
  const latencies = new Latencies();
  const due = new Latencies();
  let errors = 0;
  let retried = 0;
  let firstError: unknown;
  const before = await cpu.snapshot();
  const watching = await watchServer(url, 'POST', route);
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: runners }, async (_, i) => {
      const offset = (1000 * i) / runners;
      for (let s = 0; s < seconds; s++) {
        const dueAt = start + offset + (s + 1) * 1000;
        const wait = dueAt - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        for (let attempt = 0; ; attempt++) {
          const t0 = performance.now();
          try {
            await send(i, s);
            const t1 = performance.now();
            latencies.add(t1 - t0);
            due.add(t1 - dueAt);
            break;
          } catch (error) {
            errors++;
            firstError ??= error;
            if (attempt >= 5) throw error;
            retried++;
            await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** attempt));
          }
        }
      }
    }),
  );
  lag.disable();
  const after = await cpu.snapshot();
  const server = await watching.end();
  if (firstError) console.error(`  ${label}: ${errors} errors, the first: ${String(firstError)}`);
  const units = latencies.count * unitsPerRequest;
  const phase: Phase = {
    label,
    requests: latencies.count,
    errors,
    retried,
    p50: latencies.quantile(0.5),
    p99: latencies.quantile(0.99),
    dueP99: due.quantile(0.99),
    units,
    cpu: cpuSplit(before, after, units / 1000),
    server,
    clientLag: { p99: lag.percentile(99) / 1e6, max: lag.max / 1e6 },
  };
  console.log(
    `  ${label}: ${phase.requests} requests, p50 ${phase.p50.toFixed(1)} ms, p99 ${phase.p99.toFixed(1)} ms (from due ${phase.dueP99.toFixed(1)}), ${errors} errors; per 1,000: server ${phase.cpu.msPerOp.server.toFixed(1)} ms + PostgreSQL ${phase.cpu.msPerOp.postgres.toFixed(1)} ms CPU; cores: server ${phase.cpu.cores.server.toFixed(2)}, PostgreSQL ${phase.cpu.cores.postgres.toFixed(2)}, client ${phase.cpu.cores.client.toFixed(2)}; client delay p99 ${phase.clientLag.p99.toFixed(0)} ms (load ${load()})`,
  );
  console.log(
    `  ${label}, inside the server: p50 ${server.p50}, p99 ${server.p99}; event-loop delay p99 ${server.lagP99Ms.toFixed(1)} ms`,
  );
  return phase;
}

async function startedRuns(http: JsonHttp, name: string): Promise<{ paths: string[]; experimentId: string }> {
  const experiment = await http.call<{ id: string }>('POST', '/experiments', { name });
  await http.call('POST', `/experiments/${experiment.id}/variations`, { config_yaml: 'lr: 0.1\n' });
  await http.call('POST', `/experiments/${experiment.id}/commit`);
  const paths = await mapLimit(Array.from({ length: runners }), 16, async () => {
    const run = await http.call<{ r: number }>('POST', `/experiments/${experiment.id}/variations/1/runs`);
    const p = `/experiments/${experiment.id}/variations/1/runs/${run.r}`;
    await http.call('GET', `${p}/config`);
    await http.call('POST', `${p}/start`, { environment: {} });
    return p;
  });
  return { paths, experimentId: experiment.id };
}

interface Verdict {
  sent: number;
  stored: number;
  distinct: number;
  overlaps: number;
  gaps: number;
  readBack: { runs: number; lines: number; ok: boolean };
  rest: { chunks: number; rawBytes: number; storedBytes: number; tableBytes: number };
}

/** Lines stored against sent, in SQL over every run and through GET for a sample of runs. */
async function verify(
  db: pg.Client,
  http: JsonHttp,
  experimentId: string,
  paths: string[],
): Promise<Verdict> {
  const sent = runners * rate * seconds;
  const { rows } = await db.query<Record<string, string>>(
    `WITH c AS (
       SELECT c.run_id, c.first_seq, c.last_seq, c.raw_bytes, octet_length(c.body) AS stored,
              lag(c.last_seq) OVER (PARTITION BY c.run_id ORDER BY c.first_seq) AS before
         FROM run_log_chunks c JOIN runs r ON r.id = c.run_id WHERE r.experiment_id = $1)
     SELECT count(*) AS chunks, sum(last_seq - first_seq + 1) AS stored_lines,
            count(*) FILTER (WHERE before >= first_seq) AS overlaps,
            count(*) FILTER (WHERE before < first_seq - 1) AS gaps,
            sum(raw_bytes) AS raw_bytes, sum(stored) AS stored_bytes,
            (SELECT sum(l.last_seq) FROM run_logs l JOIN runs r ON r.id = l.run_id WHERE r.experiment_id = $1) AS last_seqs,
            pg_total_relation_size('run_log_chunks') AS table_bytes
       FROM c`,
    [experimentId],
  );
  const row = rows[0]!;
  // Every line of a sample of runs through the API: seqs 1…N once each, in order.
  const sample = paths.filter((_, i) => i % Math.max(1, Math.floor(paths.length / 20)) === 0);
  let lines = 0;
  let ok = true;
  for (const p of sample) {
    let after = 0;
    for (;;) {
      const page = await http.call<{ lines: { seq: number }[]; next_after: number }>(
        'GET',
        `${p}/logs?after=${after}&limit=5000`,
      );
      for (const line of page.lines) {
        if (line.seq !== after + 1) ok = false;
        after = line.seq;
        lines++;
      }
      if (page.lines.length === 0) break;
    }
    if (after !== rate * seconds) ok = false;
  }
  return {
    sent,
    stored: Number(row.stored_lines),
    distinct: Number(row.last_seqs),
    overlaps: Number(row.overlaps),
    gaps: Number(row.gaps),
    readBack: { runs: sample.length, lines, ok },
    rest: {
      chunks: Number(row.chunks),
      rawBytes: Number(row.raw_bytes),
      storedBytes: Number(row.stored_bytes),
      tableBytes: Number(row.table_bytes),
    },
  };
}

const f = (x: number) => (x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(1));

async function main(): Promise<void> {
  const started = new Date().toISOString();
  const loadBefore = load();
  console.log(
    `run-logs bench: ${runners} runners × ${rate} lines/s × ${seconds} s; load ${loadBefore}; ${await serverFacts()}`,
  );
  const name = await createDatabase('run_logs');
  const flags = values['cpu-prof']
    ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(values['cpu-prof'])}`]
    : [];
  const server = await startAssay(databaseUrl(name), flags);
  const http = new JsonHttp(server.url, runners, { authorization: `Bearer ${server.key}` });
  const cpu = await cpuAccount(server.process.pid, name);
  const db = new pg.Client({ connectionString: databaseUrl(name) });
  await db.connect();
  try {
    const logs = await startedRuns(http, 'run-logs bench');
    console.log('logs');
    const t0 = new Date(Date.now()).getTime();
    const logPhase = await pacedPhase(
      'logs',
      '/experiments/:id/variations/:n/runs/:r/logs',
      server.url,
      async (i, s) => {
        const first = s * rate + 1;
        const lines = Array.from({ length: rate }, (_, k) => ({
          stream: (first + k) % 20 === 0 ? 'stderr' : 'stdout',
          time: new Date(t0 + s * 1000 + (k * 1000) / rate).toISOString(),
          text: lineText(i, first + k),
        }));
        await http.call('POST', `${logs.paths[i]}/logs`, { first_seq: first, lines });
      },
      cpu,
      rate,
    );
    const verdict = await verify(db, http, logs.experimentId, logs.paths);
    console.log(`  verdict: ${JSON.stringify(verdict)}`);
    let metricPhase: Phase | undefined;
    if (!values['skip-metrics']) {
      const metrics = await startedRuns(http, 'run-logs bench: metrics');
      console.log('metrics');
      const KEYS = 10;
      metricPhase = await pacedPhase(
        'metrics',
        '/experiments/:id/variations/:n/runs/:r/metrics',
        server.url,
        async (i, s) => {
          const steps = rate / KEYS;
          const metricsBody = [];
          for (let k = 0; k < steps; k++)
            for (let key = 0; key < KEYS; key++)
              metricsBody.push({ key: `metric_${key}`, step: s * steps + k, value: Math.random() });
          await http.call('POST', `${metrics.paths[i]}/metrics`, { metrics: metricsBody });
        },
        cpu,
        rate,
      );
    }
    const v = verdict;
    const none =
      v.stored === v.sent && v.distinct === v.sent && v.overlaps === 0 && v.gaps === 0 && v.readBack.ok;
    const row = (p: Phase, what: string) =>
      `| ${what} | ${p.requests.toLocaleString('en-US')} | ${f(p.p50)} / ${f(p.p99)} ms | ${f(p.dueP99)} ms | ${p.errors} | ${p.cpu.msPerOp.server.toFixed(1)} + ${p.cpu.msPerOp.postgres.toFixed(1)} ms | ${p.cpu.cores.server.toFixed(2)} / ${p.cpu.cores.postgres.toFixed(2)} / ${p.cpu.cores.client.toFixed(2)} | ${p.server?.p99 ?? ''} | ${Math.round(p.cpu.serverWaiting * 100)} % |`;
    const text = [
      `## Run logs: ${runners.toLocaleString('en-US')} runners × ${rate} lines/s × ${seconds} s`,
      '',
      `\`node bench/run-logs.ts --runners ${runners} --rate ${rate} --seconds ${seconds}\`, ${started.slice(0, 16)} UTC; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'},`,
      `load average (1/5/15 min) ${loadBefore} at start, ${load()} at the end (the machine is shared: the load client, the service and PostgreSQL`,
      `on the same cores). ${runners} runners each print ${rate} lines/s (~${Math.round(v.rest.rawBytes / v.stored)} bytes a line) for ${seconds} s and send one chunk a second,`,
      `as \`assay run\` does; then the same volume as metric points (${rate / 10} steps × 10 keys a second per runner). Latency from send to answer,`,
      "and from when the chunk was due (a late load client shows there); CPU per 1,000 lines (or points): the service's process group and its PostgreSQL backends;",
      'the last column is the share of the time the service was runnable that it waited for a core (the machine’s other jobs).',
      '',
      '| phase | requests | p50 / p99 per request | p99 from due | errors | CPU per 1,000: service + PostgreSQL | cores: service / PostgreSQL / client | server p99 (histogram) | service waiting for a core |',
      '| ----- | -------: | --------------------: | -----------: | -----: | ----------------------------------: | -----------------------------------: | ---------------------: | -------------------------: |',
      row(logPhase, `logs, ${rate}-line chunks`),
      ...(metricPhase ? [row(metricPhase, `metrics, ${rate}-point batches`)] : []),
      '',
      `Lines: ${v.sent.toLocaleString('en-US')} sent, ${v.stored.toLocaleString('en-US')} stored (${v.distinct.toLocaleString('en-US')} by the runs' last seqs), ${v.overlaps} overlapping and ${v.gaps} missing ranges; ${v.readBack.runs} runs read back through \`GET …/logs\` (${v.readBack.lines.toLocaleString('en-US')} lines): ${v.readBack.ok ? 'seqs 1…N once each, in order' : 'NOT in order or incomplete'}. **${none ? 'No line lost or duplicated.' : 'Lines lost or duplicated.'}**`,
      `At rest: ${v.rest.chunks.toLocaleString('en-US')} chunk rows, ${(v.rest.rawBytes / 1e6).toFixed(1)} MB of text deflated to ${(v.rest.storedBytes / 1e6).toFixed(1)} MB (${(v.rest.rawBytes / v.rest.storedBytes).toFixed(1)}×, ${(v.rest.storedBytes / v.stored).toFixed(1)} bytes a line); the table with its index and TOAST ${(v.rest.tableBytes / 1e6).toFixed(1)} MB.`,
      `**Goal p99 ≤ 100 ms per chunk: ${logPhase.p99 <= 100 ? 'met' : 'not met'}** (${f(logPhase.p99)} ms).`,
      '',
    ].join('\n');
    await mkdir(path.dirname(values.out), { recursive: true });
    await writeFile(values.out, text);
    console.log(`\n${text}\nwritten to ${values.out}`);
  } finally {
    await db.end();
    await cpu.close();
    await http.close();
    await server.process.stop();
    await dropDatabase(name).catch(() => {});
  }
}

await main();
