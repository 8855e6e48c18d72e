// The read side of sweeps: what GET …/sweeps and …/sweeps/{id} answer, from the database (and, only when
// the runs cannot tell whether more will come, from whether the sweep's workflow is still open).
import {
  isTerminalRunState,
  withStoppingDefaults,
  type EarlyStopping,
  RETRYABLE_FAILURE_REASONS,
  type Sweep,
  type SweepBest,
  type SweepDeclaration,
  type SweepRun,
  type SweepRunCounts,
  type SweepSummary,
} from '@assay/contract';
import type { Db } from '../db/database.ts';
import { iso } from '../http/schemas.ts';
import { workflowUrlOf } from '../orchestration/orchestrator-calls.ts';
import type { Orchestrator } from '../../orchestrator/orchestrator.ts';
import { sweepPoints, tagLegacySweep, type EnumeratedSweep } from './sweep-points.ts';
import * as read from './sweep-read-repository.ts';
import type { SweepRow } from './sweep-repository.ts';

/** How many logged keys the missing-objective warning names. */
const KEYS_NAMED = 10;

/** What both answers are built from: the declaration, the runs as shown and the counts. */
interface SweepFacts {
  declaration: SweepDeclaration;
  runs: SweepRun[];
  /** The runs as read, index for index with `runs`. */
  rows: read.SweepRunView[];
  progress: SweepRunCounts;
  best: { index: number; value: number } | undefined;
}

/** The API's answer for a sweep: its declaration, its runs, the progress counted from them, the best so far. */
export async function sweepAnswer(
  db: Db,
  sweep: SweepRow,
  orchestrator: Orchestrator | undefined,
): Promise<Sweep> {
  const [facts] = await sweepFacts(db, [sweep], orchestrator);
  const { declaration, runs, rows, progress, best } = facts!;
  return {
    id: sweep.id,
    experiment_id: sweep.experiment_id,
    workflow_id: sweep.workflow_id,
    workflow_url: workflowUrlOf(orchestrator, sweep.workflow_id),
    concurrency: sweep.concurrency,
    created_at: iso(sweep.created_at)!,
    declaration,
    runs,
    progress,
    best: best ? await bestOf(db, runs[best.index]!, rows[best.index]!.id, best.value) : null,
    warnings: await warningsOf(db, sweep.id, declaration, rows),
  };
}

/** The list's answer for each sweep: its declaration, progress and best value, without its runs. */
export async function sweepSummaries(
  db: Db,
  sweeps: SweepRow[],
  orchestrator: Orchestrator | undefined,
): Promise<SweepSummary[]> {
  const facts = await sweepFacts(db, sweeps, orchestrator);
  return sweeps.map((sweep, i) => ({
    id: sweep.id,
    experiment_id: sweep.experiment_id,
    workflow_id: sweep.workflow_id,
    concurrency: sweep.concurrency,
    created_at: iso(sweep.created_at)!,
    declaration: facts[i]!.declaration,
    progress: facts[i]!.progress,
    best_value: facts[i]!.best?.value ?? null,
  }));
}

/** The facts of each sweep, in the order given, from one read of all their runs. */
async function sweepFacts(
  db: Db,
  sweeps: SweepRow[],
  orchestrator: Orchestrator | undefined,
): Promise<SweepFacts[]> {
  const rows =
    sweeps.length > 0
      ? await read.sweepRunViews(
          db,
          sweeps.map((s) => s.id),
        )
      : [];
  return Promise.all(
    sweeps.map(async (sweep) => {
      const own = rows.filter((r) => r.sweep_id === sweep.id);
      const declaration = declarationOf(sweep.spec, firstRuns(own).length);
      const runs = runsOf(declaration, own);
      const counts = countRuns(own);
      const done = counts.done && (await nothingMoreToStart(sweep, declaration, own, orchestrator));
      return {
        declaration,
        runs,
        rows: own,
        progress: { ...counts, done },
        best: bestIndex(declaration, runs),
      };
    }),
  );
}

/** The runs a sweep made for its trials (or points), not those that took over a failed or lost run. */
const firstRuns = (runs: read.SweepRunView[]) =>
  runs.filter((r) => r.retries_run_id === null && r.recovers_run_id === null);

/** The ids of the runs a later run took over: retried after a failure, or recovered after a lost instance. */
const supersededIds = (runs: read.SweepRunView[]) =>
  new Set(runs.flatMap((r) => [r.retries_run_id, r.recovers_run_id].filter((id) => id !== null)));

/**
 * Counted from what the runs recorded, never from the workflows: a run whose workflow failed without
 * concluding it is still pending here (and the run reconciler deals with it), not failed. Each run is in
 * exactly one bucket; `done` here means only that every run has ended.
 */
function countRuns(runs: read.SweepRunView[]): SweepRunCounts {
  const superseded = supersededIds(runs);
  const counts: SweepRunCounts = {
    total: runs.length,
    pending: 0,
    running: 0,
    succeeded: 0,
    failed: 0,
    stopped_early: 0,
    retried: 0,
    failed_by_reason: {},
    done: runs.every((r) => isTerminalRunState(r.state)),
  };
  for (const run of runs) {
    if (run.state !== 'failed') counts[run.state] += 1;
    else if (superseded.has(run.id)) counts.retried += 1;
    else if (run.failure_reason === 'stopped_early') counts.stopped_early += 1;
    else {
      counts.failed += 1;
      const reason = run.failure_reason ?? 'unknown';
      counts.failed_by_reason[reason] = (counts.failed_by_reason[reason] ?? 0) + 1;
    }
  }
  return counts;
}

