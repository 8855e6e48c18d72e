import type { EarlyStopping, Goal } from '@assay/contract';
import { bracketHalving, bracketOf, brackets } from './hyperband.ts';
import { medianDecision, type FinishedTrials } from './median.ts';
import { halvingDecision, type HalvingDecision, type HalvingSettings } from './successive-halving.ts';

/** What is known of the trial at this report (the run's objective series after the batch). */
export interface TrialReport {
  /** Optuna's trial.number: the hyperband bracket is chosen by it. */
  trialNumber: number;
  /** The newest step the trial reported, and its value there. */
  step: number;
  value: number;
  /** The newest step before `step` (−1 when none). */
  previousStep: number;
  /** The trial's best value by the goal, NaN ignored (NaN when it reported nothing else). */
  best: number;
  /** How many rungs the trial completed before (it records them consecutively from 0). */
  completedRungs: number;
}

/** What the other trials of the sweep recorded, read when a pruner needs it. */
export interface SweepRecords {
  /** The rung values the sweep's other trials recorded at `rung` or above. */
  rungsFrom(rung: number): Promise<{ trialNumber: number; rung: number; value: number }[]>;
  /** The finished trials (our succeeded runs) and their values at `step`. */
  finishedAt(step: number): Promise<FinishedTrials>;
}

const NO_STOP: HalvingDecision = { prune: false, rungs: [] };

/**
 * Asks the sweep's pruner about one report, as Optuna asks its pruner after `trial.report`: `prune` to stop
 * the trial, and the rung values to record. `studyName` stands for Optuna's study name (the sweep id).
 */
export async function decideStop(
  stopping: EarlyStopping,
  goal: Goal,
  studyName: string,
  report: TrialReport,
  records: SweepRecords,
): Promise<HalvingDecision> {
  switch (stopping.kind) {
    case 'asha':
      return halving(
        {
          minStep: stopping.min_step ?? 1,
          reductionFactor: stopping.reduction_factor ?? 3,
          minEarlyStoppingRate: stopping.min_early_stopping_rate ?? 0,
        },
        goal,
        report,
        records,
        () => true,
      );
    case 'hyperband': {
      const settings = {
        minStep: stopping.min_step ?? 1,
        maxStep: stopping.max_step,
        reductionFactor: stopping.reduction_factor ?? 3,
      };
      const all = brackets(settings);
      // No bracket (max_step below min_step): Optuna's pruner then never prunes.
      if (all.total === 0) return NO_STOP;
      const bracket = bracketOf(all, studyName, report.trialNumber);
      const sameBracket = (trial: number) => bracketOf(all, studyName, trial) === bracket;
      return halving(bracketHalving(settings, bracket), goal, report, records, sameBracket);
    }
    case 'median': {
      const settings = {
        startupTrials: stopping.startup_trials ?? 5,
        warmupSteps: stopping.warmup_steps ?? 0,
        intervalSteps: stopping.interval_steps ?? 1,
        minTrials: stopping.min_trials ?? 1,
      };
      const finished = await records.finishedAt(report.step);
      return { prune: medianDecision(settings, goal, report, finished), rungs: [] };
    }
  }
}

async function halving(
  settings: HalvingSettings,
  goal: Goal,
  report: TrialReport,
  records: SweepRecords,
  competes: (trialNumber: number) => boolean,
): Promise<HalvingDecision> {
  // Nothing to read before the first promotion step (most reports of a run).
  const first =
    settings.minStep * settings.reductionFactor ** (settings.minEarlyStoppingRate + report.completedRungs);
  if (report.step < first) return NO_STOP;
  const byRung = new Map<number, number[]>();
  for (const r of await records.rungsFrom(report.completedRungs)) {
    if (!competes(r.trialNumber)) continue;
    const values = byRung.get(r.rung) ?? [];
    values.push(r.value);
    byRung.set(r.rung, values);
  }
  return halvingDecision(settings, goal, report, (rung) => byRung.get(rung) ?? []);
}
