// `assay sweeps …`: many managed runs from one base config, as a grid, a list, a search of a space or
// repeats of a committed experiment's variations.
import { setTimeout as sleep } from 'node:timers/promises';
import type { SweepData, SweepRun, SweepRunCounts, SweepSummary } from '../client/index.ts';
import { openClient } from './cli-client.ts';
import { printFields, printJson, printTable, text } from './output.ts';
import type { JsonOptions } from './program/shared-options.ts';
import { sweepSpecOf, type SweepSpecOptions } from './sweep-spec.ts';

export interface CreateOptions extends JsonOptions, SweepSpecOptions {}

export interface ShowOptions extends JsonOptions {
  watch?: boolean;
  /** Seconds between reads with --watch. */
  interval?: number;
}

export async function create(experimentId: string, values: CreateOptions): Promise<number> {
  const spec = await sweepSpecOf(values);
  const sweep = await openClient().client.sweeps.create(experimentId, spec);
  if (values.json) {
    printJson(sweep);
    return 0;
  }
  const { strategy, trials } = sweep.declaration;
  const what = isEnumerated(strategy) ? `${trials} run(s)` : `a ${strategy} search of ${trials} trial(s)`;
  process.stdout.write(
    `created sweep ${sweep.id}: ${what} of experiment ${sweep.experiment_id}, at most ${sweep.concurrency} at a time\n`,
  );
  printFields(workflowFields(sweep));
  return 0;
}

export async function list(experimentId: string, values: JsonOptions): Promise<number> {
  const sweeps: SweepSummary[] = [];
  for await (const sweep of openClient().client.sweeps.iterate(experimentId)) sweeps.push(sweep);
  if (values.json) {
    printJson(sweeps);
    return 0;
  }
  printTable(sweeps, [
    ['ID', (s) => s.id],
    ['STRATEGY', (s) => s.declaration.strategy],
    ['OBJECTIVE', (s) => objectiveText(s.declaration.objective)],
    ['BEST', (s) => s.best_value],
    ['PROGRESS', (s) => progressText(s.progress)],
    ['CREATED', (s) => s.created_at],
  ]);
  return 0;
}

/** Prints the sweep; with --watch, again whenever it changes until it is done (exit 0 then). */
export async function show(experimentId: string, id: string, values: ShowOptions): Promise<number> {
  const { client } = openClient();
  let shown = '';
  for (;;) {
    const sweep = await client.sweeps.get(experimentId, id);
    const done = sweep.progress.done;
    if (values.json) {
      // JSON is printed once: at once, or with --watch when the sweep is done.
      if (!values.watch || done) printJson(sweep);
    } else {
      const page = captured(() => printSweep(sweep));
      if (page !== shown) {
        // A terminal is redrawn in place; a pipe or a file gets each new state after the last.
        const clear = values.watch && process.stdout.isTTY ? '\x1b[2J\x1b[H' : shown === '' ? '' : '\n';
        process.stdout.write(clear + page);
        shown = page;
      }
    }
    if (!values.watch || done) return 0;
    await sleep((values.interval ?? 2) * 1000);
  }
}

export async function cancel(experimentId: string, id: string, values: JsonOptions): Promise<number> {
  const sweep = await openClient().client.sweeps.cancel(experimentId, id);
  if (values.json) printJson(sweep);
  else
    process.stdout.write(
      `sweep ${sweep.id} cancelled: its workflow cancels its ${sweep.runs.length} run(s) and starts no more\n`,
    );
  return 0;
}

/** What a print writes to stdout, as text (so a --watch redraw happens only on a change). */
function captured(print: () => void): string {
  const chunks: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string) => chunks.push(chunk) > 0) as typeof process.stdout.write;
  try {
    print();
  } finally {
    process.stdout.write = write;
  }
  return chunks.join('');
}

/** A sweep whose runs are all known at its creation (a grid's, a list's or a repeat's). */
const isEnumerated = (strategy: string) =>
  strategy === 'grid' || strategy === 'list' || strategy === 'repeat';

function workflowFields(sweep: SweepData): Array<readonly [string, unknown]> {
  return [
    ['workflow', sweep.workflow_id],
    ...(sweep.workflow_url ? [['temporal ui', sweep.workflow_url] as const] : []),
  ];
}

const objectiveText = (objective: SweepData['declaration']['objective']) =>
  objective ? `${objective.metric} (${objective.goal})` : null;

/**
 * From the runs' recorded states: `1 succeeded, 1 stopped early, 2 failed (crash: 2), …`; stopped-early and
 * retried runs are named only when there are some.
 */
export function progressText(p: SweepRunCounts): string {
  const reasons = Object.entries(p.failed_by_reason).map(([reason, n]) => `${reason}: ${n}`);
  const failed = reasons.length > 0 ? `${p.failed} failed (${reasons.join(', ')})` : `${p.failed} failed`;
  const parts = [
    `${p.succeeded} succeeded`,
    ...(p.stopped_early > 0 ? [`${p.stopped_early} stopped early`] : []),
    failed,
    ...(p.retried > 0 ? [`${p.retried} retried`] : []),
    `${p.running} running`,
    `${p.pending} pending of ${p.total}`,
  ];
  return `${parts.join(', ')}${p.done ? ' (done)' : ''}`;
}

/** A run's state as a researcher reads it: early stopping is no error, a retried failure says so. */
function stateText(run: SweepRun, retried: ReadonlySet<string>): string {
  if (run.state !== 'failed') return run.state;
  if (run.failure_reason === 'stopped_early') return 'stopped early';
  const reason = run.failure_reason ?? 'unknown';
  return retried.has(run.id) ? `failed (${reason}), retried` : `failed (${reason})`;
}

/** `lr=0.001 layers=3`: a point's values, strings as they are and the rest as JSON. */
const paramsText = (params: Record<string, unknown>) =>
  Object.entries(params)
    .map(([path, value]) => `${path}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');

function printSweep(sweep: SweepData): void {
  const { declaration: d, best } = sweep;
  const total = isEnumerated(d.strategy) ? 'runs' : 'trials';
  printFields([
    ['id', sweep.id],
    ['experiment', sweep.experiment_id],
    ...workflowFields(sweep),
    ['strategy', `${d.strategy}, ${d.trials} ${total}${d.seed === null ? '' : `, seed ${d.seed}`}`],
    ...(d.objective ? [['objective', objectiveText(d.objective)] as const] : []),
    ...(d.early_stopping ? [['early stopping', d.early_stopping] as const] : []),
    ...(d.max_retries > 0 ? [['max retries', d.max_retries] as const] : []),
    ['concurrency', sweep.concurrency],
    ['created', sweep.created_at],
    ['progress', progressText(sweep.progress)],
    ...(best
      ? [
          [
            'best',
            `${text(best.value)} by ${best.trial === null ? '' : `trial ${best.trial}, `}run ${best.n}/${best.r}` +
              (Object.keys(best.params).length > 0 ? `: ${paramsText(best.params)}` : ''),
          ] as const,
        ]
      : []),
    ...sweep.warnings.map((w) => ['warning', w] as const),
  ]);
  process.stdout.write('\n');
  const retried = new Set(sweep.runs.flatMap((r) => (r.retries_run_id ? [r.retries_run_id] : [])));
  printTable(sweep.runs, [
    ['TRIAL', (r) => r.trial],
    ['N', (r) => r.n],
    ['R', (r) => r.r],
    ['PARAMS', (r) => paramsText(r.params)],
    ['OBJECTIVE', (r) => r.objective],
    ['STEP', (r) => r.step],
    ['STATE', (r) => stateText(r, retried)],
  ]);
}
