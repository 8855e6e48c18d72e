// Decision equality with Optuna: random pruning scenarios (several trials, interleaved reports, both goals,
// NaN and infinities, several settings of each pruner) replayed through Optuna's SuccessiveHalvingPruner,
// HyperbandPruner and MedianPruner (test/fixtures/optuna/prune_decisions.py) and through our decideStop, fed
// what the service reads from its tables; every prune decision must be the same. EARLY_STOP_SEED replays.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EarlyStopping } from '@assay/contract';
import { brackets } from '../../../src/server/sweeps/early-stopping/hyperband.ts';
import { decideStop, type TrialReport } from '../../../src/server/sweeps/early-stopping/stop-decision.ts';
import {
  asNumber,
  optunaDecisions,
  scenarioOf,
  settingsOf,
  type Decision,
  type Scenario,
} from '../../support/optuna-scenarios.ts';
import { prng, seedFrom } from '../../support/prng.ts';

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

    const reference = optunaDecisions(scenarios, grid);

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
