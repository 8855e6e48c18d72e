import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sweepRequest, type TuningState } from '../../../src/web/ui/sweep-request.ts';

const tuning = (t: Partial<TuningState> = {}): TuningState => ({
  space: '',
  trials: '16',
  seed: '',
  metric: '',
  goal: 'minimize',
  stopping: '',
  maxStep: '',
  maxRetries: '0',
  ...t,
});
const fields = { baseYaml: 'lr: 0.1\n', points: '', concurrency: 2 };

describe('sweepRequest: the sweep form’s fields as the client’s request', () => {
  it('reads a search: the space from YAML, trials and seed as numbers, early stopping with its max step', async () => {
    const spec = await sweepRequest({
      ...fields,
      strategy: 'tpe',
      tuning: tuning({
        space: 'lr: {distribution: log_uniform, low: 1.0e-5, high: 1}',
        trials: '32',
        seed: '7',
        metric: ' val_loss ',
        stopping: 'asha',
        maxStep: '30',
        maxRetries: '1',
      }),
    });
    assert.deepEqual(spec, {
      baseYaml: 'lr: 0.1\n',
      concurrency: 2,
      strategy: 'tpe',
      space: { lr: { distribution: 'log_uniform', low: 1e-5, high: 1 } },
      trials: 32,
      seed: 7,
      objective: { metric: 'val_loss', goal: 'minimize' },
      earlyStopping: { kind: 'asha', max_step: 30 },
      maxRetries: 1,
    });
  });

  it('leaves out what the form leaves empty: no objective, no early stopping, no retries, no seed', async () => {
    const spec = await sweepRequest({
      ...fields,
      strategy: 'random',
      tuning: tuning({ space: 'x: {distribution: uniform, low: 0, high: 1}', stopping: 'asha' }),
    });
    assert.deepEqual(JSON.parse(JSON.stringify(spec)), {
      baseYaml: 'lr: 0.1\n',
      concurrency: 2,
      strategy: 'random',
      space: { x: { distribution: 'uniform', low: 0, high: 1 } },
      trials: 16,
      earlyStopping: { kind: 'asha' },
    });
  });

  it('reads grid axes and a list of points, each with the objective', async () => {
    const objective = tuning({ metric: 'acc', goal: 'maximize', stopping: 'median' });
    const grid = await sweepRequest({
      ...fields,
      strategy: 'grid',
      points: 'lr: 0.1, 0.01',
      tuning: objective,
    });
    assert.deepEqual(
      [grid.strategy, 'grid' in grid && grid.grid, grid.objective, grid.earlyStopping],
      ['grid', { lr: [0.1, 0.01] }, { metric: 'acc', goal: 'maximize' }, { kind: 'median' }],
    );
    const list = await sweepRequest({ ...fields, strategy: 'list', points: '[{"lr": 1}]', tuning: tuning() });
    assert.deepEqual([list.strategy, 'list' in list && list.list], ['list', [{ lr: 1 }]]);
    await assert.rejects(
      sweepRequest({ ...fields, strategy: 'list', points: '{}', tuning: tuning() }),
      /JSON array/,
    );
  });
});
