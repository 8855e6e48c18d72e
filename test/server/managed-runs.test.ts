import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { committedExperiment, createRun, runningRun } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

describe('managed runs: POST …/provision and the signals to run workflows', () => {
  let t: TestService;
  let bare: TestService;
  let fake: FakeOrchestrator;
  let owner: string;
  let experimentId: string;

  before(async () => {
    fake = new FakeOrchestrator();
    t = await startTestService({ orchestrator: fake });
    bare = await startTestService();
    owner = (await t.createUser()).key;
    experimentId = (await committedExperiment(t, owner)).id;
  });
  after(async () => {
    await t.close();
    await bare.close();
  });

  it('answers 202 with the derived workflow id, the same on a repeat, and starts the workflow each time', async () => {
    const run = await createRun(t, owner, experimentId);
    const before_ = fake.callsOf('startManagedRun').length;
    const first = await t.as(owner).post(`${run.path}/provision`);
    assert.equal(first.status, 202, JSON.stringify(first.body));
    const workflowId = `run-${experimentId}-1-${run.r}`;
    assert.equal(first.body.workflow_id, workflowId);
    assert.equal(first.body.workflow_url, fake.workflowUrl(workflowId));
    assert.deepEqual(
      [
        first.body.run.id,
        first.body.run.state,
        first.body.run.managed,
        first.body.run.workflow_id,
        first.body.run.workflow_url,
        first.body.run.recovers_run_id,
      ],
      [run.id, 'pending', true, workflowId, fake.workflowUrl(workflowId), null],
    );
    const again = await t.as(owner).post(`${run.path}/provision`, {});
    assert.deepEqual([again.status, again.body.workflow_id], [202, workflowId]);
    assert.deepEqual(fake.callsOf('startManagedRun').slice(before_), [
      { runId: run.id, experimentId, n: 1, r: run.r, workflowId },
      { runId: run.id, experimentId, n: 1, r: run.r, workflowId },
    ]);
    const read = await t.as(owner).get(run.path);
    assert.deepEqual(
      [read.body.managed, read.body.workflow_id, read.body.workflow_url],
      [true, workflowId, fake.workflowUrl(workflowId)],
    );
  });

  it('gives unmanaged runs no workflow url, and keeps answering a managed run whatever its state', async () => {
    const plain = await createRun(t, owner, experimentId);
    const read = await t.as(owner).get(plain.path);
    assert.deepEqual(
      [read.body.managed, read.body.workflow_id, read.body.workflow_url, read.body.recovers_run_id],
      [false, null, null, null],
    );

    const managed = await createRun(t, owner, experimentId);
    assert.equal((await t.as(owner).post(`${managed.path}/provision`)).status, 202);
    assert.equal((await t.as(owner).post(`${managed.path}/cancel`)).body.state, 'failed');
    const ended = await t.as(owner).post(`${managed.path}/provision`);
    assert.deepEqual(
      [ended.status, ended.body.workflow_id, ended.body.run.state],
      [202, `run-${experimentId}-1-${managed.r}`, 'failed'],
    );
  });

  it('refuses a run that already runs (or ended) on its own: 409 invalid_state_transition', async () => {
    const running = await runningRun(t, owner, experimentId);
    const res = await t.as(owner).post(`${running.path}/provision`);
    assert.deepEqual(
      [res.status, res.body.error.code, res.body.error.details.state],
      [409, 'invalid_state_transition', 'running'],
    );
    assert.equal((await t.as(owner).get(running.path)).body.managed, false, 'nothing changed');
  });

  it('answers 404 for another tenant’s run and 403 to a worker key', async () => {
    const run = await createRun(t, owner, experimentId);
    const stranger = (await t.createUser()).key;
    const hidden = await t.as(stranger).post(`${run.path}/provision`);
    assert.deepEqual([hidden.status, hidden.body.error.code], [404, 'not_found']);
    const minted = await t.as(owner).post('/api-keys', {
      description: 'w',
      kind: 'worker',
      scopes: ['runs:read', 'runs:write'],
      run: { experiment_id: experimentId, n: 1, r: run.r },
    });
    const worker = await t.as(minted.body.key).post(`${run.path}/provision`);
    assert.deepEqual([worker.status, worker.body.error.code], [403, 'worker_key_restricted']);
    assert.equal((await t.as(owner).get(run.path)).body.managed, false);
  });

  it('answers 503 orchestrator_unavailable when Temporal is unreachable, keeps the run managed, and a retry finishes', async () => {
    const run = await createRun(t, owner, experimentId);
    fake.failing.add('startManagedRun');
    try {
      const res = await t.as(owner).post(`${run.path}/provision`);
      assert.deepEqual([res.status, res.body.error.code], [503, 'orchestrator_unavailable']);
      assert.match(res.body.error.message, /Temporal is unreachable/);
      assert.equal((await t.as(owner).get(run.path)).body.managed, true, 'the run stays managed');
    } finally {
      fake.failing.delete('startManagedRun');
    }
    const retry = await t.as(owner).post(`${run.path}/provision`);
    assert.deepEqual([retry.status, retry.body.workflow_id], [202, `run-${experimentId}-1-${run.r}`]);
    assert.equal(fake.callsOf<{ runId: string }>('startManagedRun').at(-1)!.runId, run.id);
  });

  it('answers 503 orchestrator_unavailable on a server without an orchestrator, before changing anything', async () => {
    const key = (await bare.createUser()).key;
    const experiment = await committedExperiment(bare, key);
    const run = await createRun(bare, key, experiment.id);
    const res = await bare.as(key).post(`${run.path}/provision`);
    assert.deepEqual([res.status, res.body.error.code], [503, 'orchestrator_unavailable']);
    const read = await bare.as(key).get(run.path);
    assert.deepEqual([read.body.managed, read.body.workflow_id, read.body.workflow_url], [false, null, null]);
  });

  it('signals the workflow after start, succeed, fail and cancel of a managed run, and never for unmanaged runs', async () => {
    const managed = async () => {
      const run = await createRun(t, owner, experimentId);
      assert.equal((await t.as(owner).post(`${run.path}/provision`)).status, 202);
      return { ...run, workflowId: `run-${experimentId}-1-${run.r}` };
    };
    const signalsTo = (workflowId: string) =>
      fake.callsOf('notifyRunChanged').filter((w) => w === workflowId).length;
    const start = async (path: string) => {
      await t.as(owner).get(`${path}/config`);
      assert.equal((await t.as(owner).post(`${path}/start`, {})).status, 200);
    };

    const a = await managed();
    await start(a.path);
    assert.equal(signalsTo(a.workflowId), 1, 'start');
    await t.as(owner).post(`${a.path}/heartbeat`);
    assert.equal(signalsTo(a.workflowId), 1, 'heartbeats are not signalled');
    await t.as(owner).post(`${a.path}/cancel`);
    assert.equal(signalsTo(a.workflowId), 2, 'cancel requested');
    await t.as(owner).post(`${a.path}/succeed`);
    assert.equal(signalsTo(a.workflowId), 3, 'succeed');

    const b = await managed();
    await start(b.path);
    await t.as(owner).post(`${b.path}/fail`, { reason: 'crash' });
    assert.equal(signalsTo(b.workflowId), 2, 'start and fail');

    const c = await managed();
    await t.as(owner).post(`${c.path}/cancel`);
    assert.equal(signalsTo(c.workflowId), 1, 'cancel of a pending run');

    // A failing signal never fails the request.
    const d = await managed();
    fake.failing.add('notifyRunChanged');
    try {
      await t.as(owner).get(`${d.path}/config`);
      const started = await t.as(owner).post(`${d.path}/start`, {});
      assert.deepEqual([started.status, started.body.state], [200, 'running']);
    } finally {
      fake.failing.delete('notifyRunChanged');
    }

    const count = fake.callsOf('notifyRunChanged').length;
    const plain = await runningRun(t, owner, experimentId);
    await t.as(owner).post(`${plain.path}/succeed`);
    assert.equal(fake.callsOf('notifyRunChanged').length, count, 'unmanaged runs have no workflow to tell');
  });

  it('signals the workflow when the watchdog fails a silent managed run', async () => {
    // A service of its own: its short watchdog would otherwise fail the other tests' running runs.
    const watched = new FakeOrchestrator();
    const w = await startTestService({
      orchestrator: watched,
      env: { ASSAY_WATCHDOG_TIMEOUT_S: '0.5', ASSAY_WATCHDOG_INTERVAL_S: '0.2' },
    });
    try {
      const key = (await w.createUser()).key;
      const experiment = await committedExperiment(w, key);
      const run = await createRun(w, key, experiment.id);
      assert.equal((await w.as(key).post(`${run.path}/provision`)).status, 202);
      await w.as(key).get(`${run.path}/config`);
      assert.equal((await w.as(key).post(`${run.path}/start`, {})).status, 200);
      const workflowId = `run-${experiment.id}-1-${run.r}`;
      const deadline = Date.now() + 10_000;
      while (watched.callsOf('notifyRunChanged').filter((id) => id === workflowId).length < 2) {
        assert.ok(Date.now() < deadline, 'the watchdog signals the workflow (after the start signal)');
        await new Promise((r) => setTimeout(r, 100));
      }
      const failed = await w.as(key).get(run.path);
      assert.deepEqual([failed.body.state, failed.body.failure_reason], ['failed', 'heartbeat_timeout']);
    } finally {
      await w.close();
    }
  });
});
