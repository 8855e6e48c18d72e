// The read side of sweeps: what GET …/sweeps and …/sweeps/{id} answer, from the database alone.
import { isTerminalRunState, type Sweep, type SweepDeclaration, type SweepRunCounts } from '@assay/contract';
import type { Db } from '../db/database.ts';
import { iso } from '../http/schemas.ts';
import { workflowUrlOf } from '../orchestration/orchestrator-calls.ts';
import type { Orchestrator } from '../../orchestrator/orchestrator.ts';
import type * as repo from './sweep-repository.ts';

/**
 * Counted from what the runs recorded, never from the workflows: a run whose workflow failed without
 * concluding it is still pending here (and the run reconciler deals with it), not failed.
 */
function countRuns(runs: repo.SweepRunRow[]): SweepRunCounts {
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
    counts[run.state] += 1;
    if (run.state === 'failed') {
      const reason = run.failure_reason ?? 'unknown';
      counts.failed_by_reason[reason] = (counts.failed_by_reason[reason] ?? 0) + 1;
    }
  }
  return counts;
}

/** The API's answer for a sweep: its declaration, its runs, the progress counted from them, the best so far. */
export async function sweepAnswer(
  _db: Db,
  sweep: repo.SweepRow,
  runs: repo.SweepRunRow[],
  orchestrator: Orchestrator | undefined,
): Promise<Sweep> {
  return {
    id: sweep.id,
    experiment_id: sweep.experiment_id,
    workflow_id: sweep.workflow_id,
    workflow_url: workflowUrlOf(orchestrator, sweep.workflow_id),
    concurrency: sweep.concurrency,
    created_at: iso(sweep.created_at)!,
    runs: runs.map((r) => ({
      n: r.n,
      r: r.r,
      variation_name: r.variation_name,
      workflow_id: r.workflow_id,
      state: r.state,
      failure_reason: r.failure_reason,
      trial: null,
      params: {},
      objective: null,
      step: null,
      retries_run_id: null,
    })),
    progress: countRuns(runs),
    declaration: declarationOf(sweep.spec, runs.length),
    best: null,
    warnings: [],
  };
}

function declarationOf(spec: Record<string, unknown>, runs: number): SweepDeclaration {
  const { base_yaml: _, ...rest } = spec;
  return {
    objective: null,
    early_stopping: null,
    max_retries: 0,
    seed: null,
    trials: runs,
    ...rest,
  } as SweepDeclaration;
}
