// Early stopping on the metrics write path: what a sweep run's batch costs when it holds the objective and the
// sweep's pruner is asked (asha, hyperband, median), against the same batches of runs of no sweep and of a
// sweep without early stopping. One service in this process on PostgreSQL, driven with app.inject one batch at
// a time (the service's own time, no HTTP, no contention); sweeps of 4 lanes as a sweep runs them, each run
// logging val_loss and 9 other keys a step, stopped runs reporting abandoned, finished ones succeeding.
// Run: node bench/early-stopping.ts [--trials 32] [--steps 20] [--rounds 2]
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { EarlyStopping } from '@assay/contract';
import { generateOrchestratorKey } from '../src/server/orchestration/orchestrator-keys.ts';
import { FakeOrchestrator } from '../test/support/fake-orchestrator.ts';
import { addVariation, createExperiment, createRun } from '../test/support/fixtures.ts';
import { startTestService, type TestService } from '../test/support/service.ts';
import { sweepWithStopping, type SweepRunRef } from '../test/support/stopping-sweeps.ts';
import { workerKeyThroughExchange } from '../test/support/worker-key-exchange.ts';
import { Latencies } from './runner-traffic/stats.ts';

const { values } = parseArgs({
  options: {
    trials: { type: 'string', default: '32' },
    steps: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '2' },
    out: { type: 'string', default: 'bench/results/early-stopping.md' },
  },
});
const trials = Number(values.trials);
const steps = Number(values.steps);
const rounds = Number(values.rounds);
const LANES = 4;

type Phase = 'no sweep' | 'sweep, no early stopping' | EarlyStopping['kind'];
const STOPPING: Record<Phase, EarlyStopping | null> = {
  'no sweep': null,
  'sweep, no early stopping': null,
  asha: { kind: 'asha', min_step: 1, reduction_factor: 3 },
  hyperband: { kind: 'hyperband', min_step: 1, max_step: steps, reduction_factor: 3 },
  median: { kind: 'median', startup_trials: 5 },
};

const orchestratorKey = generateOrchestratorKey();
const fake = new FakeOrchestrator();
const t: TestService = await startTestService({
  orchestrator: fake,
  env: { ASSAY_ORCHESTRATOR_KEY: orchestratorKey, ASSAY_LOG_LEVEL: 'warn' },
});
const owner = await t.createUser();
const notices = (workflowId: string) =>
  fake.callsOf<string>('notifyRunChanged').filter((id) => id === workflowId).length;

/** Runs of no sweep, started by their owner (their batches never reach a pruner). */
async function plainRuns(): Promise<{ path: string; key: string; workflowId: null }[]> {
  const experiment = await createExperiment(t, owner.key, { name: 'no sweep' });
  for (let i = 0; i < trials; i++) await addVariation(t, owner.key, experiment.id, `lr: ${i}\n`);
  await t.as(owner.key).post(`/experiments/${experiment.id}/commit`);
  return Promise.all(
    Array.from({ length: trials }, async (_, i) => ({
      path: (await createRun(t, owner.key, experiment.id, i + 1)).path,
      key: owner.key,
      workflowId: null,
    })),
  );
}

async function startSweepRun(run: SweepRunRef) {
  const { key } = await workerKeyThroughExchange(t, orchestratorKey, run.id);
  return { path: run.path, key, workflowId: run.workflowId };
}

/** One phase: the trials in lanes; every batch timed; a stopped run ends abandoned, a full one succeeds. */
async function phase(name: Phase, timed: { latencies: Latencies; sum: number }): Promise<number> {
  const runs =
    name === 'no sweep'
      ? await plainRuns()
      : await Promise.all(
          (await sweepWithStopping(t, owner, STOPPING[name], trials)).runs.map(startSweepRun),
        );
  let stopped = 0;
  let next = 0;
  const active: { run: (typeof runs)[number]; step: number; quality: number; told: number }[] = [];
  while (next < runs.length || active.length > 0) {
    while (active.length < LANES && next < runs.length) {
      const run = runs[next++]!;
      await t.as(run.key).get(`${run.path}/config`);
      await t.as(run.key).post(`${run.path}/start`, {});
      active.push({
        run,
        step: 0,
        quality: Math.random(),
        told: run.workflowId ? notices(run.workflowId) : 0,
      });
    }
    for (const lane of [...active]) {
      const { run, step, quality } = lane;
      const loss = quality + 1 / (step + 1) + Math.random() * 0.05;
      const metrics = [{ key: 'val_loss', step, value: loss }];
      for (let k = 1; k < 10; k++) metrics.push({ key: `metric_${k}`, step, value: loss * k });
      const began = performance.now();
      const res = await t.as(run.key).post(`${run.path}/metrics`, { metrics });
      const took = performance.now() - began;
      timed.latencies.add(took);
      timed.sum += took;
      if (res.status !== 200) throw new Error(`metrics: ${res.status} ${JSON.stringify(res.body)}`);
      lane.step += 1;
      const stop = run.workflowId !== null && notices(run.workflowId) > lane.told;
      if (!stop && lane.step < steps) continue;
      if (stop) stopped += 1;
      const end = stop ? { reason: 'abandoned' } : undefined;
      await t.as(run.key).post(`${run.path}/${stop ? 'fail' : 'succeed'}`, end);
      active.splice(active.indexOf(lane), 1);
    }
  }
  return stopped;
}

const phases = Object.keys(STOPPING) as Phase[];
const results = new Map(phases.map((p) => [p, { latencies: new Latencies(), sum: 0, stopped: 0 }]));
const loadAtStart = os.loadavg();
for (let round = 0; round < rounds; round++)
  for (const name of phases) {
    const r = results.get(name)!;
    const before = r.latencies.count;
    r.stopped += await phase(name, r);
    process.stdout.write(`round ${round + 1} ${name}: ${r.latencies.count - before} batches\n`);
  }
const loadAtEnd = os.loadavg();
await t.close();

const ms = (x: number) => `${x.toFixed(2)} ms`;
const mean = (r: { latencies: Latencies; sum: number }) => r.sum / r.latencies.count;
const baseline = mean(results.get('no sweep')!);
const rows = phases.map((name) => {
  const r = results.get(name)!;
  const { latencies: l, stopped } = r;
  const m = mean(r);
  return `| ${name} | ${l.count} | ${stopped} | ${ms(l.quantile(0.5))} | ${ms(l.quantile(0.99))} | ${ms(m)} | ${name === 'no sweep' ? '' : `${m - baseline >= 0 ? '+' : ''}${ms(m - baseline)}`} |`;
});
const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');
const command = `node bench/early-stopping.ts --trials ${trials} --steps ${steps} --rounds ${rounds}`;
const block = `## Early stopping on the metrics write path

\`${command}\`, ${new Date().toISOString().slice(0, 16)} UTC, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'};
load average ${load(loadAtStart)} at start, ${load(loadAtEnd)} at the end (a shared machine: compare rows, not runs).
One service in process on PostgreSQL, driven with app.inject one batch at a time; ${trials} trials a sweep in ${LANES}
lanes, ${steps} steps, a batch of val_loss (the objective) and 9 other keys per step; ${rounds} rounds, phases alternated.
"Stopped" counts runs the pruner stopped; their later steps are not logged, as a stopped program logs no more.

| phase | batches | stopped | p50 | p99 | mean | mean − no sweep |
| --- | --: | --: | --: | --: | --: | --: |
${rows.join('\n')}
`;
await mkdir(path.dirname(values.out), { recursive: true });
await writeFile(values.out, block);
process.stdout.write(`${block}\nwritten to ${values.out}\n`);
