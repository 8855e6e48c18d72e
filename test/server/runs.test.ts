import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  committedExperiment,
  createExperiment,
  createRun,
  addVariation,
  runningRun,
} from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

describe('runs', () => {
  let t: TestService;
  let key: string;
  let experimentId: string;
  before(async () => {
    t = await startTestService();
    key = (await t.createUser()).key;
    experimentId = (await committedExperiment(t, key)).id;
  });
  after(() => t.close());

  it('creates pending runs numbered per variation, and gets and lists them', async () => {
    const e = await committedExperiment(t, key);
    const first = await createRun(t, key, e.id);
    const second = await createRun(t, key, e.id);
    assert.deepEqual([first.r, second.r], [1, 2]);
    const got = await t.as(key).get(first.path);
    assert.equal(got.body.state, 'pending');
    assert.equal(got.body.config_read_at, null);
    const list = await t.as(key).get(`/experiments/${e.id}/variations/1/runs`);
    assert.deepEqual(
      list.body.items.map((r: any) => r.r),
      [1, 2],
    );
  });

  it('numbers 50 concurrent run creations 1..50', async () => {
    const e = await committedExperiment(t, key);
    const results = await Promise.all(
      Array.from({ length: 50 }, () => t.as(key).post(`/experiments/${e.id}/variations/1/runs`)),
    );
    assert.ok(results.every((r) => r.status === 201));
    assert.deepEqual(
      results.map((r) => r.body.r).sort((a, b) => a - b),
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
  });

  it('allows runs only while the experiment is committed', async () => {
    const draft = await createExperiment(t, key);
    await addVariation(t, key, draft.id);
    const res = await t.as(key).post(`/experiments/${draft.id}/variations/1/runs`);
    assert.equal(res.status, 409);
    assert.equal(res.body.error.code, 'experiment_not_runnable');
    const concluded = await committedExperiment(t, key);
    await t.as(key).post(`/experiments/${concluded.id}/conclude`);
    assert.equal((await t.as(key).post(`/experiments/${concluded.id}/variations/1/runs`)).status, 409);
    assert.equal((await t.as(key).post(`/experiments/${concluded.id}/variations/2/runs`)).status, 404);
  });

  it('records config_read_at and starts only after the config was read, keeping the environment snapshot', async () => {
    const run = await createRun(t, key, experimentId);
    const early = await t.as(key).post(`${run.path}/start`, { environment: { os: 'linux' } });
    assert.equal(early.status, 409);
    assert.equal(early.body.error.code, 'config_not_read');
    const config = await t.as(key).get(`${run.path}/config`);
    assert.equal(config.status, 200);
    assert.deepEqual(config.body.config_json, { lr: 0.1 });
    assert.deepEqual(config.body.launch_config, {});
    const readAt = config.body.config_read_at;
    assert.equal(
      (await t.as(key).get(`${run.path}/config`)).body.config_read_at,
      readAt,
      'the first read is kept',
    );
    const started = await t
      .as(key)
      .post(`${run.path}/start`, { environment: { os: 'linux', gpus: ['A100'] } });
    assert.equal(started.status, 200);
    assert.equal(started.body.state, 'running');
    assert.deepEqual(started.body.environment, { os: 'linux', gpus: ['A100'] });
    assert.equal(started.body.last_heartbeat_at, started.body.started_at);
  });

  it('follows the run state machine: each move from each state is allowed or refused with 409', async () => {
    const moves: Record<string, { body?: unknown; ok: string[] }> = {
      start: { body: { environment: {} }, ok: ['pending'] },
      heartbeat: { ok: ['running'] },
      succeed: { ok: ['running'] },
      fail: { body: { reason: 'crash', message: 'OOM' }, ok: ['running'] },
    };
    const reach = async (state: string) => {
      const run = await createRun(t, key, experimentId);
      await t.as(key).get(`${run.path}/config`);
      if (state !== 'pending') await t.as(key).post(`${run.path}/start`);
      if (state === 'succeeded') await t.as(key).post(`${run.path}/succeed`);
      if (state === 'failed') await t.as(key).post(`${run.path}/fail`, { reason: 'abandoned' });
      assert.equal((await t.as(key).get(run.path)).body.state, state);
      return run;
    };
    for (const state of ['pending', 'running', 'succeeded', 'failed']) {
      for (const [move, { body, ok }] of Object.entries(moves)) {
        const run = await reach(state);
        const res = await t.as(key).post(`${run.path}/${move}`, body);
        if (ok.includes(state))
          assert.equal(res.status, 200, `${move} from ${state}: ${JSON.stringify(res.body)}`);
        else {
          assert.equal(res.status, 409, `${move} from ${state} must be refused`);
          assert.equal(res.body.error.details.state, state);
        }
      }
    }
  });

  it('fails with reason abandoned or crash and keeps the message; other reasons are refused (422)', async () => {
    const crash = await runningRun(t, key, experimentId);
    const failed = await t.as(key).post(`${crash.path}/fail`, { reason: 'crash', message: 'CUDA OOM' });
    assert.deepEqual(
      [failed.body.state, failed.body.failure_reason, failed.body.failure_message],
      ['failed', 'crash', 'CUDA OOM'],
    );
    assert.notEqual(failed.body.ended_at, null);
    const other = await runningRun(t, key, experimentId);
    assert.equal((await t.as(key).post(`${other.path}/fail`, { reason: 'heartbeat_timeout' })).status, 422);
    assert.equal((await t.as(key).post(`${other.path}/fail`, {})).status, 422);
    assert.equal((await t.as(key).get(other.path)).body.state, 'running');
  });

  it('cancels: a pending run fails abandoned at once; a running one is asked through its heartbeat', async () => {
    const pending = await createRun(t, key, experimentId);
    const cancelled = await t.as(key).post(`${pending.path}/cancel`);
    assert.deepEqual([cancelled.body.state, cancelled.body.failure_reason], ['failed', 'abandoned']);
    const running = await runningRun(t, key, experimentId);
    assert.equal((await t.as(key).post(`${running.path}/heartbeat`)).body.cancel_requested, false);
    const asked = await t.as(key).post(`${running.path}/cancel`);
    assert.equal(asked.status, 200);
    assert.deepEqual([asked.body.state, asked.body.cancel_requested], ['running', true]);
    const beat = await t.as(key).post(`${running.path}/heartbeat`);
    assert.equal(beat.body.cancel_requested, true);
    const stopped = await t.as(key).post(`${running.path}/fail`, { reason: 'abandoned' });
    assert.equal(stopped.body.failure_reason, 'abandoned');
    assert.equal((await t.as(key).post(`${running.path}/cancel`)).status, 409);
  });

  it('a run asked to stop never succeeds: a success reported after the cancel fails it abandoned', async () => {
    const running = await runningRun(t, key, experimentId);
    assert.equal((await t.as(key).post(`${running.path}/cancel`)).status, 200);
    const late = await t.as(key).post(`${running.path}/succeed`);
    assert.equal(late.status, 200);
    assert.deepEqual(
      [late.body.state, late.body.failure_reason, late.body.failure_message],
      ['failed', 'abandoned', 'the command exited 0 after the run was asked to stop'],
    );
    const untouched = await runningRun(t, key, experimentId);
    assert.equal((await t.as(key).post(`${untouched.path}/succeed`)).body.state, 'succeeded');
  });

  it('answers 404 for runs that do not exist', async () => {
    assert.equal((await t.as(key).get(`/experiments/${experimentId}/variations/1/runs/9999`)).status, 404);
    assert.equal(
      (await t.as(key).post(`/experiments/${experimentId}/variations/1/runs/9999/heartbeat`)).status,
      404,
    );
    assert.equal((await t.as(key).get(`/experiments/${experimentId}/variations/9/runs`)).status, 404);
  });
});

describe('heartbeat watchdog', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ env: { ASSAY_WATCHDOG_TIMEOUT_S: '1', ASSAY_WATCHDOG_INTERVAL_S: '0.2' } });
  });
  after(() => t.close());

  it('fails runs silent past the timeout with heartbeat_timeout, and spares the ones that heartbeat', async () => {
    const key = t.adminKey;
    const e = await committedExperiment(t, key);
    const silent = await runningRun(t, key, e.id);
    const alive = await runningRun(t, key, e.id);
    const deadline = Date.now() + 10_000;
    let state = 'running';
    while (state === 'running' && Date.now() < deadline) {
      assert.equal((await t.as(key).post(`${alive.path}/heartbeat`)).status, 200);
      await new Promise((r) => setTimeout(r, 250));
      state = (await t.as(key).get(silent.path)).body.state;
    }
    const failed = (await t.as(key).get(silent.path)).body;
    assert.deepEqual([failed.state, failed.failure_reason], ['failed', 'heartbeat_timeout']);
    assert.equal((await t.as(key).get(alive.path)).body.state, 'running');
    const late = await t.as(key).post(`${silent.path}/heartbeat`);
    assert.equal(late.status, 409, 'a heartbeat after the timeout is refused');
    assert.equal((await t.as(key).post(`${alive.path}/succeed`)).status, 200);
  });

  it('fails each silent run exactly once when several replicas sweep at the same time', async () => {
    const key = t.adminKey;
    await t.service.watchdog.stop();
    const e = await committedExperiment(t, key);
    const runs = await Promise.all(Array.from({ length: 5 }, () => runningRun(t, key, e.id)));
    await new Promise((r) => setTimeout(r, 1100));
    // Four sweeps at once, as four replicas would: each on its own pooled connection.
    const counts = await Promise.all(Array.from({ length: 4 }, () => t.service.watchdog.sweep()));
    assert.equal(
      counts.reduce((a, b) => a + b, 0),
      runs.length,
      `sweeps failed ${counts.join('+')} runs for ${runs.length} silent ones`,
    );
    const states = await Promise.all(runs.map(async (r) => (await t.as(key).get(r.path)).body));
    assert.ok(states.every((s) => s.state === 'failed' && s.failure_reason === 'heartbeat_timeout'));
  });
});
