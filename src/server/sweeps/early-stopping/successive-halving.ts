import type { Goal } from '@assay/contract';

/** Asynchronous successive halving, as Optuna's SuccessiveHalvingPruner with an integer min_resource. */
export interface HalvingSettings {
  minStep: number;
  reductionFactor: number;
  minEarlyStoppingRate: number;
}

/** One report of a trial: its newest step, the value there, and how many rungs it completed before. */
export interface HalvingReport {
  step: number;
  value: number;
  completedRungs: number;
}

/**
 * What the pruner decided: `prune`, and the rung values to record (Optuna's `completed_rung_<k>` attributes),
 * which are kept even when the trial is pruned at that rung, as Optuna keeps them.
 */
export interface HalvingDecision {
  prune: boolean;
  rungs: { rung: number; value: number }[];
}

const ascending = (a: number, b: number) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Optuna 5's `SuccessiveHalvingPruner.prune` step by step (bootstrap_count 0): from the trial's current rung,
 * each rung whose promotion step it has reached records its value and promotes it only when the value is in
 * the top 1/reduction_factor of the values recorded at that rung (its own included; the first trials of a
 * rung, too few to fill a fraction, must be the best). A NaN at a promotion step prunes without a record.
 * `competitors(rung)` gives the other trials' values recorded at a rung before this report.
 */
export function halvingDecision(
  settings: HalvingSettings,
  goal: Goal,
  report: HalvingReport,
  competitors: (rung: number) => readonly number[],
): HalvingDecision {
  const { minStep, reductionFactor, minEarlyStoppingRate } = settings;
  const { step, value } = report;
  const rungs: HalvingDecision['rungs'] = [];
  for (let rung = report.completedRungs; ; rung += 1) {
    if (step < minStep * reductionFactor ** (minEarlyStoppingRate + rung)) return { prune: false, rungs };
    if (Number.isNaN(value)) return { prune: true, rungs };
    rungs.push({ rung, value });
    if (!promotable(value, [...competitors(rung), value], reductionFactor, goal))
      return { prune: true, rungs };
  }
}

/** Optuna's `_is_trial_promotable_to_next_rung`. */
function promotable(value: number, competing: number[], reductionFactor: number, goal: Goal): boolean {
  let index = Math.floor(competing.length / reductionFactor) - 1;
  if (index === -1) index = 0;
  competing.sort(ascending);
  return goal === 'maximize' ? value >= competing[competing.length - 1 - index]! : value <= competing[index]!;
}
