// `assay sweeps …`: many managed runs from one base config, as a grid or a list of changes to it.
import type { SweepData, SweepRunCounts, SweepSpec } from '../client/index.ts';
import { openClient } from './cli-client.ts';
import { readTextFile, UsageError } from './command-args.ts';
import { printFields, printJson, printTable } from './output.ts';
import type { JsonOptions } from './program/shared-options.ts';
import { gridFromSets } from './sweep-sets.ts';

export interface CreateOptions extends JsonOptions {
  base?: string;
  grid?: string;
  list?: string;
  set?: string[];
  concurrency?: number;
  namePrefix?: string;
}

export async function create(experimentId: string, values: CreateOptions): Promise<number> {
  if (values.base === undefined)
    throw new UsageError('--base is required: the base variation config as YAML');
  const sources = [values.grid !== undefined, values.list !== undefined, values.set !== undefined].filter(
    Boolean,
  ).length;
  if (sources !== 1)
    throw new UsageError(
      'give exactly one of --grid FILE, --list FILE or --set PATH=V1,V2,… (which may repeat)',
    );
  const base = {
    baseYaml: await readTextFile(values.base),
    concurrency: values.concurrency,
    namePrefix: values.namePrefix,
  };
  const spec: SweepSpec =
    values.list !== undefined
      ? { ...base, strategy: 'list', list: listFile(values.list, await readJson(values.list)) }
      : {
          ...base,
          strategy: 'grid',
          grid:
            values.grid !== undefined
              ? gridFile(values.grid, await readJson(values.grid))
              : gridFromSets(values.set!),
        };
  const sweep = await openClient().client.sweeps.create(experimentId, spec);
  if (values.json) {
    printJson(sweep);
    return 0;
  }
  process.stdout.write(
    `created sweep ${sweep.id}: ${sweep.runs.length} run(s) of experiment ${sweep.experiment_id}, at most ${sweep.concurrency} at a time\n`,
  );
  printFields(workflowFields(sweep));
  return 0;
}

export async function show(experimentId: string, id: string, values: JsonOptions): Promise<number> {
  const sweep = await openClient().client.sweeps.get(experimentId, id);
  if (values.json) printJson(sweep);
  else printSweep(sweep);
  return 0;
}

export async function cancel(experimentId: string, id: string, values: JsonOptions): Promise<number> {
  const sweep = await openClient().client.sweeps.cancel(experimentId, id);
  if (values.json) printJson(sweep);
  else
    process.stdout.write(
      `sweep ${sweep.id} cancelled: its workflow cancels its ${sweep.runs.length} run(s)\n`,
    );
  return 0;
}

async function readJson(file: string): Promise<unknown> {
  const text = await readTextFile(file);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`${file} is not JSON: ${(error as Error).message}`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function gridFile(file: string, value: unknown): Record<string, unknown[]> {
  if (!isObject(value) || Object.values(value).some((v) => !Array.isArray(v))) {
    throw new UsageError(
      `${file}: a grid is a JSON object of dotted paths to arrays of values, e.g. {"optimizer.lr": [1e-4, 3e-4]}`,
    );
  }
  return value as Record<string, unknown[]>;
}

function listFile(file: string, value: unknown): Array<Record<string, unknown>> {
  if (!Array.isArray(value) || !value.every(isObject)) {
    throw new UsageError(
      `${file}: a list is a JSON array of objects of dotted paths to values, e.g. [{"optimizer.lr": 1e-4, "seed": 1}]`,
    );
  }
  return value;
}

function workflowFields(sweep: SweepData): Array<readonly [string, unknown]> {
  return [
    ['workflow', sweep.workflow_id],
    ...(sweep.workflow_url ? [['temporal ui', sweep.workflow_url] as const] : []),
  ];
}

/** From the runs' recorded states, the failures by reason: `1 succeeded, 2 failed (crash: 2), …`. */
function progressText(p: SweepRunCounts): string {
  const reasons = Object.entries(p.failed_by_reason).map(([reason, n]) => `${reason}: ${n}`);
  const failed = reasons.length > 0 ? `${p.failed} failed (${reasons.join(', ')})` : `${p.failed} failed`;
  return `${p.succeeded} succeeded, ${failed}, ${p.running} running, ${p.pending} pending of ${p.total}${p.done ? ' (done)' : ''}`;
}

function printSweep(sweep: SweepData): void {
  printFields([
    ['id', sweep.id],
    ['experiment', sweep.experiment_id],
    ...workflowFields(sweep),
    ['concurrency', sweep.concurrency],
    ['created', sweep.created_at],
    ['progress', progressText(sweep.progress)],
  ]);
  process.stdout.write('\n');
  printTable(sweep.runs, [
    ['N', (r) => r.n],
    ['R', (r) => r.r],
    ['VARIATION', (r) => r.variation_name],
    ['STATE', (r) => r.state],
    ['WORKFLOW', (r) => r.workflow_id],
  ]);
}
