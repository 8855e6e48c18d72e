// Decision equality with Optuna: random pruning scenarios (several trials, interleaved reports, both goals,
// NaN and infinities, several settings of each pruner) replayed through Optuna's SuccessiveHalvingPruner,
// HyperbandPruner and MedianPruner (test/fixtures/optuna/prune_decisions.py) and through our decideStop, fed
// what the service reads from its tables; every prune decision must be the same. EARLY_STOP_SEED replays.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { EarlyStopping, Goal } from '@assay/contract';
import { brackets } from '../../../src/server/sweeps/early-stopping/hyperband.ts';
import { decideStop, type TrialReport } from '../../../src/server/sweeps/early-stopping/stop-decision.ts';
import { prng, seedFrom, type Prng } from '../../support/prng.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const SCRIPT = path.join(ROOT, 'test/fixtures/optuna/prune_decisions.py');

/** The Python with Optuna: ASSAY_SEARCH_PYTHON, else the search worker's venv, else the experiments' one. */
function optunaPython(): string {
  if (process.env.ASSAY_SEARCH_PYTHON) return process.env.ASSAY_SEARCH_PYTHON;
  const project = path.join(ROOT, '.venv-search/bin/python');
  return existsSync(project) ? project : '/tmp/optvenv/bin/python';
}

type Value = number | 'NaN' | 'Infinity' | '-Infinity';
interface Plan {
  reports: [number, Value][];
  finishes: boolean;
}
interface Scenario {
  kind: EarlyStopping['kind'];
  settings: Record<string, number>;
  goal: Goal;
  study_name: string;
  trials: Plan[];
  order: number[];
}
type Decision = [trial: number, step: number, pruned: boolean];

const asNumber = (v: Value) => (typeof v === 'number' ? v : Number(v));

function settingsOf(rng: Prng, kind: Scenario['kind']): Record<string, number> {
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
function orderOf(rng: Prng, trials: Plan[], concurrency: number): number[] {
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

function scenarioOf(rng: Prng, kind: Scenario['kind'], settings: Record<string, number>): Scenario {
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

/**
 * Our side of a scenario: the same replay, each report turned into what the service reads from its tables
 * (the run's objective series, its rung records, the sweep's other records and succeeded runs).
 */
async function ours(s: Scenario): Promise<Decision[]> {
  const trials = s.trials.map(() => ({
    values: new Map<number, number>(),
    rungs: new Map<number, number>(),
    reported: 0,
    over: false,
    finished: false,
  }));
  const stopping = { kind: s.kind, ...s.settings } as EarlyStopping;
  const decisions: Decision[] = [];
  for (const i of s.order) {
    const trial = trials[i]!;
    if (trial.over) continue;
    const [step, value] = s.trials[i]!.reports[trial.reported++]!;
    trial.values.set(step, asNumber(value));
    const steps = [...trial.values.keys()].sort((a, b) => a - b);
    const last = steps[steps.length - 1]!;
    const kept = [...trial.values.values()].filter((v) => !Number.isNaN(v));
    const report: TrialReport = {
      trialNumber: i,
      step: last,
      value: trial.values.get(last)!,
      previousStep: steps.length > 1 ? steps[steps.length - 2]! : -1,
      best: kept.length === 0 ? Number.NaN : s.goal === 'minimize' ? Math.min(...kept) : Math.max(...kept),
      completedRungs: trial.rungs.size,
    };
    const decision = await decideStop(stopping, s.goal, s.study_name, report, {
      rungsFrom: async (from) =>
        trials.flatMap((t, k) =>
          k === i
            ? []
            : [...t.rungs]
                .filter(([rung]) => rung >= from)
                .map(([rung, v]) => ({ trialNumber: k, rung, value: v })),
        ),
      finishedAt: async (at) => {
        const finished = trials.filter((t) => t.finished);
        return {
          count: finished.length,
          values: finished.filter((t) => t.values.has(at)).map((t) => t.values.get(at)!),
        };
      },
    });
    for (const r of decision.rungs) trial.rungs.set(r.rung, r.value);
    decisions.push([i, step, decision.prune]);
    if (decision.prune) trial.over = true;
    else if (trial.reported === s.trials[i]!.reports.length) {
      trial.over = true;
      trial.finished = s.trials[i]!.finishes;
    }
  }
  return decisions;
}

describe('early stopping decides as Optuna 5 does on the same reports', () => {
  it('asha, hyperband and median: every prune decision of random scenarios equals Optuna’s', async () => {
    const seed = seedFrom('EARLY_STOP_SEED');
    const rng = prng(seed);
    const scenarios: Scenario[] = [];
    for (const kind of ['asha', 'hyperband', 'median'] as const)
      for (let set = 0; set < 10; set++) {
        const settings = settingsOf(rng, kind);
        for (let k = 0; k < 6; k++) scenarios.push(scenarioOf(rng, kind, settings));
      }
    const grid: [number, number, number][] = [];
    for (let min = 1; min <= 4; min++)
      for (let max = 1; max <= 300; max += 1) grid.push([min, max, 2 + (max % 5)]);

    const python = optunaPython();
    const run = spawnSync(python, [SCRIPT], {
      input: JSON.stringify({ scenarios, brackets: grid }),
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    assert.equal(run.status, 0, `${python} ${SCRIPT} failed: ${run.error ?? ''} ${run.stderr}`);
    const reference = JSON.parse(run.stdout) as { decisions: Decision[][]; brackets: number[][] };

    // Hyperband's brackets: Python's float logarithm and ours land on the same count at exact powers.
    assert.deepEqual(
      grid.map(([min, max, rf]) => brackets({ minStep: min, maxStep: max, reductionFactor: rf }).budgets),
      reference.brackets,
    );

    const compared = { asha: 0, hyperband: 0, median: 0 };
    const pruned = { asha: 0, hyperband: 0, median: 0 };
    for (const [k, s] of scenarios.entries()) {
      const mine = await ours(s);
      assert.deepEqual(
        mine,
        reference.decisions[k],
        `seed ${seed}, scenario ${k} (${s.kind} ${JSON.stringify(s.settings)} ${s.goal})`,
      );
      compared[s.kind] += mine.length;
      pruned[s.kind] += mine.filter((d) => d[2]).length;
    }
    // Both answers must be exercised: scenarios where nothing is ever pruned would prove little.
    for (const kind of ['asha', 'hyperband', 'median'] as const) {
      assert.ok(
        pruned[kind] > 20 && compared[kind] - pruned[kind] > 100,
        `${kind}: ${JSON.stringify({ compared, pruned })}`,
      );
    }
    console.log(
      `seed ${seed}: decisions compared ${JSON.stringify(compared)}, of them pruned ${JSON.stringify(pruned)}`,
    );
  });
});
