// Cancel → SIGTERM: how long after `POST …/runs/{r}/cancel` is sent the program under `assay run` gets SIGTERM
// (the program writes the moment it got it), p50/p95 over N runs (goal p95 ≤ 2 s), each path measured in the
// same run against the same `assay server` on PostgreSQL:
// - the control long-poll, one run at a time;
// - the control long-poll, N runs cancelled at once (a sweep's cancel);
// - the heartbeat only (the default 30 s interval; every control poll cut off by a proxy), N runs at once,
//   each cancelled at a random moment of its heartbeat cycle: the path before the long-poll.
// Run: node bench/cancel-latency.ts [--runs 20] [--heartbeat 30]
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '../src/client/index.ts';
import { startRecordingProxy } from '../test/support/recording-proxy.ts';
import { startBenchService, type BenchService } from './support/bench-service.ts';
import { machine, ms, options, publish, quantile, table } from './support/report.ts';

const opts = options(process.argv.slice(2), { runs: 20, heartbeat: 30 });
const repoRoot = path.resolve(import.meta.dirname, '..');
// The program: says it started, and on SIGTERM writes the moment it got it, then exits as a program that
// checkpoints and stops would.
const PROGRAM = `
const fs = require('node:fs');
const dir = process.argv[1];
process.on('SIGTERM', () => { fs.writeFileSync(dir + '/term', String(Date.now())); process.exit(143); });
fs.writeFileSync(dir + '/started', '');
setInterval(() => {}, 1000);`;

interface Sample {
  latencyMs: number;
  failureReason: string | null;
}

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(20)) {
    const value = await check();
    if (value !== undefined) return value;
  }
  throw new Error(`timed out waiting for ${what}`);
}

const readOr = (file: string) => readFile(file, 'utf8').catch(() => undefined);

/** One run under `assay run`: started, cancelled `delayMs` after its program started, SIGTERM timed. */
async function cancelOne(
  service: BenchService,
  client: Client,
  experimentId: string,
  serverUrl: string,
  delayMs: number,
): Promise<Sample> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'assay-cancel-bench-'));
  try {
    const run = await client.runs.create(experimentId, 1);
    const runner = spawn(
      process.execPath,
      [
        path.join(repoRoot, 'bin/assay.js'),
        'run',
        ...['--experiment', experimentId, '--variation', '1', '--run', String(run.r)],
        ...['--heartbeat-interval', String(opts.heartbeat), '--outputs', path.join(dir, 'outputs')],
        '--',
        process.execPath,
        '-e',
        PROGRAM,
        dir,
      ],
      {
        cwd: dir,
        stdio: 'ignore',
        env: {
          PATH: process.env.PATH,
          HOME: dir,
          SERVICE_SERVER_URL: serverUrl,
          SERVICE_API_KEY: service.key,
        },
      },
    );
    const exited = new Promise<void>((resolve) => runner.once('exit', () => resolve()));
    await until('the program to start', () => readOr(path.join(dir, 'started')));
    await sleep(delayMs);
    const cancelledAt = Date.now();
    await client.runs.cancel(experimentId, 1, run.r);
    const termAt = Number(await until('SIGTERM', () => readOr(path.join(dir, 'term')), 120_000));
    await exited;
    const ended = await client.runs.get(experimentId, 1, run.r);
    return { latencyMs: termAt - cancelledAt, failureReason: ended.failure_reason };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function row(name: string, samples: Sample[]): string[] {
  const latencies = samples.map((s) => s.latencyMs);
  const abandoned = samples.filter((s) => s.failureReason === 'abandoned').length;
  return [
    name,
    String(samples.length),
    ms(quantile(latencies, 0.5)),
    ms(quantile(latencies, 0.95)),
    ms(Math.max(...latencies)),
    `${abandoned}/${samples.length}`,
  ];
}

const service = await startBenchService('cancel');
const client = new Client({ serverUrl: service.url, apiKey: service.key });
// Every control poll cut off: the runner's only news of a cancel is its heartbeat, as before the long-poll.
const heartbeatOnly = await startRecordingProxy(service.url, {
  intercept: (req) => (req.url?.includes('/control') ? 'reset' : undefined),
});
try {
  const experiment = await client.experiments.create({ name: 'cancel latency' });
  await client.variations.create(experiment.id, { configYaml: 'lr: 0.1\n' });
  await client.experiments.commit(experiment.id);
  const jitter = () => 300 + Math.random() * 700;

  const oneAtATime: Sample[] = [];
  for (let i = 0; i < opts.runs; i++)
    oneAtATime.push(await cancelOne(service, client, experiment.id, service.url, jitter()));
  console.log(
    `long-poll, one at a time: p95 ${ms(
      quantile(
        oneAtATime.map((s) => s.latencyMs),
        0.95,
      ),
    )} ms`,
  );

  const together = await Promise.all(
    Array.from({ length: opts.runs }, () => cancelOne(service, client, experiment.id, service.url, 1000)),
  );
  console.log(
    `long-poll, together: p95 ${ms(
      quantile(
        together.map((s) => s.latencyMs),
        0.95,
      ),
    )} ms`,
  );

  const baseline = await Promise.all(
    Array.from({ length: opts.runs }, () =>
      cancelOne(
        service,
        client,
        experiment.id,
        heartbeatOnly.url,
        300 + Math.random() * opts.heartbeat * 1000,
      ),
    ),
  );
  const rows = [
    row('control long-poll, one run at a time', oneAtATime),
    row(`control long-poll, ${opts.runs} runs cancelled together`, together),
    row(
      `heartbeat only (every ${opts.heartbeat} s), ${opts.runs} runs, cancels spread over a cycle`,
      baseline,
    ),
  ];
  const p95 = quantile(
    oneAtATime.map((s) => s.latencyMs),
    0.95,
  );
  await publish(
    'cancel-latency',
    [
      '## Cancel → SIGTERM',
      '',
      `\`node bench/cancel-latency.ts --runs ${opts.runs} --heartbeat ${opts.heartbeat}\`, ${new Date().toISOString().slice(0, 16)} UTC; ${machine()}.`,
      '`assay run` (bin/assay.js) against `assay server` on PostgreSQL, both on this machine; latency from the moment',
      'the cancel request is sent to the moment the program (a Node script) recorded SIGTERM.',
      '',
      table(['Path', 'Runs', 'p50 ms', 'p95 ms', 'max ms', 'failed abandoned'], rows),
      '',
      `**Goal p95 ≤ 2 s: ${p95 <= 2000 ? 'met' : 'not met'}** (${ms(p95)} ms one at a time).`,
    ].join('\n'),
  );
} finally {
  client.close();
  await heartbeatOnly.close();
  await service.stop();
}
