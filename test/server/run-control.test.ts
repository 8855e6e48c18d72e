// GET …/runs/{r}/control: the runner's long-poll. It answers at once when the runner must act, wakes when a
// cancel or an end is committed (by any replica, any code path: migration 015's trigger), else answers after
// wait_s; on the embedded PGlite and on PostgreSQL.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { metric } from '../support/http-api.ts';
import { committedExperiment, runningRun } from '../support/fixtures.ts';
import { startTestService, type Api, type TestService } from '../support/service.ts';

interface Control {
  state: string;
  cancel_requested: boolean;
  cancel_reason: string | null;
}

/** A poll in flight: its answer, and how long it took. */
function poll(api: Api, key: string, path: string, waitS: number) {
  const began = Date.now();
  return api
    .as(key)
    .get<Control>(`${path}/control?wait_s=${waitS}`)
    .then((reply) => ({ ...reply, tookMs: Date.now() - began }));
}

/** Until the service holds `n` waiting polls, so what the test does next happens during the wait. */
async function waiting(api: Api, n: number): Promise<void> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(20))
    if ((await metric(api, 'assay_run_control_waiting')) === n) return;
  assert.fail(`the service never held ${n} waiting control poll(s)`);
}

async function listening(api: Api): Promise<void> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(20))
    if ((await metric(api, 'assay_run_control_listener_up')) === 1) return;
  assert.fail('the service never listened for run control changes');
}

for (const backend of ['PGlite', 'PostgreSQL'] as const) {
  describe(`run control long-poll (${backend})`, () => {
    let t: TestService;
    let key: string;
    let experimentId: string;

    before(async () => {
      t = await startTestService({ pglite: backend === 'PGlite' });
      key = (await t.createUser()).key;
      experimentId = (await committedExperiment(t, key)).id;
      await listening(t);
    });
    after(() => t?.close());

    it('answers at once when a cancel was already asked, with the reason', async () => {
      const run = await runningRun(t, key, experimentId);
      assert.equal((await t.as(key).post(`${run.path}/cancel`)).status, 200);
      const answer = await poll(t, key, run.path, 60);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.deepEqual(answer.body, { state: 'running', cancel_requested: true, cancel_reason: 'cancelled' });
      assert.ok(answer.tookMs < 60_000, `answered after ${answer.tookMs} ms, not at once`);
    });

    it('wakes when a cancel is asked during the wait', async () => {
      const run = await runningRun(t, key, experimentId);
      const answer = poll(t, key, run.path, 60);
      await waiting(t, 1);
      assert.equal((await t.as(key).post(`${run.path}/cancel`)).status, 200);
      const done = await answer;
      assert.deepEqual(done.body, { state: 'running', cancel_requested: true, cancel_reason: 'cancelled' });
      assert.ok(done.tookMs < 60_000, `answered only when wait_s ran out (${done.tookMs} ms)`);
      assert.equal(await metric(t, 'assay_run_control_waiting'), 0);
    });

    it('wakes when the run ends during the wait (the runner failed it elsewhere)', async () => {
      const run = await runningRun(t, key, experimentId);
      const answer = poll(t, key, run.path, 60);
      await waiting(t, 1);
      await t.as(key).post(`${run.path}/fail`, { reason: 'crash' });
      const done = await answer;
      assert.deepEqual(done.body, { state: 'failed', cancel_requested: false, cancel_reason: null });
      assert.ok(done.tookMs < 60_000, `answered only when wait_s ran out (${done.tookMs} ms)`);
    });

    it('answers after wait_s when nothing happens; heartbeats do not wake it', async () => {
      const run = await runningRun(t, key, experimentId);
      const answer = poll(t, key, run.path, 1);
      await t.as(key).post(`${run.path}/heartbeat`);
      const done = await answer;
      assert.deepEqual(done.body, { state: 'running', cancel_requested: false, cancel_reason: null });
      assert.ok(done.tookMs >= 1000, `answered before wait_s (${done.tookMs} ms)`);
      // wait_s=0 is a plain read.
      assert.equal((await poll(t, key, run.path, 0)).body.cancel_requested, false);
    });

    it('a worker key polls its own run only; wait_s out of 0..60 is a 400 naming it (a query parameter, as elsewhere)', async () => {
      const own = await runningRun(t, key, experimentId);
      const other = await runningRun(t, key, experimentId);
      const minted = await t.as(key).post('/api-keys', {
        description: 'worker',
        kind: 'worker',
        scopes: ['runs:read', 'runs:write'],
        run: { experiment_id: experimentId, n: 1, r: Number(own.path.split('/').pop()) },
      });
      assert.equal(minted.status, 201, JSON.stringify(minted.body));
      const worker = minted.body.key as string;
      assert.equal((await poll(t, worker, own.path, 0)).status, 200);
      assert.equal((await poll(t, worker, other.path, 0)).status, 404);
      const stranger = (await t.createUser()).key;
      assert.equal((await poll(t, stranger, own.path, 0)).status, 404);
      for (const bad of ['61', '-1', 'soon']) {
        const res = await t.as(key).get(`${own.path}/control?wait_s=${bad}`);
        assert.equal(res.status, 400, `wait_s=${bad}: ${JSON.stringify(res.body)}`);
        assert.match(JSON.stringify(res.body), /wait_s/);
      }
    });
  });
}

