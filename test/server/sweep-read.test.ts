import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { createExperiment } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

const BASE = 'optimizer:\n  lr: 3.0e-4\nseed: 0\nlaunch:\n  command: python train.py\n';

describe('reading sweeps: progress by run state, each trial’s objective, the best, warnings, the list', () => {
  let t: TestService;
  let fake: FakeOrchestrator;
  let owner: string;
  const orchestratorKey = generateOrchestratorKey();

  before(async () => {
    fake = new FakeOrchestrator();
    t = await startTestService({
      orchestrator: fake,
      env: { ASSAY_LOCAL_COMPUTE_USERS: 'all', ASSAY_ORCHESTRATOR_KEY: orchestratorKey },
    });
    owner = (await t.createUser()).key;
  });
  after(() => t.close());

  const createSweep = async (body: Record<string, unknown>) => {
    const id = (await createExperiment(t, owner, { name: 'sweep' })).id;
    const res = await t.as(owner).post(`/experiments/${id}/sweeps`, { base_yaml: BASE, ...body });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    return { id, sweep: res.body };
  };
  const runPath = (id: string, n: number, r = 1) => `/experiments/${id}/variations/${n}/runs/${r}`;
  // As a runner does: read the config, start, log the objective's points.
  const start = async (id: string, n: number, r = 1) => {
    await t.as(owner).get(`${runPath(id, n, r)}/config`);
    assert.equal((await t.as(owner).post(`${runPath(id, n, r)}/start`, {})).status, 200);
  };
  const log = async (id: string, n: number, r: number, key: string, values: (number | string)[]) => {
    const metrics = values.map((value, i) => ({ key, step: i + 1, value }));
    const res = await t.as(owner).post(`${runPath(id, n, r)}/metrics`, { metrics });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  };
  const runId = async (id: string, n: number, r = 1) => (await t.as(owner).get(runPath(id, n, r))).body.id;
  const read = async (id: string, sweepId: string) => {
    const res = await t.as(owner).get(`/experiments/${id}/sweeps/${sweepId}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };

  it('counts each run in one bucket, shows each trial’s point and last objective, and names the best with its config', async () => {
    const { id, sweep } = await createSweep({
      grid: { 'optimizer.lr': [1e-4, 3e-4, 1e-3, 3e-3] },
      objective: { metric: 'val_loss', goal: 'minimize' },
      max_retries: 1,
    });
    assert.deepEqual(sweep.declaration.objective, { metric: 'val_loss', goal: 'minimize' });
    assert.deepEqual([sweep.declaration.strategy, sweep.declaration.trials], ['grid', 4]);
    // Its workflow runs (on a real server): a failure it may retry leaves the sweep not done.
    fake.workflows.set(sweep.workflow_id, { open: true, status: 'RUNNING' });

    await start(id, 1);
    await log(id, 1, 1, 'val_loss', [0.9, 0.7, 0.5]);
    await t.as(owner).post(`${runPath(id, 1)}/succeed`);
    await start(id, 2);
    await log(id, 2, 1, 'val_loss', [0.8, 0.4]);
    await t.as(owner).post(`${runPath(id, 2)}/succeed`);
    // Stopped early by the sweep (the orchestrator fails it with that reason): not an error.
    await start(id, 3);
    await log(id, 3, 1, 'val_loss', [0.95]);
    await t.as(orchestratorKey).post(`/orchestrator/runs/${await runId(id, 3)}/fail`, {
      reason: 'stopped_early',
    });
    // A crash whose instance was lost: a later run of the same variation takes over.
    await start(id, 4);
    await t.as(owner).post(`${runPath(id, 4)}/fail`, { reason: 'crash' });
    const mid = await read(id, sweep.id);
    assert.deepEqual(mid.progress, {
      total: 4,
      pending: 0,
      running: 0,
      succeeded: 2,
      failed: 1,
      stopped_early: 1,
      retried: 0,
      failed_by_reason: { crash: 1 },
      done: false,
    });
    const recovery = await t.as(orchestratorKey).post(`/orchestrator/runs/${await runId(id, 4)}/recovery`);
    assert.equal(recovery.status, 201, JSON.stringify(recovery.body));

    const s = await read(id, sweep.id);
    assert.deepEqual(s.progress, {
      total: 5,
      pending: 1,
      running: 0,
      succeeded: 2,
      failed: 0,
      stopped_early: 1,
      retried: 1,
      failed_by_reason: {},
      done: false,
    });
    assert.deepEqual(
      s.runs.map((r: Record<string, unknown>) => [r.n, r.r, r.state, r.params, r.objective, r.step, r.trial]),
      [
        [1, 1, 'succeeded', { 'optimizer.lr': 1e-4 }, 0.5, 3, null],
        [2, 1, 'succeeded', { 'optimizer.lr': 3e-4 }, 0.4, 2, null],
        [3, 1, 'failed', { 'optimizer.lr': 1e-3 }, 0.95, 1, null],
        [4, 1, 'failed', { 'optimizer.lr': 3e-3 }, null, null, null],
        [4, 2, 'pending', { 'optimizer.lr': 3e-3 }, null, null, null],
      ],
    );
    assert.equal(s.runs[2].failure_reason, 'stopped_early');
    assert.deepEqual(s.best, {
      n: 2,
      r: 1,
      variation_name: 'sweep optimizer.lr=0.0003',
      trial: null,
      value: 0.4,
      params: { 'optimizer.lr': 3e-4 },
      config: { optimizer: { lr: 3e-4 }, seed: 0 },
    });
    assert.deepEqual(s.warnings, []);

    await start(id, 4, 2);
    await log(id, 4, 2, 'val_loss', [0.6, 0.3]);
    await t.as(owner).post(`${runPath(id, 4, 2)}/succeed`);
    const done = await read(id, sweep.id);
    assert.deepEqual(
      [done.progress.succeeded, done.progress.retried, done.progress.pending, done.progress.done],
      [3, 1, 0, true],
    );
    assert.deepEqual([done.best.n, done.best.r, done.best.value], [4, 2, 0.3]);
    assert.deepEqual(done.best.config, { optimizer: { lr: 3e-3 }, seed: 0 });

    const list = await t.as(owner).get(`/experiments/${id}/sweeps`);
    assert.equal(list.status, 200, JSON.stringify(list.body));
    assert.deepEqual(
      list.body.items.map((i: Record<string, unknown>) => [i.id, i.best_value, i.progress]),
      [[sweep.id, 0.3, done.progress]],
    );
    assert.equal(list.body.next_cursor, null);
    assert.deepEqual(list.body.items[0].declaration, done.declaration);
  });

  it('takes the best by the goal: maximize picks the highest, and a NaN objective is none', async () => {
    const { id, sweep } = await createSweep({
      list: [{ seed: 1 }, { seed: 2 }, { seed: 3 }],
      objective: { metric: 'val_acc', goal: 'maximize' },
    });
    for (const [n, values] of [
      [1, [0.5, 0.7]],
      [2, [0.6, 0.9]],
      [3, [0.99, 'NaN']],
    ] as const) {
      await start(id, n);
      await log(id, n, 1, 'val_acc', [...values]);
      await t.as(owner).post(`${runPath(id, n)}/succeed`);
    }
    const s = await read(id, sweep.id);
    assert.deepEqual(
      s.runs.map((r: Record<string, unknown>) => [r.objective, r.step]),
      [
        [0.7, 2],
        [0.9, 2],
        [null, 2],
      ],
    );
    assert.deepEqual([s.best.n, s.best.value, s.best.params], [2, 0.9, { seed: 2 }]);
  });

  it('warns once a run has ended when no run logged the objective metric, naming the keys they did log', async () => {
    const { id, sweep } = await createSweep({
      list: [{ seed: 1 }, { seed: 2 }],
      objective: { metric: 'val_loss', goal: 'minimize' },
    });
    await start(id, 1);
    await log(id, 1, 1, 'loss', [0.5]);
    assert.deepEqual((await read(id, sweep.id)).warnings, [], 'no run has ended yet');
    // A pending run cancelled never ran: it says nothing about the metric's name.
    await t.as(owner).post(`${runPath(id, 2)}/cancel`);
    assert.deepEqual((await read(id, sweep.id)).warnings, []);
    await t.as(owner).post(`${runPath(id, 1)}/succeed`);
    const s = await read(id, sweep.id);
    assert.deepEqual(s.warnings, [
      "no run has logged the objective metric `val_loss` (its runs logged `loss`); check the metric's name in your training script",
    ]);
    assert.equal(s.best, null);
    // A sweep without an objective has nothing to warn about.
    const plain = await createSweep({ list: [{ seed: 1 }] });
    await start(plain.id, 1);
    await t.as(owner).post(`${runPath(plain.id, 1)}/succeed`);
    const read2 = await read(plain.id, plain.sweep.id);
    assert.deepEqual([read2.warnings, read2.best, read2.declaration.objective], [[], null, null]);
  });

  it('is done only when nothing more will start: a failure that may be retried waits for the sweep’s workflow', async () => {
    const { id, sweep } = await createSweep({ list: [{ seed: 1 }], max_retries: 2 });
    await start(id, 1);
    await t.as(owner).post(`${runPath(id, 1)}/fail`, { reason: 'crash' });
    fake.workflows.set(sweep.workflow_id, { open: true, status: 'RUNNING' });
    assert.equal((await read(id, sweep.id)).progress.done, false, 'the workflow may still retry it');
    fake.workflows.set(sweep.workflow_id, { open: false, status: 'CANCELED' });
    assert.equal((await read(id, sweep.id)).progress.done, true);
    // Temporal unreachable: not known to be done.
    fake.workflows.set(sweep.workflow_id, { open: true, status: 'RUNNING' });
    fake.failing.add('workflowState');
    try {
      const s = await read(id, sweep.id);
      assert.deepEqual([s.progress.done, s.progress.failed_by_reason], [false, { crash: 1 }]);
    } finally {
      fake.failing.delete('workflowState');
    }
  });

  it('shows a searching sweep’s trials from its variations and is not done before its last trial is made', async () => {
    // The rows a searching sweep writes (its declaration, each trial's variation marked with its trial and
    // point), written here around the API onto a list sweep's own, as the read side sees them.
    const { id, sweep } = await createSweep({
      list: [{ 'optimizer.lr': 0.01 }, { 'optimizer.lr': 0.001 }],
      objective: { metric: 'val_loss', goal: 'minimize' },
    });
    const declared = {
      strategy: 'tpe',
      space: { 'optimizer.lr': { distribution: 'log_uniform', low: 1e-5, high: 1 } },
      trials: 3,
      seed: 7,
      objective: { metric: 'val_loss', goal: 'minimize' },
      early_stopping: { kind: 'asha', min_step: 1, max_step: 30, reduction_factor: 3 },
      max_retries: 0,
      name_prefix: 'sweep',
    };
    await t.service.db.query(`UPDATE sweeps SET spec = $2 WHERE id = $1`, [
      sweep.id,
      { ...declared, base_yaml: BASE },
    ]);
    for (const [n, lr] of [
      [1, 0.01],
      [2, 0.001],
    ] as const)
      await t.service.db.query(
        `UPDATE variations SET sweep_id = $2, sweep_trial = $3, sweep_params = $4 WHERE experiment_id = $1 AND n = $3`,
        [id, sweep.id, n, { 'optimizer.lr': lr }],
      );
    for (const n of [1, 2]) {
      await start(id, n);
      await log(id, n, 1, 'val_loss', [1 / n]);
      await t.as(owner).post(`${runPath(id, n)}/succeed`);
    }
    fake.workflows.set(sweep.workflow_id, { open: true, status: 'RUNNING' });
    const s = await read(id, sweep.id);
    // The declaration answers each default the sweep left out.
    const asha = { ...declared.early_stopping, min_early_stopping_rate: 0 };
    assert.deepEqual(s.declaration, { ...declared, early_stopping: asha });
    assert.deepEqual(
      s.runs.map((r: Record<string, unknown>) => [r.trial, r.params, r.objective]),
      [
        [1, { 'optimizer.lr': 0.01 }, 1],
        [2, { 'optimizer.lr': 0.001 }, 0.5],
      ],
    );
    assert.deepEqual([s.progress.succeeded, s.progress.done], [2, false], 'trial 3 is still to come');
    assert.deepEqual([s.best.trial, s.best.value], [2, 0.5]);
    fake.workflows.set(sweep.workflow_id, { open: false, status: 'CANCELED' });
    assert.equal((await read(id, sweep.id)).progress.done, true, 'cancelled before its last trial');
  });

  it('lists an experiment’s sweeps newest first, a page at a time; 404 for an unseen experiment', async () => {
    const { id, sweep } = await createSweep({ list: [{ seed: 1 }] });
    // A second sweep of the same experiment (a repeat sweep, once committed), recorded here directly.
    const [second] = await t.service.db.query<{ id: string }>(
      `INSERT INTO sweeps (experiment_id, workflow_id, spec, concurrency, created_at)
       VALUES ($1, $2, $3, 2, now() + interval '1 second') RETURNING id`,
      [id, `sweep-second-${id}`, { strategy: 'repeat', repeats: 3, name_prefix: 'sweep' }],
    );
    const first = await t.as(owner).get(`/experiments/${id}/sweeps?limit=1`);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(
      first.body.items.map((i: { id: string }) => i.id),
      [second!.id],
    );
    assert.deepEqual(first.body.items[0].progress.total, 0);
    assert.deepEqual(first.body.items[0].declaration.repeats, 3);
    const next = await t.as(owner).get(`/experiments/${id}/sweeps?limit=1&cursor=${first.body.next_cursor}`);
    assert.deepEqual(
      [next.body.items.map((i: { id: string }) => i.id), next.body.next_cursor],
      [[sweep.id], null],
    );
    const bad = await t.as(owner).get(`/experiments/${id}/sweeps?cursor=nonsense`);
    assert.deepEqual([bad.status, bad.body.error.code], [400, 'invalid_cursor']);
    const stranger = (await t.createUser()).key;
    assert.equal((await t.as(stranger).get(`/experiments/${id}/sweeps`)).status, 404);
    const empty = await createExperiment(t, owner, { name: 'no sweeps' });
    assert.deepEqual((await t.as(owner).get(`/experiments/${empty.id}/sweeps`)).body, {
      items: [],
      next_cursor: null,
    });
  });
});
