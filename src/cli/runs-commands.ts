// `assay runs …`: the runs of a variation; `assay run` (run-command.ts) is the runner itself.
import type { MetricPoint, RunData } from '../client/index.ts';
import { openClient } from './cli-client.ts';
import { UsageError } from './command-args.ts';
import { printFields, printJson, printTable } from './output.ts';
import type { JsonOptions } from './program/shared-options.ts';

export async function show(experimentId: string, n: number, r: number, values: JsonOptions): Promise<number> {
  const run = await openClient().client.runs.get(experimentId, n, r);
  if (values.json) {
    printJson(run);
    return 0;
  }
  printRun(run);
  return 0;
}

export async function create(experimentId: string, n: number, values: JsonOptions): Promise<number> {
  const run = await openClient().client.runs.create(experimentId, n);
  if (values.json) printJson(run);
  else
    process.stdout.write(
      `created run ${run.r} of variation ${run.n} of experiment ${run.experiment_id} (${run.state})\n`,
    );
  return 0;
}

export async function cancel(
  experimentId: string,
  n: number,
  r: number,
  values: JsonOptions,
): Promise<number> {
  const run = await openClient().client.runs.cancel(experimentId, n, r);
  if (values.json) printJson(run);
  else
    process.stdout.write(
      run.state === 'failed'
        ? `run ${run.r} cancelled (failed: ${run.failure_reason})\n`
        : `run ${run.r} asked to stop (it is told on its next heartbeat)\n`,
    );
  return 0;
}

export interface ProvisionOptions extends JsonOptions {
  priority?: number;
}

export async function provision(
  experimentId: string,
  n: number,
  r: number,
  values: ProvisionOptions,
): Promise<number> {
  const provisioned = await openClient().client.runs.provision(experimentId, n, r, {
    ...(values.priority === undefined ? {} : { priority: values.priority }),
  });
  if (values.json) {
    printJson(provisioned);
    return 0;
  }
  const { run } = provisioned;
  process.stdout.write(
    `provisioning run ${run.r} of variation ${run.n} of experiment ${run.experiment_id} (${run.state})\n`,
  );
  printFields([
    ['workflow', provisioned.workflow_id],
    ...(provisioned.workflow_url ? [['temporal ui', provisioned.workflow_url] as const] : []),
  ]);
  return 0;
}

export interface MetricsOptions extends JsonOptions {
  key?: string;
  maxPoints?: number;
}

/** Every key's summary, or with --key one key's points: all of them page by page, or downsampled. */
export async function metrics(
  experimentId: string,
  n: number,
  r: number,
  values: MetricsOptions,
): Promise<number> {
  const { client } = openClient();
  if (values.key === undefined) {
    if (values.maxPoints !== undefined) throw new UsageError('--max-points goes with --key');
    const items = await client.runs.metrics(experimentId, n, r);
    if (values.json) printJson({ items });
    else
      printTable(items, [
        ['KEY', (m) => m.key],
        ['COUNT', (m) => m.count],
        ['LAST STEP', (m) => m.last.step],
        ['LAST', (m) => m.last.value],
        ['MIN', (m) => m.min],
        ['MAX', (m) => m.max],
      ]);
    return 0;
  }
  let series;
  if (values.maxPoints !== undefined) {
    series = await client.runs.metricSeries(experimentId, n, r, values.key, { maxPoints: values.maxPoints });
  } else {
    const points: MetricPoint[] = [];
    for await (const point of client.runs.iterateMetricPoints(experimentId, n, r, values.key))
      points.push(point);
    series = { key: values.key, count: points.length, downsampled: false, points, next_cursor: null };
  }
  if (values.json) printJson(series);
  else
    printTable(series.points, [
      ['STEP', (p) => p.step],
      ['VALUE', (p) => p.value],
      ['TIME', (p) => p.timestamp],
    ]);
  return 0;
}

function printRun(run: RunData): void {
  printFields([
    ['experiment', run.experiment_id],
    ['variation', run.n],
    ['run', run.r],
    ['id', run.id],
    ['name', run.name],
    ['tags', run.tags.join(', ')],
    ['state', run.state],
    ...(run.queue ? [['queued', queuedText(run.queue)] as const] : []),
    ...(run.priority !== 0 ? [['priority', run.priority] as const] : []),
    [
      'failure',
      run.failure_reason === null
        ? undefined
        : `${run.failure_reason}${run.failure_message ? `: ${run.failure_message}` : ''}`,
    ],
    ['cancel requested', run.cancel_requested ? 'yes' : undefined],
    ['created', run.created_at],
    ['started', run.started_at],
    ['last heartbeat', run.last_heartbeat_at],
    ['ended', run.ended_at],
    ['managed', run.managed ? 'yes' : 'no'],
    ['workflow', run.workflow_id],
    ['temporal ui', run.workflow_url],
    ['recovers run', run.recovers_run_id],
    ['resumes from run', run.resumes_from_run_id],
    ['archived', run.archived_at],
    ['environment', run.environment],
  ]);
  // Notes are markdown, often several lines: a block of their own, as written.
  if (run.notes) process.stdout.write(`\nnotes:\n${run.notes.replace(/^/gm, '  ')}\n`);
}

/** "2nd of 5 (waiting for 2 GPUs)": a waiting run's place in the compute queue. */
export function queuedText(queue: NonNullable<RunData['queue']>): string {
  const gpus = queue.gpus === 0 ? 'a run slot' : `${queue.gpus} GPU${queue.gpus === 1 ? '' : 's'}`;
  return `${ordinal(queue.position)} of ${queue.waiting} (waiting for ${gpus})`;
}

function ordinal(n: number): string {
  const tens = n % 100;
  const suffix =
    tens >= 11 && tens <= 13
      ? 'th'
      : (({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th');
  return `${n}${suffix}`;
}
