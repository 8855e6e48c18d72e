import { isTerminalRunState } from '@assay/contract';
import type { Db } from '../db/database.ts';
import type { Orchestrator } from '../../orchestrator/orchestrator.ts';
import type { RunRow } from '../runs/run-repository.ts';
import {
  failManagedRun,
  failUnstartedManagedRun,
  findManagedRun,
  listLiveManagedRuns,
  listUnstartedManagedRuns,
} from './orchestrator-repository.ts';
import { revokeWorkerKeys } from './orchestrator-service.ts';
import { runLabels } from './provision-service.ts';

export interface RunReconciler {
  /**
   * One pass: how many workflows it (re)started, how many runs it failed, and how many runs whose workflow
   * had closed without concluding them it started again.
   */
  pass(): Promise<{ started: number; failed: number; redriven: number }>;
  /** Stops the timer and waits for a pass under way. */
  stop(): Promise<void>;
}

type Log = Record<'info' | 'warn', (o: object, m: string) => void>;

const BATCH = 100;
/** How often a run's closed workflow is started again before the run fails: a third close is no accident. */
const MAX_REDRIVES = 2;
const FIRST_ID = '00000000-0000-0000-0000-000000000000';

/**
 * Keeps every managed run driven by a workflow. Two cases:
 * - a run left pending without a workflow: POST …/provision commits the `managed` flag before it starts the
 *   workflow, and a Temporal outage in between leaves the run waiting for nothing. Starting is idempotent, so
 *   every replica runs one; a run whose start keeps failing for `giveUpMs` (as this replica saw it) fails
 *   `provision_failed`.
 * - a run whose workflow closed without concluding it (terminated by hand, or failed by a worker that
 *   could not see the run, such as another deployment's on a shared task queue): a pending run of its own
 *   gets a new execution, up to MAX_REDRIVES times; any other fails with a message that says what happened.
 */
export function startRunReconciler(
  db: Db,
  orchestrator: Orchestrator,
  opts: { intervalMs: number; giveUpMs: number },
  log: Log,
): RunReconciler {
  const failingSince = new Map<string, number>();
  const redrives = new Map<string, number>();
  let cursor = FIRST_ID;
  const liveThisRound = new Set<string>();

  const startUnstarted = async () => {
    let started = 0;
    let failed = 0;
    const runs = await listUnstartedManagedRuns(db, BATCH);
    const seen = new Set(runs.map((run) => run.id));
    for (const id of failingSince.keys()) if (!seen.has(id)) failingSince.delete(id);
    for (const run of runs) {
      try {
        await orchestrator.startManagedRun(refOf(run), await runLabels(db, run));
        failingSince.delete(run.id);
        started += 1;
      } catch (err) {
        const since = failingSince.get(run.id) ?? Date.now();
        failingSince.set(run.id, since);
        if (Date.now() - since < opts.giveUpMs) {
          log.warn({ err, runId: run.id }, 'could not start a managed run’s workflow; will retry');
          continue;
        }
        const message = `the managed-run workflow could not be started for ${Math.round((Date.now() - since) / 1000)} s (the orchestrator was unreachable)`;
        if (await failUnstartedManagedRun(db, run.id, message)) failed += 1;
        failingSince.delete(run.id);
      }
    }
    return { started, failed };
  };

  /** The next page of live runs whose workflow closed: re-driven or failed. */
  const reapClosed = async () => {
    let redriven = 0;
    let failed = 0;
    const runs = await listLiveManagedRuns(db, cursor, BATCH);
    for (const run of runs) liveThisRound.add(run.id);
    cursor = runs.length === BATCH ? runs.at(-1)!.id : FIRST_ID;
    if (cursor === FIRST_ID) {
      // A round over every live run ended: forget the restarts of runs that ended since.
      for (const id of redrives.keys()) if (!liveThisRound.has(id)) redrives.delete(id);
      liveThisRound.clear();
    }
    for (const listed of runs) {
      const state = await orchestrator.workflowState(listed.workflow_id!);
      // Not started yet (a sweep's run waiting for a slot, or the case above) or still at work.
      if (!state || state.open) continue;
      // Read after the workflow closed: a saga that concluded the run did so before it closed.
      const run = await findManagedRun(db, listed.id);
      if (!run || isTerminalRunState(run.state)) continue;
      const times = redrives.get(run.id) ?? 0;
      const own = run.sweep_id === null && run.recovers_run_id === null;
      if (run.state === 'pending' && run.instance === null && own && times < MAX_REDRIVES) {
        await orchestrator.startManagedRun(refOf(run), await runLabels(db, run), { restartClosed: true });
        redrives.set(run.id, times + 1);
        redriven += 1;
        log.warn(
          { runId: run.id, workflowId: run.workflow_id, status: state.status },
          'a managed run’s workflow closed without concluding it; started it again',
        );
        continue;
      }
      const again = times > 0 ? `, also after ${times} restart(s)` : '';
      const message = `its managed-run workflow ${run.workflow_id} ended (${state.status.toLowerCase()}) without concluding the run${again}; the orchestrator no longer drives it`;
      const reason = run.state === 'pending' ? 'provision_failed' : 'crash';
      if (await failManagedRun(db, run.id, reason, message)) failed += 1;
      // No saga is left to revoke the run's worker keys as it concludes: an ended run's runner keeps none.
      await revokeWorkerKeys(db, run.id);
      redrives.delete(run.id);
    }
    return { redriven, failed };
  };

  const pass = async () => {
    const unstarted = await startUnstarted();
    const closed = await reapClosed();
    const failed = unstarted.failed + closed.failed;
    if (failed > 0) log.info({ failed }, `reconciler failed ${failed} managed run(s)`);
    return { started: unstarted.started, failed, redriven: closed.redriven };
  };
  let running: Promise<unknown> | undefined;
  const tick = () => {
    if (running) return;
    running = pass()
      .catch((err: unknown) => log.warn({ err }, 'run reconciler pass failed; will retry'))
      .finally(() => {
        running = undefined;
      });
  };
  tick();
  const timer = setInterval(tick, opts.intervalMs);
  timer.unref();
  return {
    pass,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

function refOf(run: RunRow) {
  return { runId: run.id, experimentId: run.experiment_id, n: run.n, r: run.r, workflowId: run.workflow_id! };
}
