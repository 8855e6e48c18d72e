import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { committedExperiment, createRun } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

describe('worker keys', () => {
  let t: TestService;
  let owner: string;
  let experimentId: string;
  let r1: { id: string; r: number; path: string };
  let r2: { id: string; r: number; path: string };
  let worker: string;

  const mint = (key: string, body: Record<string, unknown>) =>
    t.as(key).post('/api-keys', { description: 'worker', ...body });
  const workerBody = (r: number, extra: Record<string, unknown> = {}) => ({
    kind: 'worker',
    scopes: ['runs:read', 'runs:write'],
    run: { experiment_id: experimentId, n: 1, r },
    ...extra,
  });

  before(async () => {
    t = await startTestService();
    owner = (await t.createUser()).key;
    experimentId = (await committedExperiment(t, owner)).id;
    r1 = await createRun(t, owner, experimentId);
    r2 = await createRun(t, owner, experimentId);
    const minted = await mint(owner, workerBody(r1.r));
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    assert.match(minted.body.key, /^sk_worker_/);
    assert.equal(minted.body.kind, 'worker');
    assert.equal(minted.body.run_id, r1.id);
    worker = minted.body.key;
  });
  after(() => t.close());

  it('drives its own run: config, start, heartbeat, succeed', async () => {
    const api = t.as(worker);
    const me = await api.get('/v1/me');
    assert.deepEqual([me.status, me.body.error.code], [403, 'worker_key_restricted'], 'not even its profile');
    assert.equal((await api.get(r1.path)).status, 200);
    const config = await api.get(`${r1.path}/config`);
    assert.equal(config.status, 200, JSON.stringify(config.body));
    assert.deepEqual(config.body.config_json, { lr: 0.1 });
    const started = await api.post(`${r1.path}/start`, { environment: { host: 'worker-1' } });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    assert.equal(started.body.state, 'running');
    const beat = await api.post(`${r1.path}/heartbeat`);
    assert.equal(beat.status, 200);
    assert.equal(beat.body.cancel_requested, false);
    const done = await api.post(`${r1.path}/succeed`);
    assert.equal(done.status, 200);
    assert.equal(done.body.state, 'succeeded');
    const runs = await api.get(`/experiments/${experimentId}/variations/1/runs`);
    assert.deepEqual(
      runs.body.items.map((r: { id: string }) => r.id),
      [r1.id],
      'a listing shows only its own run',
    );
  });

  it('gets 404 for another run of the same variation, and leaves it untouched', async () => {
    const api = t.as(worker);
    for (const [method, suffix] of [
      ['GET', ''],
      ['GET', '/config'],
      ['POST', '/start'],
      ['POST', '/heartbeat'],
      ['POST', '/succeed'],
      ['POST', '/cancel'],
    ] as const) {
      const res = await t.request(method, `${r2.path}${suffix}`, {
        key: worker,
        ...(method === 'POST' ? { body: {} } : {}),
      });
      assert.equal(res.status, 404, `${method} ${suffix || 'run'}: ${JSON.stringify(res.body)}`);
    }
    const fail = await api.post(`${r2.path}/fail`, { reason: 'crash' });
    assert.equal(fail.status, 404);
    const untouched = await t.as(owner).get(r2.path);
    assert.equal(untouched.body.state, 'pending');
    assert.equal(untouched.body.config_read_at, null, 'reading the config was not recorded');
  });

  it('has no reach beyond runs: experiments, run creation and key minting are refused', async () => {
    const api = t.as(worker);
    for (const url of [
      '/experiments',
      `/experiments/${experimentId}`,
      `/experiments/${experimentId}/variations`,
      `/experiments/${experimentId}/variations/1`,
    ]) {
      const res = await api.get(url);
      assert.equal(res.status, 403, url);
      assert.equal(res.body.error.code, 'insufficient_scope', url);
    }
    const run = await api.post(`/experiments/${experimentId}/variations/1/runs`);
    assert.equal(run.status, 403);
    const minted = await mint(worker, workerBody(r1.r));
    assert.equal(minted.status, 403);
    assert.equal((await mint(worker, { scopes: ['runs:read'] })).status, 403);
    assert.equal((await api.get('/api-keys')).status, 403);
    assert.equal(
      (await t.as(owner).get(`/experiments/${experimentId}/variations/1/runs`)).body.items.length,
      2,
      'no run was created',
    );
  });

  it('refuses worker scopes outside the worker set (400)', async () => {
    for (const scopes of [
      ['runs:read', 'experiments:read'],
      ['runs:write', 'api_keys:write'],
      ['search:read'],
    ]) {
      const res = await mint(owner, workerBody(r2.r, { scopes }));
      assert.equal(res.status, 400, JSON.stringify(scopes));
      assert.equal(res.body.error.code, 'invalid_scopes');
    }
    assert.equal(
      (await mint(owner, workerBody(r2.r, { scopes: ['runs:read', 'assets:write'] }))).status,
      201,
      'asset scopes are allowed',
    );
  });

  it('requires a run for worker keys and refuses one for user and agent keys (400)', async () => {
    const noRun = await mint(owner, { kind: 'worker', scopes: ['runs:read'] });
    assert.equal(noRun.status, 400);
    assert.equal(noRun.body.error.code, 'run_required');
    for (const kind of ['user', 'agent', undefined]) {
      const res = await mint(owner, {
        ...(kind ? { kind } : {}),
        scopes: ['runs:read'],
        run: { experiment_id: experimentId, n: 1, r: r1.r },
      });
      assert.equal(res.status, 400, String(kind));
      assert.equal(res.body.error.code, 'run_not_allowed');
    }
  });

  it('binds only to runs the minter can see (404 otherwise)', async () => {
    const stranger = (await t.createUser()).key;
    const res = await mint(stranger, workerBody(r2.r));
    assert.equal(res.status, 404);
    assert.equal((await mint(owner, workerBody(99))).status, 404);
  });

  it('stops working once revoked', async () => {
    const minted = await mint(owner, workerBody(r2.r));
    assert.equal((await t.as(minted.body.key).get(r2.path)).status, 200);
    assert.equal((await t.as(owner).delete(`/api-keys/${minted.body.id}`)).status, 200);
    assert.equal((await t.as(minted.body.key).get(r2.path)).status, 401);
  });
});
