// Random pruning scenarios and Optuna's decisions on them (test/fixtures/optuna/prune_decisions.py), for the
// tests that compare early stopping's decisions with Optuna's: each scenario is a sweep's trials, each trial's
// reports (step, value), whether it finishes, and the order the reports arrive in.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { EarlyStopping, Goal } from '@assay/contract';
import type { Prng } from './prng.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SCRIPT = path.join(ROOT, 'test/fixtures/optuna/prune_decisions.py');

/** The Python with Optuna: ASSAY_SEARCH_PYTHON, else the search worker's venv, else the experiments' one. */
function optunaPython(): string {
  if (process.env.ASSAY_SEARCH_PYTHON) return process.env.ASSAY_SEARCH_PYTHON;
  const project = path.join(ROOT, '.venv-search/bin/python');
  return existsSync(project) ? project : '/tmp/optvenv/bin/python';
}

export type Value = number | 'NaN' | 'Infinity' | '-Infinity';
export interface Plan {
  reports: [number, Value][];
  finishes: boolean;
}
export interface Scenario {
  kind: EarlyStopping['kind'];
  settings: Record<string, number>;
  goal: Goal;
  study_name: string;
  trials: Plan[];
  order: number[];
}
export type Decision = [trial: number, step: number, pruned: boolean];

export const asNumber = (v: Value) => (typeof v === 'number' ? v : Number(v));

export function settingsOf(rng: Prng, kind: Scenario['kind']): Record<string, number> {
  switch (kind) {
    case 'asha':
      return {
        min_step: 1 + rng.int(4),
        reduction_factor: 2 + rng.int(3),
        min_early_stopping_rate: rng.int(3),
      };
    case 'hyperband': {
      const min = 1 + rng.int(3);
      return {
        min_step: min,
        max_step: rng.pick([min, 9, 27, 30, 40 + rng.int(40)]),
        reduction_factor: 2 + rng.int(3),
      };
    }
    case 'median':
      return {
        startup_trials: rng.int(5),
        warmup_steps: rng.int(6),
        interval_steps: 1 + rng.int(4),
        min_trials: 1 + rng.int(3),
      };
  }
}

/** A trial's reports: increasing steps (mostly one apart, sometimes jumping rungs), a noisy curve. */
function planOf(rng: Prng, ties: boolean): Plan {
  const reports: [number, Value][] = [];
  let step = rng.int(2);
  let level = rng.next() * 4;
  const length = 1 + rng.int(30);
  for (let i = 0; i < length; i++) {
    level += (rng.next() - 0.6) * 0.5;
    const roll = rng.next();
    const value: Value =
      roll < 0.04
        ? 'NaN'
        : roll < 0.055
          ? 'Infinity'
          : roll < 0.065
            ? '-Infinity'
            : ties
              ? Math.round(level * 2) / 2
              : level;
    reports.push([step, value]);
    step += rng.chance(0.1) ? 2 + rng.int(10) : 1;
  }
  return { reports, finishes: rng.chance(0.8) };
}

/** The reports' order as a sweep of `concurrency` would make it: a trial starts when a slot frees. */
export function orderOf(rng: Prng, trials: Plan[], concurrency: number): number[] {
  const left = trials.map((t) => t.reports.length);
  const active: number[] = [];
  let next = 0;
  const order: number[] = [];
  for (;;) {
    while (active.length < concurrency && next < trials.length) active.push(next++);
    if (active.length === 0) return order;
    const at = rng.int(active.length);
    const trial = active[at]!;
    order.push(trial);
    if (--left[trial]! === 0) active.splice(at, 1);
  }
}

export function scenarioOf(rng: Prng, kind: Scenario['kind'], settings: Record<string, number>): Scenario {
  const trials = Array.from({ length: 3 + rng.int(12) }, () => planOf(rng, rng.chance(0.3)));
  return {
    kind,
    settings,
    goal: rng.pick(['minimize', 'maximize'] as const),
    study_name: rng.uuid(),
    trials,
    order: orderOf(rng, trials, 1 + rng.int(4)),
  };
}

/** Optuna's decisions on each scenario, and HyperbandPruner's bracket budgets for each (min, max, rf). */
export function optunaDecisions(
  scenarios: Scenario[],
  brackets: [number, number, number][] = [],
): { decisions: Decision[][]; brackets: number[][] } {
  const python = optunaPython();
  const run = spawnSync(python, [SCRIPT], {
    input: JSON.stringify({ scenarios, brackets }),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  assert.equal(run.status, 0, `${python} ${SCRIPT} failed: ${run.error ?? ''} ${run.stderr}`);
  return JSON.parse(run.stdout);
}