/**
 * Whether the sweep will start no more runs, once all of its runs ended. Certain when every declared trial
 * has a run and no failed run may still be retried; otherwise (a searching sweep between trials, a retry
 * about to be made, or a sweep cancelled before its last trial) only its workflow knows: closed means done.
 */
async function nothingMoreToStart(
  sweep: SweepRow,
  declaration: SweepDeclaration,
  runs: read.SweepRunView[],
  orchestrator: Orchestrator | undefined,
): Promise<boolean> {
  const allTrials = firstRuns(runs).length >= declaration.trials;
  if (allTrials && !retryMayCome(runs, declaration.max_retries)) return true;
  if (!orchestrator) return true;
  try {
    const state = await orchestrator.workflowState(sweep.workflow_id);
    return !state?.open;
  } catch {
    // Temporal unreachable: not known to be done, which a later read can tell.
    return false;
  }
}

/** Whether a run failed for a retryable reason, was not taken over, and its trial has retries left. */
function retryMayCome(runs: read.SweepRunView[], maxRetries: number): boolean {
  const superseded = supersededIds(runs);
  const byId = new Map(runs.map((r) => [r.id, r]));
  const retriesBefore = (run: read.SweepRunView | undefined): number => {
    let count = 0;
    for (let r = run; r?.retries_run_id; r = byId.get(r.retries_run_id)) count += 1;
    return count;
  };
  return runs.some(
    (r) =>
      r.state === 'failed' &&
      !superseded.has(r.id) &&
      r.failure_reason !== null &&
      RETRYABLE_FAILURE_REASONS.includes(r.failure_reason) &&
      retriesBefore(r) < maxRetries,
  );
}

/**
 * The declaration as the sweep stored it (its request less base_yaml and concurrency), with the defaults of
 * what it left out; `trials` of a grid, list or repeat sweep is the number of runs it made for its points.
 */
function declarationOf(spec: Record<string, unknown>, firstRunCount: number): SweepDeclaration {
  const { base_yaml: _, ...rest } = tagLegacySweep(spec) as Record<string, unknown>;
  const stopping = rest.early_stopping as EarlyStopping | undefined;
  return {
    objective: null,
    early_stopping: null,
    max_retries: 0,
    seed: null,
    trials: firstRunCount,
    ...rest,
    ...(stopping ? { early_stopping: withStoppingDefaults(stopping) } : {}),
  } as SweepDeclaration;
}

/** Each run as shown: its trial and point, and its objective as a finite number (NaN shows as none). */
function runsOf(declaration: SweepDeclaration, rows: read.SweepRunView[]): SweepRun[] {
  const pointOf = pointsByVariation(declaration, rows);
  return rows.map((r) => ({
    id: r.id,
    n: r.n,
    r: r.r,
    variation_name: r.variation_name,
    workflow_id: r.workflow_id,
    state: r.state,
    failure_reason: r.failure_reason,
    trial: r.trial,
    params: r.params ?? pointOf(r),
    objective: r.objective !== null && Number.isFinite(r.objective) ? r.objective : null,
    step: r.objective === null ? null : r.step,
    retries_run_id: r.retries_run_id,
  }));
}

/**
 * The point of a run whose variation does not store one: a grid's or list's points are made in order, one
 * variation each, so the k-th of the sweep's variations (by number) has the k-th point; a repeat's run sets
 * its seed.
 */
function pointsByVariation(declaration: SweepDeclaration, rows: read.SweepRunView[]) {
  if (declaration.strategy === 'grid' || declaration.strategy === 'list') {
    const points = sweepPoints(declaration as unknown as EnumeratedSweep);
    const numbers = [...new Set(firstRuns(rows).map((r) => r.n))].sort((a, b) => a - b);
    const byN = new Map(numbers.map((n, i) => [n, Object.fromEntries(points[i] ?? [])]));
    return (r: read.SweepRunView) => byN.get(r.n) ?? {};
  }
  return (r: read.SweepRunView): Record<string, unknown> => (r.seed === null ? {} : { seed: r.seed });
}

/** The succeeded run with the best objective by the goal (the earlier run on a tie). */
function bestIndex(declaration: SweepDeclaration, runs: SweepRun[]) {
  const objective = declaration.objective;
  if (!objective) return undefined;
  const sign = objective.goal === 'minimize' ? 1 : -1;
  let best: { index: number; value: number } | undefined;
  runs.forEach((run, index) => {
    if (run.state !== 'succeeded' || run.objective === null) return;
    if (!best || sign * run.objective < sign * best.value) best = { index, value: run.objective };
  });
  return best;
}

async function bestOf(db: Db, run: SweepRun, runId: string, value: number): Promise<SweepBest> {
  return {
    n: run.n,
    r: run.r,
    variation_name: run.variation_name,
    trial: run.trial,
    value,
    params: run.params,
    config: (await read.variationConfig(db, runId)) ?? {},
  };
}

/**
 * What a researcher should fix: an objective metric no run has logged once a run has ended after starting
 * (a misspelt key would otherwise leave the sweep without a best, and early stopping without data).
 */
async function warningsOf(
  db: Db,
  sweepId: string,
  declaration: SweepDeclaration,
  rows: read.SweepRunView[],
): Promise<string[]> {
  const metric = declaration.objective?.metric;
  if (metric === undefined || rows.some((r) => r.step !== null)) return [];
  if (!rows.some((r) => isTerminalRunState(r.state) && r.started_at !== null)) return [];
  const keys = await read.sweepMetricKeys(db, sweepId, KEYS_NAMED);
  const logged = keys.length > 0 ? ` (its runs logged ${keys.map((k) => `\`${k}\``).join(', ')})` : '';
  return [
    `no run has logged the objective metric \`${metric}\`${logged}; check the metric's name in your training script`,
  ];
}
