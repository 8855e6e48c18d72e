// Managed runs at scale: a sweep of 200 trivial runs on the `local` provider, concurrency 16, on a Temporal dev
// server; wall time, orchestration overhead per run and history events per run, against a same-run baseline
// (workflows of six no-op activities). `node bench/managed-runs.ts [--runs 200] [--concurrency 16]`
import { writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import { NativeConnection } from '@temporalio/worker';
import { stringify } from 'yaml';
import { startOrchestration } from '../test/support/orchestration.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '16' },
    baseline: { type: 'string', default: '64' },
  },
});
const runs = Number(values.runs);
const concurrency = Number(values.concurrency);
const baselineCount = Number(values.baseline);

const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error };
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

// Production timings except the poll: 1 s instead of 5 s, so a trivial run is not dominated by waiting for a poll.
const world = await startOrchestration({
  saga: { pollMs: 1_000, startTimeoutMs: 300_000, silenceTimeoutMs: 300_000, outputsTimeoutMs: 60_000 },
});
try {
  // --- Baseline: six no-op activities per workflow, same server, same concurrency. ---
  const baselineQueue = `${world.taskQueue}-baseline`;
  const connection = await NativeConnection.connect({ address: world.env.address });
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
        await world.env.client.workflow.execute('sixNoOps', {
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

  // --- The sweep. ---
  await world.startWorker();
  const user = await world.svc.createUser();
  const api = world.svc.as(user.key);
  const experiment = await api.post('/experiments', { name: 'bench sweep', organization_id: 'personal' });
  const list = Array.from({ length: runs }, (_, i) => ({ seed: i }));
  const t0 = performance.now();
  const sweep = await api.post(`/experiments/${experiment.body.id}/sweeps`, {
    base_yaml: stringify({ seed: 0, launch: { command: 'true' } }),
    list,
    concurrency,
  });
  if (sweep.status !== 202) throw new Error(`sweep: ${sweep.status} ${JSON.stringify(sweep.body)}`);
  const summary = await world.env.client.workflow.getHandle(sweep.body.workflow_id).result();
  const wallMs = performance.now() - t0;

  // Per run: the saga's span (workflow start → close) minus the command's span as the service saw it (start → end).
  const overheads: number[] = [];
  const commandMs: number[] = [];
  const events: number[] = [];
  for (const run of sweep.body.runs) {
    const handle = world.env.client.workflow.getHandle(run.workflow_id);
    const description = await handle.describe();
    const detail = (await api.get(`/experiments/${experiment.body.id}/variations/${run.n}/runs/${run.r}`))
      .body;
    const sagaMs = description.closeTime!.getTime() - description.startTime.getTime();
    const ranMs = Date.parse(detail.ended_at) - Date.parse(detail.started_at);
    commandMs.push(ranMs);
    overheads.push(sagaMs - ranMs);
    events.push(description.historyLength);
  }
  const sweepEvents = (await world.env.client.workflow.getHandle(sweep.body.workflow_id).describe())
    .historyLength;

  const lines = [
    `## Managed runs (\`node bench/managed-runs.ts --runs ${runs} --concurrency ${concurrency}\`)`,
    '',
    `Machine: ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.cpus()[0]?.model ?? ''}; ${new Date().toISOString().slice(0, 10)}; Temporal CLI dev server, worker in the benchmark's process, \`local\` provider, command \`true\` under \`assay run\`.`,
    '',
    '| Figure | Value |',
    '|---|---|',
    `| Sweep of ${runs} runs, concurrency ${concurrency}: outcome | ${summary.succeeded} succeeded, ${summary.failed} failed |`,
    `| Wall time | ${(wallMs / 1000).toFixed(1)} s (${(runs / (wallMs / 1000)).toFixed(2)} runs/s) |`,
    `| Runner's own span per run (start → succeed, as the service saw it) | mean ${mean(commandMs).toFixed(0)} ms |`,
    `| Orchestration overhead per run (saga span − runner span) | p50 ${pct(overheads, 50).toFixed(0)} ms, p95 ${pct(overheads, 95).toFixed(0)} ms, mean ${mean(overheads).toFixed(0)} ms |`,
    `| History events per run | p50 ${pct(events, 50)}, max ${Math.max(...events)}; the sweep itself ${sweepEvents} |`,
    `| Baseline: workflow of six no-op activities, ${baselineCount} at concurrency ${concurrency} | p50 ${pct(baselineLatencies, 50).toFixed(0)} ms, ${(baselineCount / (baselineWall / 1000)).toFixed(1)} workflows/s |`,
    `| Ratio: overhead per run / baseline workflow (p50) | ${(pct(overheads, 50) / pct(baselineLatencies, 50)).toFixed(1)}× |`,
    '',
    'The overhead includes spawning the instance (a Node process running `assay run`), the runner reading its config, and up to one watch poll (1 s here) after the run ends.',
    '',
  ];
  const text = lines.join('\n');
  process.stdout.write(`${text}\n`);
  await mkdir(path.join(import.meta.dirname, 'results'), { recursive: true });
  await writeFile(path.join(import.meta.dirname, 'results/managed-runs.md'), text);
} finally {
  await world.close();
}
