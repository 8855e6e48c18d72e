import { EARLY_STOPPING_DEFAULTS, type EarlyStopping, type Goal } from '@assay/contract';
import { bracketHalving, bracketOf, brackets } from './hyperband.ts';
import { medianAsks, medianDecision, type FinishedTrials, type MedianSettings } from './median.ts';
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

// The contract's defaults, for a declaration stored before they were filled in.
const { asha: ASHA, hyperband: HYPERBAND, median: MEDIAN } = EARLY_STOPPING_DEFAULTS;

/** A sweep's pruner as our settings name it: successive halving (asha, a hyperband bracket) or the median. */
type Pruner =
  | { kind: 'halving'; settings: HalvingSettings; competes: (trialNumber: number) => boolean }
  | { kind: 'median'; settings: MedianSettings }
  | { kind: 'never' };

/** The pruner that judges this trial: for hyperband, its bracket's successive halving. */
function prunerFor(stopping: EarlyStopping, studyName: string, trialNumber: number): Pruner {
  switch (stopping.kind) {
    case 'asha':
      return {
        kind: 'halving',
        settings: {
          minStep: stopping.min_step ?? ASHA.min_step,
          reductionFactor: stopping.reduction_factor ?? ASHA.reduction_factor,
          minEarlyStoppingRate: stopping.min_early_stopping_rate ?? ASHA.min_early_stopping_rate,
        },
        competes: () => true,
      };
    case 'hyperband': {
      const settings = {
        minStep: stopping.min_step ?? HYPERBAND.min_step,
        maxStep: stopping.max_step,
        reductionFactor: stopping.reduction_factor ?? HYPERBAND.reduction_factor,
      };
      const all = brackets(settings);
      // No bracket (max_step below min_step): Optuna's pruner then never prunes.
      if (all.total === 0) return { kind: 'never' };
      const bracket = bracketOf(all, studyName, trialNumber);
      return {
        kind: 'halving',
        settings: bracketHalving(settings, bracket),
        competes: (trial) => bracketOf(all, studyName, trial) === bracket,
      };
    }
    case 'median':
      return {
        kind: 'median',
        settings: {
          startupTrials: stopping.startup_trials ?? MEDIAN.startup_trials,
          warmupSteps: stopping.warmup_steps ?? MEDIAN.warmup_steps,
          intervalSteps: stopping.interval_steps ?? MEDIAN.interval_steps,
          minTrials: stopping.min_trials ?? MEDIAN.min_trials,
        },
      };
  }
}

/**
 * False when the pruner decides "go on" at this report whatever the other trials did: between rungs, in the
 * warmup, inside an interval (most reports). Checked before anything is read or locked; decideStop applies it too.
 */
export function mayStop(stopping: EarlyStopping, studyName: string, report: TrialReport): boolean {
  const pruner = prunerFor(stopping, studyName, report.trialNumber);
  switch (pruner.kind) {
    case 'never':
      return false;
    case 'median':
      return medianAsks(pruner.settings, report);
    case 'halving': {
      const { minStep, reductionFactor, minEarlyStoppingRate } = pruner.settings;
      return report.step >= minStep * reductionFactor ** (minEarlyStoppingRate + report.completedRungs);
    }
  }
}

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
  if (!mayStop(stopping, studyName, report)) return NO_STOP;
  const pruner = prunerFor(stopping, studyName, report.trialNumber);
  switch (pruner.kind) {
    case 'never':
      return NO_STOP;
    case 'median': {
      const finished = await records.finishedAt(report.step);
      return { prune: medianDecision(pruner.settings, goal, report, finished), rungs: [] };
    }
    case 'halving': {
      const byRung = new Map<number, number[]>();
      for (const r of await records.rungsFrom(report.completedRungs)) {
        if (!pruner.competes(r.trialNumber)) continue;
        const values = byRung.get(r.rung) ?? [];
        values.push(r.value);
        byRung.set(r.rung, values);
      }
      return halvingDecision(pruner.settings, goal, report, (rung) => byRung.get(rung) ?? []);
    }
  }
}
