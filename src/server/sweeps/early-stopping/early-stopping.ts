import type { EarlyStopping, Objective } from '@assay/contract';
import type { Db } from '../../db/database.ts';
import type { MetricsObserver } from '../../metrics/metrics-observer.ts';
import type { RunEvents } from '../../runs/run-events.ts';
import * as repo from './early-stopping-repository.ts';
import { decideStop, mayStop, type SweepRecords, type TrialReport } from './stop-decision.ts';

/** What a sweep run's decisions need that never changes (a sweep's declaration is frozen). */
interface RunSettings {
  sweepId: string;
  objective: Objective;
  stopping: EarlyStopping;
  trial: number;
}

/** Runs whose settings are kept; past it the cache starts over (a lookup is one indexed query). */
const CACHED_RUNS = 10_000;

/**
 * The sweeps' early stopping, told of every stored metrics batch: when a batch of a running sweep run holds
 * the sweep's objective, the sweep's pruner is asked about the run's series as it now stands (one decision per
 * sweep at a time), the rung values it records are kept, and a pruned run is asked to stop with the reason
 * `stopped_early`; its workflow is told through `events`. A run of no sweep costs one field check.
 */
export function earlyStopping(db: Db, events: RunEvents): MetricsObserver {
  const settings = new Map<string, RunSettings | null>();

  async function settingsOf(runId: string, sweepId: string): Promise<RunSettings | null> {
    const known = settings.get(runId);
    if (known !== undefined) return known;
    const found = await repo.findRunStopping(db, sweepId, runId);
    const value =
      found?.objective && found.early_stopping
        ? {
            sweepId,
            objective: found.objective,
            stopping: found.early_stopping,
            trial: found.trial,
          }
        : null;
    if (settings.size >= CACHED_RUNS) settings.clear();
    settings.set(runId, value);
    return value;
  }

  return {
    async stored(run, points, log) {
      if (run.sweep_id === null || run.state !== 'running' || run.cancel_requested) return;
      const s = await settingsOf(run.id, run.sweep_id);
      if (!s || !points.some((p) => p.key === s.objective.metric)) return;
      const stopped = await decide(db, run.id, s);
      if (!stopped) return;
      log.debug({ run_id: run.id, sweep_id: s.sweepId }, 'early stopping: the sweep run is stopped');
      events.changed(stopped.workflow_id, log);
    },
  };
}

/** The report the pruner is asked about: the run's objective series as it stands. */
function reportOf(facts: repo.ObjectiveFacts, s: RunSettings): TrialReport {
  const best = s.objective.goal === 'minimize' ? facts.min_value : facts.max_value;
  return {
    trialNumber: s.trial,
    step: facts.step,
    value: facts.value,
    previousStep: facts.previous_step,
    best: best ?? Number.NaN,
    completedRungs: facts.completed_rungs,
  };
}

/**
 * One decision. Most reports fall between rungs (or inside an interval): one read says so, without a lock.
 * The others are decided under the sweep's lock, on the series read again there: read what the pruner asks,
 * record the rungs, stop.
 */
async function decide(db: Db, runId: string, s: RunSettings) {
  const glance = await repo.findObjectiveFacts(db, runId, s.objective.metric);
  if (!glance || !mayStop(s.stopping, s.sweepId, reportOf(glance, s))) return undefined;
  return db.transaction(async (tx) => {
    await repo.lockSweepDecisions(tx, s.sweepId);
    const facts = await repo.findObjectiveFacts(tx, runId, s.objective.metric);
    if (!facts) return undefined;
    const records: SweepRecords = {
      rungsFrom: async (rung) =>
        (await repo.listRungsFrom(tx, s.sweepId, runId, rung)).map((r) => ({
          trialNumber: r.trial,
          rung: r.rung,
          value: r.value,
        })),
      finishedAt: async (step) => ({
        count: await repo.countSucceededRuns(tx, s.sweepId),
        values: await repo.listSucceededValuesAt(tx, s.sweepId, s.objective.metric, step),
      }),
    };
    const decision = await decideStop(s.stopping, s.objective.goal, s.sweepId, reportOf(facts, s), records);
    if (decision.rungs.length > 0) await repo.insertRungs(tx, s.sweepId, runId, decision.rungs);
    return decision.prune ? repo.requestEarlyStop(tx, runId) : undefined;
  });
}
