import type { Goal } from '@assay/contract';

/** Optuna's MedianPruner (PercentilePruner at 50). */
export interface MedianSettings {
  startupTrials: number;
  warmupSteps: number;
  intervalSteps: number;
  minTrials: number;
}

/** The trial asked about: its newest step, the step it reported before that (−1 if none), its best value. */
export interface MedianReport {
  step: number;
  previousStep: number;
  /** The lowest (minimize) or highest (maximize) value it reported, NaN ignored; NaN when all were NaN. */
  best: number;
}

/** The finished trials: how many, and the values those that reported the report's step had there. */
export interface FinishedTrials {
  count: number;
  values: readonly number[];
}

/**
 * Optuna 5's `PercentilePruner.prune` at the 50th percentile, in its order: no pruning before any trial
 * finished or while fewer than startup_trials have, before warmup_steps, or away from the first report of an
 * interval; a trial whose every value is NaN is pruned; otherwise it is pruned when its best value is worse
 * than the median of the finished trials' values at the same step (no decision when fewer than min_trials of
 * them reported that step).
 */
export function medianDecision(
  settings: MedianSettings,
  goal: Goal,
  report: MedianReport,
  finished: FinishedTrials,
): boolean {
  if (finished.count === 0 || finished.count < settings.startupTrials) return false;
  if (!medianAsks(settings, report)) return false;
  const { best } = report;
  if (Number.isNaN(best)) return true;
  if (finished.values.length < settings.minTrials) return false;
  const median = nanMedian(finished.values);
  if (Number.isNaN(median)) return false;
  return goal === 'maximize' ? best < median : best > median;
}

/**
 * Whether the report is one the pruner judges, whatever the other trials did: past the warmup, and the first
 * report of its interval (Optuna's `_is_first_in_interval_step`).
 */
export function medianAsks({ warmupSteps, intervalSteps }: MedianSettings, report: MedianReport) {
  if (report.step < warmupSteps) return false;
  const nearestLower = Math.floor((report.step - warmupSteps) / intervalSteps) * intervalSteps + warmupSteps;
  return report.previousStep < nearestLower;
}

const ascending = (a: number, b: number) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * numpy's `nanpercentile(values, 50)` with its default linear method, operation for operation: the same
 * interpolation gives the same float, and the same NaN where infinities meet (the median of [1, 2, ∞] is NaN
 * there, so no trial is pruned by it).
 */
export function nanMedian(values: readonly number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort(ascending);
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const virtual = (n - 1) * 0.5;
  // numpy takes the last element for both neighbours at the top end, and its gamma is then 1.
  const previous = virtual >= n - 1 ? -1 : Math.floor(virtual);
  const next = virtual >= n - 1 ? -1 : previous + 1;
  const gamma = virtual - previous;
  const a = sorted.at(previous)!;
  const b = sorted.at(next)!;
  const diff = b - a;
  return gamma >= 0.5 ? b - diff * (1 - gamma) : a + diff * gamma;
}
