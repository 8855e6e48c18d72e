// Managed runs at scale, on the `local` provider and a Temporal dev server, each figure beside a baseline
// measured in the same run:
// - a sweep of 200 trivial runs (`true`), concurrency 16: wall time, runs/s, orchestration overhead per run
//   and history events per run, against workflows of six no-op activities;
// - a sweep of 8 × `sleep 1`, concurrency 4, create → done, with production saga timings, against its ideal
//   (two waves of 1 s);
// - `assay run`'s start-up: instance spawned → run started as the service saw it, and `assay run -- true`'s
//   whole lifecycle against `node -e 0`.
// Each sweep runs on the slot runners (long-lived `assay run`s, the default) and, as the before, on a runner
// spawned per run (ASSAY_LOCAL_RUNNER=spawn), with the ratio of the two.
// Run: node bench/managed-runs.ts [--runs 200] [--concurrency 16] [--rounds 3] [--sweep | --guard]
// (--sweep: the small sweep and the start-up only, printed and not written; --guard: 40 runs at concurrency 8,
// one small sweep and the one-run latency on slot runners, then the guard lines)
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import { NativeConnection } from '@temporalio/worker';
import { stringify } from 'yaml';
import { buildRunner } from '../scripts/build-runner.ts';
import { freshRunnerBundle } from '../src/compute/runner-bundle.ts';
import { orchestratorConfig } from '../src/orchestrator/orchestrator-config.ts';
import { startOrchestration, startTemporal, type Orchestration } from '../test/support/orchestration.ts';
import { printGuard, type Guard } from './support/guard.ts';
import { publish } from './support/report.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '16' },
    baseline: { type: 'string', default: '64' },
    rounds: { type: 'string', default: '3' },
    sweep: { type: 'boolean', default: false },
    guard: { type: 'boolean', default: false },
  },
});
const guard = values.guard;
const runs = guard ? 40 : Number(values.runs);
const concurrency = guard ? 8 : Number(values.concurrency);
const baselineCount = guard ? 40 : Number(values.baseline);
const rounds = guard ? 1 : Number(values.rounds);
const sweepOnly = values.sweep;
// The before (a runner spawned per run) beside the after (slot runners), except in the short modes.
const runnerKinds: Runners[] = guard ? ['slots'] : ['slots', 'spawn'];
type Runners = 'slots' | 'spawn';

const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error };
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ');
const repoRoot = path.resolve(import.meta.dirname, '..');

/** Fields 3… of /proc/<pid>/stat; undefined without /proc. */
function procStat(pid: number | 'self'): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds used so far by this process (the service and the worker), by its children it has reaped (the
 * runners, with the probes and commands they waited for) and by its Temporal dev server (a child still
 * running). PostgreSQL serves other clients too, so its share is left out. Undefined without /proc.
 */