describe('run control long-poll across two replicas on one PostgreSQL', () => {
  let a: TestService;
  let b: TestService;
  let key: string;
  let experimentId: string;

  before(async () => {
    a = await startTestService();
    b = await startTestService({ replicaOf: a });
    key = (await a.createUser()).key;
    experimentId = (await committedExperiment(a, key)).id;
    await Promise.all([listening(a), listening(b)]);
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  it("a cancel through replica A wakes the poll waiting on replica B, and a sweep's own SQL would too", async () => {
    const run = await runningRun(a, key, experimentId);
    const answer = poll(b, key, run.path, 60);
    await waiting(b, 1);
    assert.equal((await a.as(key).post(`${run.path}/cancel`)).status, 200);
    const done = await answer;
    assert.deepEqual(done.body, { state: 'running', cancel_requested: true, cancel_reason: 'cancelled' });
    assert.ok(done.tookMs < 60_000, `answered only when wait_s ran out (${done.tookMs} ms)`);
  });

  it('an early stop set by another statement keeps its reason; a later cancel does not overwrite it', async () => {
    const run = await runningRun(a, key, experimentId);
    const answer = poll(b, key, run.path, 60);
    await waiting(b, 1);
    // As the sweep's early stopping does, through SQL of its own rather than the cancel route.
    const { default: pg } = await import('pg');
    const sql = new pg.Client({ connectionString: a.databaseUrl });
    await sql.connect();
    try {
      await sql.query(
        `UPDATE runs SET cancel_requested = true, cancel_reason = 'stopped_early' WHERE experiment_id = $1 AND r = $2`,
        [experimentId, Number(run.path.split('/').pop())],
      );
    } finally {
      await sql.end();
    }
    const done = await answer;
    assert.deepEqual(done.body, { state: 'running', cancel_requested: true, cancel_reason: 'stopped_early' });
    assert.equal((await a.as(key).post(`${run.path}/cancel`)).body.cancel_reason, 'stopped_early');
    // The heartbeat, the runner's fallback, carries the reason too.
    assert.equal((await b.as(key).post(`${run.path}/heartbeat`)).body.cancel_reason, 'stopped_early');
  });
});

describe('run control long-poll limits', () => {
  it('past ASSAY_RUN_CONTROL_MAX_WAITING a poll answers at once; a shutdown answers the waiting ones', async () => {
    const t = await startTestService({ pglite: true, env: { ASSAY_RUN_CONTROL_MAX_WAITING: '1' } });
    try {
      const key = (await t.createUser()).key;
      const experimentId = (await committedExperiment(t, key)).id;
      await listening(t);
      const first = await runningRun(t, key, experimentId);
      const second = await runningRun(t, key, experimentId);
      const held = poll(t, key, first.path, 60);
      await waiting(t, 1);
      const over = await poll(t, key, second.path, 60);
      assert.deepEqual(over.body, { state: 'running', cancel_requested: false, cancel_reason: null });
      assert.ok(over.tookMs < 60_000, 'over the cap, the poll did not wait');
      const drained = t.service.drain(30_000);
      const done = await held;
      assert.equal(done.status, 200);
      assert.equal(done.body.cancel_requested, false);
      assert.ok(done.tookMs < 60_000, 'the shutdown did not wait for wait_s');
      assert.equal(await drained, true, 'the drain finished in time');
    } finally {
      await t.close();
    }
  });
});
