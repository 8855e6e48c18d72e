import { crc32 } from 'node:zlib';
import type { HalvingSettings } from './successive-halving.ts';

/** Optuna's HyperbandPruner with an integer max_resource (our `max_step`) and bootstrap_count 0. */
export interface HyperbandSettings {
  minStep: number;
  maxStep: number;
  reductionFactor: number;
}

/** The brackets: each a successive-halving pruner, and the share of trials it gets. */
export interface Brackets {
  budgets: number[];
  total: number;
}

/**
 * Optuna's `_try_initialization`: floor(log_rf(max / min)) + 1 brackets (the float logarithm as Python's
 * math.log computes it, so an exact power lands where Optuna's does), bracket b getting
 * ceil(n · rf^s / (s + 1)) with s = n − 1 − b.
 */
export function brackets({ minStep, maxStep, reductionFactor }: HyperbandSettings): Brackets {
  const count = Math.floor(Math.log(maxStep / minStep) / Math.log(reductionFactor)) + 1;
  const budgets = Array.from({ length: Math.max(count, 0) }, (_, b) => {
    const s = count - 1 - b;
    return Math.ceil((count * reductionFactor ** s) / (s + 1));
  });
  return { budgets, total: budgets.reduce((a, b) => a + b, 0) };
}

/**
 * Optuna's `_get_bracket_id`: crc32 of `${study_name}_${trial_number}` modulo the total budget, placed in the
 * brackets by their budgets. Our study name is the sweep id (see docs/sweeps.md for the trial number).
 */
export function bracketOf({ budgets, total }: Brackets, studyName: string, trialNumber: number): number {
  let n = crc32(`${studyName}_${trialNumber}`) % total;
  for (const [bracket, budget] of budgets.entries()) {
    n -= budget;
    if (n < 0) return bracket;
  }
  throw new Error('unreachable: the budgets sum to the total');
}

/** The successive halving a bracket runs: its min_early_stopping_rate is its index. */
export const bracketHalving = (settings: HyperbandSettings, bracket: number): HalvingSettings => ({
  minStep: settings.minStep,
  reductionFactor: settings.reductionFactor,
  minEarlyStoppingRate: bracket,
});