function cpuNow(): { service: number; runners: number; temporal: number } | undefined {
  const self = procStat('self');
  if (!self) return undefined;
  const tick = 100; // USER_HZ on Linux
  let temporal = 0;
  // Slot runners live on between readings: their CPU so far (and their reaped commands') counts as the runners'.
  let slots = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = procStat(Number(entry));
    let name = '';
    try {
      name = readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    if (fields?.[1] !== String(process.pid)) continue;
    if (name.startsWith('temporal')) temporal += (Number(fields[11]) + Number(fields[12])) / tick;
    else slots += (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / tick;
  }
  return {
    service: (Number(self[11]) + Number(self[12])) / tick,
    runners: (Number(self[13]) + Number(self[14])) / tick + slots,
    temporal,
  };
}

/** CPU ms per run between two readings: runner and its programs / service and worker / Temporal. */
function cpuPerRun(
  before: ReturnType<typeof cpuNow>,
  after: ReturnType<typeof cpuNow>,
  count: number,
): string {
  if (!before || !after) return 'n/a (no /proc)';
  const per = (k: 'service' | 'runners' | 'temporal') => ((1000 * (after[k] - before[k])) / count).toFixed(0);
  const total =
    (1000 *
      (after.service + after.runners + after.temporal - before.service - before.runners - before.temporal)) /
    count;
  return `${total.toFixed(0)} ms: runner and its programs ${per('runners')}, service and worker ${per('service')}, Temporal ${per('temporal')}`;
}

/**
 * Instance spawned (the local provider's record) → run started (the service's clock, same machine), per run.
 */
async function runnerStartups(world: Orchestration, started: Map<string, string>): Promise<number[]> {
  const state = JSON.parse(
    await readFile(path.join(world.stateDir, 'local-instances.json'), 'utf8'),
  ) as Record<string, { startedAt: string }>;
  return [...started].flatMap(([workflowId, startedAt]) =>
    state[workflowId] ? [Date.parse(startedAt) - Date.parse(state[workflowId].startedAt)] : [],
  );
}

async function sweepOf(world: Orchestration, command: string, count: number, lanes: number) {
  const user = await world.svc.createUser();
  const api = world.svc.as(user.key);
  const experiment = await api.post('/experiments', { name: 'bench sweep', organization_id: 'personal' });
  const cpu0 = cpuNow();
  const t0 = performance.now();
  const sweep = await api.post(`/experiments/${experiment.body.id}/sweeps`, {
    base_yaml: stringify({ seed: 0, launch: { command } }),
    list: Array.from({ length: count }, (_, i) => ({ seed: i })),
    concurrency: lanes,
  });
  if (sweep.status !== 202) throw new Error(`sweep: ${sweep.status} ${JSON.stringify(sweep.body)}`);
  const summary = await world.env.client.workflow.getHandle(sweep.body.workflow_id).result();
  const wallMs = performance.now() - t0;
  const cpu = cpuPerRun(cpu0, cpuNow(), count);
  const overheads: number[] = [];
  const commandMs: number[] = [];
  const events: number[] = [];
  const latencies: number[] = [];
  const started = new Map<string, string>();
  for (const run of sweep.body.runs) {
    const description = await world.env.client.workflow.getHandle(run.workflow_id).describe();
    const detail = (await api.get(`/experiments/${experiment.body.id}/variations/${run.n}/runs/${run.r}`))
      .body;
    // The saga's span (workflow start → close) minus the command's span as the service saw it (start → end).
    const sagaMs = description.closeTime!.getTime() - description.startTime.getTime();
    const ranMs = Date.parse(detail.ended_at) - Date.parse(detail.started_at);
    commandMs.push(ranMs);
    overheads.push(sagaMs - ranMs);
    // Provisioned (the saga's start) → succeeded, as the service recorded it.
    latencies.push(Date.parse(detail.ended_at) - description.startTime.getTime());
    events.push(description.historyLength);
    started.set(run.workflow_id, detail.started_at);
  }
  const sweepEvents = (await world.env.client.workflow.getHandle(sweep.body.workflow_id).describe())
    .historyLength;
  return {
    summary,
    wallMs,
    cpu,
    overheads,
    commandMs,
    events,
    latencies,
    sweepEvents,
    startups: await runnerStartups(world, started),
  };
}

/** Median wall time of `argv` over `times` sequential runs. */
async function medianWall(argv: string[], env: NodeJS.ProcessEnv, times: number): Promise<number> {
  const walls: number[] = [];
  for (let i = 0; i < times; i++) {
    const t0 = performance.now();
    await promisify(execFile)(argv[0]!, argv.slice(1), { env, cwd: os.tmpdir() });
    walls.push(performance.now() - t0);
  }
  return pct(walls, 50);
}

/**
 * `assay run -- true` as a researcher runs it (creates a run, config, start, succeed) against `node -e 0`.
 */
async function assayRunWall(world: Orchestration) {
  const user = await world.svc.createUser();
  const api = world.svc.as(user.key);
  const experiment = await api.post('/experiments', { name: 'bench startup', organization_id: 'personal' });
  const variation = await api.post(`/experiments/${experiment.body.id}/variations`, {
    config_yaml: stringify({ seed: 0 }),
  });
  await api.post(`/experiments/${experiment.body.id}/commit`);
  const env = {
    PATH: process.env.PATH,
    HOME: os.tmpdir(),
    SERVICE_SERVER_URL: world.svc.url!,
    SERVICE_API_KEY: user.key,
  };
  const assay = [process.execPath, path.join(repoRoot, 'bin/assay.js')];
  const ids = ['--experiment', experiment.body.id, '--variation', String(variation.body.n)];
  return {
    nodeMs: await medianWall([process.execPath, '-e', '0'], env, 7),
    runMs: await medianWall([...assay, 'run', ...ids, '--', 'true'], env, 7),
  };
}

// The instances run `assay run` from its bundle, as after `npm run build` (src/compute/runner-bundle.ts).
// The instances run `assay run` from its bundle, as after `npm run build` (src/compute/runner-bundle.ts).
await buildRunner();
const runner = freshRunnerBundle() ? 'from its bundle (dist/runner)' : 'from the sources';
const loadAtStart = load();
const env = await startTemporal();
const lines: string[] = [];
const guards: Guard[] = [];
const label = (kind: Runners) => (kind === 'slots' ? 'slot runners' : 'a runner spawned per run (before)');
let world: Orchestration | undefined;
try {
  if (!sweepOnly) {
    // --- Baseline: six no-op activities per workflow, same server, same concurrency. ---
    const baselineQueue = `assay-bench-baseline-${Date.now()}`;
    const connection = await NativeConnection.connect({ address: env.address });
    const baselineWorker = await Worker.create({
      connection,
      taskQueue: baselineQueue,
      workflowBundle: await bundleWorkflowCode({
        workflowsPath: path.join(import.meta.dirname, 'support/baseline-workflows.ts'),
        logger: quiet,
      }),
      activities: { nothing: async () => undefined },
    });
    const baselineRun = baselineWorker.run();
    const baselineLatencies: number[] = [];
    const baselineStart = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < baselineCount) {
          const i = next++;
          const t0 = performance.now();
          await env.client.workflow.execute('sixNoOps', {
            taskQueue: baselineQueue,
            workflowId: `baseline-${i}-${Date.now()}`,
          });
          baselineLatencies.push(performance.now() - t0);
        }
      }),
    );
    const baselineWall = performance.now() - baselineStart;
    baselineWorker.shutdown();
    await baselineRun;
    await connection.close();
    const baselinePerS = baselineCount / (baselineWall / 1000);

    const perS: Partial<Record<Runners, number>> = {};
    const overheadP50: Partial<Record<Runners, number>> = {};
    for (const kind of runnerKinds) {
      // Production timings except the poll: 1 s instead of 5 s, as the first measurements of this bench were
      // taken.
      world = await startOrchestration({
        env,
        runners: kind,
        saga: { pollMs: 1_000, startTimeoutMs: 300_000, silenceTimeoutMs: 300_000, outputsTimeoutMs: 60_000 },
      });
      await world.startWorker();
      const big = await sweepOf(world, 'true', runs, concurrency);
      await world.close();
      world = undefined;
      const runsPerS = runs / (big.wallMs / 1000);
      perS[kind] = runsPerS;
      overheadP50[kind] = pct(big.overheads, 50);
      lines.push(
        `| Sweep of ${runs} × \`true\`, concurrency ${concurrency} (poll 1 s), on ${label(kind)}: outcome | ${big.summary.succeeded} succeeded, ${big.summary.failed} failed |`,
        `| Wall time | ${(big.wallMs / 1000).toFixed(1)} s |`,
        `| Runs/s against the baseline's workflows/s | ${runsPerS.toFixed(2)} vs ${baselinePerS.toFixed(1)} (${((100 * runsPerS) / baselinePerS).toFixed(0)} %) |`,
        `| Runner's own span per run (start → succeed, as the service saw it) | mean ${mean(big.commandMs).toFixed(0)} ms |`,
        `| Orchestration overhead per run (saga span − runner span) | p50 ${pct(big.overheads, 50).toFixed(0)} ms, p95 ${pct(big.overheads, 95).toFixed(0)} ms, mean ${mean(big.overheads).toFixed(0)} ms |`,
        `| Runner start-up at concurrency ${concurrency} (instance spawned, or run handed to its slot → run started) | p50 ${pct(big.startups, 50).toFixed(0)} ms, p95 ${pct(big.startups, 95).toFixed(0)} ms |`,
        `| History events per run | p50 ${pct(big.events, 50)}, max ${Math.max(...big.events)}; the sweep itself ${big.sweepEvents} |`,
        `| CPU per managed run (PostgreSQL not counted) | ${big.cpu} |`,
        `| Ratio: overhead per run / baseline workflow (p50) | ${(pct(big.overheads, 50) / pct(baselineLatencies, 50)).toFixed(1)}× |`,
      );
    }
    lines.push(
      `| Baseline: workflow of six no-op activities, ${baselineCount} at concurrency ${concurrency} | p50 ${pct(baselineLatencies, 50).toFixed(0)} ms, ${baselinePerS.toFixed(1)} workflows/s |`,
    );
    if (perS.slots && perS.spawn)
      lines.push(
        `| Slot runners against a runner spawned per run (after / before) | runs/s ${(perS.slots / perS.spawn).toFixed(2)}×; overhead p50 ${(overheadP50.slots! / overheadP50.spawn!).toFixed(2)}× |`,
      );
    guards.push({
      name: 'managed-runs/runs-per-s',
      ratio: perS.slots! / baselinePerS,
      higherIsBetter: true,
      what: `managed runs/s of \`true\` on slot runners ÷ no-op workflows/s, ${runs} at concurrency ${concurrency}`,
    });
  }

  // --- 8 × `sleep 1`, concurrency 4, with the production saga timings (poll 5 s); then one run at a time. ---
  const sweepWall: Partial<Record<Runners, number>> = {};
  for (const kind of sweepOnly ? (['slots'] as Runners[]) : runnerKinds) {
    world = await startOrchestration({ env, runners: kind, saga: orchestratorConfig({}).saga });
    await world.startWorker();
    const walls: number[] = [];
    const overheads: number[] = [];
    const events: number[] = [];
    const startups: number[] = [];
    const cpus: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const small = await sweepOf(world, 'sleep 1', 8, 4);
      cpus.push(small.cpu);
      if (small.summary.succeeded !== 8) throw new Error(`sweep: ${JSON.stringify(small.summary)}`);
      walls.push(small.wallMs);
      overheads.push(...small.overheads);
      events.push(...small.events);
      startups.push(...small.startups);
    }
    // One run at a time: 5 × `true` at concurrency 1, provisioned → succeeded.
    const single = await sweepOf(world, 'true', 5, 1);
    sweepWall[kind] = pct(walls, 50);
    lines.push(
      `| Sweep of 8 × \`sleep 1\`, concurrency 4 (production timings, poll 5 s), create → done, ${rounds} rounds, on ${label(kind)} | median ${(pct(walls, 50) / 1000).toFixed(1)} s (${walls.map((w) => (w / 1000).toFixed(1)).join(', ')}) |`,
      `| Its ideal (two waves of 1 s) | 2.0 s (ratio ${(pct(walls, 50) / 2000).toFixed(1)}×) |`,
      `| Its runs: orchestration overhead, runner start-up (spawned or handed → started), history events | overhead p50 ${pct(overheads, 50).toFixed(0)} ms; start-up p50 ${pct(startups, 50).toFixed(0)} ms; events p50 ${pct(events, 50)}, max ${Math.max(...events)} |`,
      `| Its CPU per managed run (PostgreSQL not counted), last round | ${cpus.at(-1)} |`,
      `| One run at a time (\`true\`, provisioned → succeeded), 5 runs | median ${pct(single.latencies, 50).toFixed(0)} ms (${single.latencies.map((l) => l.toFixed(0)).join(', ')}) |`,
    );
    if (kind === 'slots' && !guard) {
      const wall = await assayRunWall(world);
      lines.push(
        `| \`assay run -- true\` (whole lifecycle against the service) vs \`node -e 0\`, medians of 7 | ${wall.runMs.toFixed(0)} ms vs ${wall.nodeMs.toFixed(0)} ms |`,
      );
    }
    await world.close();
    world = undefined;
  }
  if (sweepWall.slots && sweepWall.spawn)
    lines.push(
      `| Small sweep on slot runners against a runner spawned per run (after / before) | ${(sweepWall.slots / sweepWall.spawn).toFixed(2)}× |`,
    );
  guards.push({
    name: 'managed-runs/sweep-wall',
    ratio: sweepWall.slots! / 2000,
    higherIsBetter: false,
    what: 'wall time of 8 × `sleep 1` at concurrency 4 (production saga timings) ÷ its ideal, 2 s',
  });
} finally {
  await world?.close();
  await env.teardown();
}

const text = [
  `## Managed runs (\`node bench/managed-runs.ts --runs ${runs} --concurrency ${concurrency} --rounds ${rounds}${guard ? ' --guard' : ''}\`)`,
  '',
  `Machine: ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.cpus()[0]?.model ?? ''}; ${new Date().toISOString().slice(0, 10)}; load average (1/5/15 min) ${loadAtStart} at start, ${load()} at end; Temporal CLI dev server, worker in the benchmark's process, \`local\` provider (no sandbox), commands under \`assay run\` ${runner}.`,
  '',
  '| Figure | Value |',
  '|---|---|',
  ...lines,
  '',
  "The overhead includes starting the run's runner (spawned: a Node process running `assay run`; slot runners: a line to a long-lived one), the runner's key exchange, config read and start, and concluding (outputs, terminating the instance, revoking the key).",
  '',
].join('\n');
if (sweepOnly || guard) process.stdout.write(`${text}\n`);
else await publish('managed-runs', text);
if (guard) for (const g of guards) printGuard(g);
