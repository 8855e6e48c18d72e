import type { Db } from '../db/database.ts';
import type { Orchestrator } from '../../orchestrator/orchestrator.ts';
import { failUnstartedManagedRun, listUnstartedManagedRuns } from './orchestrator-repository.ts';
import { runLabels } from './provision-service.ts';

export interface RunReconciler {
  /** One pass: how many workflows it (re)started and how many runs it failed. */
  pass(): Promise<{ started: number; failed: number }>;
  /** Stops the timer and waits for a pass under way. */
  stop(): Promise<void>;
}

type Log = Record<'info' | 'warn', (o: object, m: string) => void>;

const BATCH = 100;

/**
 * Starts the workflow of every managed run left pending without one: POST …/provision commits the `managed` flag
 * before it starts the workflow, and a Temporal outage in between leaves the run waiting for nothing. Starting is
 * idempotent (a started or finished workflow stays the answer), so every replica runs one; a run whose start keeps
 * failing for `giveUpMs` (as this replica saw it) fails `provision_failed`.
 */
export function startRunReconciler(
  db: Db,
  orchestrator: Orchestrator,
  opts: { intervalMs: number; giveUpMs: number },
  log: Log,
): RunReconciler {
  const failingSince = new Map<string, number>();
  const pass = async () => {
    let started = 0;
    let failed = 0;
    const runs = await listUnstartedManagedRuns(db, BATCH);
    const seen = new Set(runs.map((run) => run.id));
    for (const id of failingSince.keys()) if (!seen.has(id)) failingSince.delete(id);
    for (const run of runs) {
      const ref = { runId: run.id, experimentId: run.experiment_id, n: run.n, r: run.r };
      try {
        await orchestrator.startManagedRun(
          { ...ref, workflowId: run.workflow_id! },
          await runLabels(db, run),
        );
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
    if (failed > 0) log.info({ failed }, `reconciler failed ${failed} managed run(s) with provision_failed`);
    return { started, failed };
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
