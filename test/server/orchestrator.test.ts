import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseToken } from '../../src/server/auth/api-key-token.ts';
import {
  generateOrchestratorKey,
  mintEmbeddedOrchestratorKey,
} from '../../src/server/orchestration/orchestrator-keys.ts';
import { ORCHESTRATOR_USER_ID } from '../../src/server/auth/orchestrator-user.ts';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { committedExperiment, createRun } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { exchange, mintExchangeToken, workerKeyThroughExchange } from '../support/worker-key-exchange.ts';

describe('orchestrator keys and the /orchestrator/* endpoints', () => {
  let t: TestService;
  let owner: { id: string; key: string };
  let orchestratorKey: string;
  let experimentId: string;

  const orch = () => t.as(orchestratorKey);
  /** A pending run of variation 1, made managed through POST …/provision. */
  async function managedRun(experiment = experimentId) {
    const run = await createRun(t, owner.key, experiment);
    const res = await t.as(owner.key).post(`${run.path}/provision`);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    return { ...run, workflowId: res.body.workflow_id as string, url: `/orchestrator/runs/${run.id}` };
  }

  before(async () => {
    orchestratorKey = generateOrchestratorKey();
    t = await startTestService({
      orchestrator: new FakeOrchestrator(),
      env: { ASSAY_ORCHESTRATOR_KEY: orchestratorKey },
    });
    owner = await t.createUser();
    experimentId = (await committedExperiment(t, owner.key)).id;
  });
  after(() => t.close());

  it('never hands out the orchestrate scope: not to users, not to admins', async () => {
    for (const key of [owner.key, t.adminKey]) {
      for (const kind of ['user', 'agent']) {
        const res = await t
          .as(key)
          .post('/api-keys', { description: 'sneaky', kind, scopes: ['orchestrate'] });
        assert.equal(res.status, 403, JSON.stringify(res.body));
        assert.equal(res.body.error.code, 'scope_escalation');
      }
    }
    const admin = await t.as(t.adminKey).get('/v1/me');
    assert.ok(admin.body.auth.scopes.includes('admin'));
    assert.ok(!admin.body.auth.scopes.includes('orchestrate'));
    const refused = await t.as(t.adminKey).get(`/orchestrator/runs/${ORCHESTRATOR_USER_ID}`);
    assert.deepEqual([refused.status, refused.body.error.code], [403, 'insufficient_scope']);
  });

  it('keeps the orchestrator user out of organizations', async () => {
    const org = await t.as(owner.key).post('/organizations', { slug: `orch-${Date.now()}`, name: 'Org' });
    assert.equal(org.status, 201);
    for (const body of [{ user_id: ORCHESTRATOR_USER_ID }, { email: 'orchestrator@assay.internal' }]) {
      const res = await t.as(owner.key).post(`/organizations/${org.body.id}/members`, body);
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    const members = await t.as(owner.key).get(`/organizations/${org.body.id}/members`);
    assert.deepEqual(
      members.body.items.map((m: { user_id: string }) => m.user_id),
      [owner.id],
      'answered as an unknown user: no one added',
    );
  });

  it('stores ASSAY_ORCHESTRATOR_KEY at start: it reaches /orchestrator/* and nothing else, and is never logged', async () => {
    const run = await managedRun();
    const got = await orch().get(run.url);
    assert.equal(got.status, 200, JSON.stringify(got.body));
    assert.deepEqual(
      [got.body.run.id, got.body.run.managed, got.body.run.workflow_id],
      [run.id, true, run.workflowId],
    );
    assert.deepEqual(got.body.launch_config, {});
    for (const [method, url] of [
      ['GET', '/experiments'],
      ['GET', `/experiments/${experimentId}`],
      ['GET', '/v1/me'],
      ['GET', '/api-keys'],
      ['POST', '/api-keys'],
      ['GET', `${run.path}/config`],
    ] as const) {
      const res = await t.request(method, url, {
        key: orchestratorKey,
        ...(method === 'POST' ? { body: { description: 'x', scopes: ['orchestrate'] } } : {}),
      });
      assert.equal(res.status, 403, `${method} ${url}: ${JSON.stringify(res.body)}`);
    }
    const asUser = await t.as(owner.key).get(run.url);
    assert.deepEqual([asUser.status, asUser.body.error.code], [403, 'insufficient_scope']);
    assert.ok(
      !t.logs.some((line) => line.includes(orchestratorKey.slice(9))),
      'the key appears in no log line',
    );
  });

  it('accepts the same key on every start, and refuses to start with another key of the same id', async () => {
    const replica = await startTestService({
      replicaOf: t,
      env: { ASSAY_ORCHESTRATOR_KEY: orchestratorKey },
    });
    await replica.close();
    const forged = `${orchestratorKey.slice(0, 41)}${generateOrchestratorKey().slice(41)}`;
    assert.notEqual(forged, orchestratorKey);
    await assert.rejects(
      startTestService({ replicaOf: t, env: { ASSAY_ORCHESTRATOR_KEY: forged } }),
      /ASSAY_ORCHESTRATOR_KEY: a different key with the same id/,
    );
    assert.equal((await orch().get((await managedRun()).url)).status, 200, 'the stored key still works');
  });

  it('mints an embedded worker key; revoke() ends it', async () => {
    const embedded = await mintEmbeddedOrchestratorKey(t.service.db);
    assert.match(embedded.token, /^sk_agent_/);
    const run = await managedRun();
    assert.equal((await t.as(embedded.token).get(run.url)).status, 200);
    assert.equal((await t.as(embedded.token).get('/experiments')).status, 403);
    await embedded.revoke();
    await embedded.revoke();
    // revoke() works on the database alone; this replica's cache hears of it through the key-change notice.
    const deadline = Date.now() + 10_000;
    let status = 200;
    while (status !== 401 && Date.now() < deadline) {
      status = (await t.as(embedded.token).get(run.url)).status;
      if (status !== 401) await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(status, 401);
  });

  it('lets an admin list orchestrator keys and revoke one, with the worker keys it minted', async () => {
    const embedded = await mintEmbeddedOrchestratorKey(t.service.db);
    const run = await managedRun();
    // The worker key bought with a token this key minted is in its lineage.
    const workerKey = await workerKeyThroughExchange(t, embedded.token, run.id);
    const unused = await mintExchangeToken(t, embedded.token, (await managedRun()).id);
    assert.equal((await t.as(workerKey.key).get(run.path)).status, 200);
    const embeddedId = parseToken(embedded.token)!.id;
    assert.equal((await t.as(owner.key).get('/admin/orchestrator-keys')).status, 403);
    const listed = await t.as(t.adminKey).get('/admin/orchestrator-keys');
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    const ids = listed.body.items.map((k: { id: string }) => k.id);
    assert.ok(ids.includes(parseToken(orchestratorKey)!.id) && ids.includes(embeddedId), JSON.stringify(ids));
    assert.ok(!JSON.stringify(listed.body).includes(orchestratorKey.slice(41)), 'no secret is listed');
    const userKeyId = (await t.as(owner.key).get('/api-keys')).body.items[0].id;
    assert.equal((await t.as(t.adminKey).delete(`/admin/orchestrator-keys/${userKeyId}`)).status, 404);
    const revoked = await t.as(t.adminKey).delete(`/admin/orchestrator-keys/${embeddedId}`);
    assert.deepEqual([revoked.status, revoked.body.id], [200, embeddedId]);
    assert.notEqual(revoked.body.revoked_at, null);
    assert.equal((await t.as(embedded.token).get(run.url)).status, 401);
    assert.equal((await t.as(workerKey.key).get(run.path)).status, 401, 'its worker keys go with it');
    assert.equal((await exchange(t, unused)).status, 401, 'and its exchange tokens buy nothing');
    assert.equal((await orch().get(run.url)).status, 200, 'the configured key stays');
  });

  it('rotates: a start with another key revokes the old one and leftover embedded keys, not runs in flight', async () => {
    const [keyA, keyB] = [generateOrchestratorKey(), generateOrchestratorKey()];
    const a = await startTestService({
      orchestrator: new FakeOrchestrator(),
      env: { ASSAY_ORCHESTRATOR_KEY: keyA },
    });
    try {
      const user = await a.createUser();
      const run = await createRun(a, user.key, (await committedExperiment(a, user.key)).id);
      assert.equal((await a.as(user.key).post(`${run.path}/provision`)).status, 202);
      const workerKey = await workerKeyThroughExchange(a, keyA, run.id);
      const leftover = await mintEmbeddedOrchestratorKey(a.service.db);
      assert.equal((await a.as(leftover.token).get(`/orchestrator/runs/${run.id}`)).status, 200);
      // The same database, a fresh process: what a restart with ASSAY_ORCHESTRATOR_KEY changed to B
      // looks like.
      const b = await startTestService({
        replicaOf: a,
        orchestrator: new FakeOrchestrator(),
        env: { ASSAY_ORCHESTRATOR_KEY: keyB },
      });
      try {
        const url = `/orchestrator/runs/${run.id}`;
        assert.equal((await b.as(keyA).get(url)).status, 401, 'the old key');
        assert.equal((await b.as(leftover.token).get(url)).status, 401, 'a dead embedded worker’s key');
        assert.equal((await b.as(keyB).get(url)).status, 200, 'the new key');
        assert.equal((await b.as(workerKey.key).get(run.path)).status, 200, 'the run in flight goes on');
      } finally {
        await b.close();
      }
    } finally {
      await a.close();
    }
  });

  it('answers 404 for runs that are not managed, and for unknown ids', async () => {
    const unmanaged = await createRun(t, owner.key, experimentId);
    for (const id of [unmanaged.id, '7f000000-0000-4000-8000-000000000000']) {
      const url = `/orchestrator/runs/${id}`;
      const answers = await Promise.all([
        orch().get(url),
        orch().post(`${url}/exchange-token`),
        orch().delete(`${url}/worker-keys`),
        orch().put(`${url}/instance`, { provider: 'local', instance_id: 'i-1', state: 'running' }),
        orch().post(`${url}/fail`, { reason: 'crash' }),
        orch().post(`${url}/cancel`),
        orch().post(`${url}/recovery`),
        orch().get(`${url}/assets`),
      ]);
      assert.deepEqual(
        answers.map((a) => a.status),
        Array(8).fill(404),
        JSON.stringify(answers.map((a) => a.body)),
      );
    }
    const untouched = await t.as(owner.key).get(unmanaged.path);
    assert.deepEqual([untouched.body.state, untouched.body.instance], ['pending', null]);
  });

  it('revokes every worker key of a run at once, idempotently', async () => {
    const run = await managedRun();
    const minted = await workerKeyThroughExchange(t, orchestratorKey, run.id);
    assert.equal((await t.as(minted.key).get(run.path)).status, 200);
    const revoked = await orch().delete(`${run.url}/worker-keys`);
    assert.deepEqual([revoked.status, revoked.body], [200, { revoked: 1 }]);
    assert.equal((await t.as(minted.key).get(run.path)).status, 401);
    assert.deepEqual((await orch().delete(`${run.url}/worker-keys`)).body, { revoked: 0 });
  });

  it('records the instance', async () => {
    const run = await managedRun();
    const instance = { provider: 'ec2', instance_id: 'i-0abc', state: 'pending' };
    const res = await orch().put(`${run.url}/instance`, instance);
    assert.deepEqual([res.status, res.body.instance], [200, instance]);
    assert.deepEqual((await t.as(owner.key).get(run.path)).body.instance, instance);
    const bad = await orch().put(`${run.url}/instance`, { provider: 'ec2' });
    assert.equal(bad.status, 422);
  });

  it('fails pending and running runs; a terminal run is answered unchanged', async () => {
    const pending = await managedRun();
    const failed = await orch().post(`${pending.url}/fail`, {
      reason: 'provision_failed',
      message: 'no capacity',
    });
    assert.deepEqual(
      [failed.status, failed.body.state, failed.body.failure_reason, failed.body.failure_message],
      [200, 'failed', 'provision_failed', 'no capacity'],
    );
    assert.ok(failed.body.ended_at);
    const again = await orch().post(`${pending.url}/fail`, { reason: 'crash' });
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, failed.body, 'a repeated compensation changes nothing');

    const running = await managedRun();
    assert.equal((await t.as(owner.key).get(`${running.path}/config`)).status, 200);
    assert.equal((await t.as(owner.key).post(`${running.path}/start`, {})).status, 200);
    const silent = await orch().post(`${running.url}/fail`, { reason: 'heartbeat_timeout' });
    assert.deepEqual(
      [silent.body.state, silent.body.failure_reason, silent.body.failure_message],
      ['failed', 'heartbeat_timeout', null],
    );
    assert.equal((await orch().post(`${running.url}/fail`, { reason: 'nonsense' })).status, 422);
  });

  it('cancels: pending → failed abandoned, running → cancel requested, terminal → unchanged', async () => {
    const pending = await managedRun();
    const cancelled = await orch().post(`${pending.url}/cancel`);
    assert.deepEqual(
      [cancelled.status, cancelled.body.state, cancelled.body.failure_reason, cancelled.body.failure_message],
      [200, 'failed', 'abandoned', 'cancelled before start'],
    );
    assert.deepEqual((await orch().post(`${pending.url}/cancel`)).body, cancelled.body);

    const running = await managedRun();
    await t.as(owner.key).get(`${running.path}/config`);
    await t.as(owner.key).post(`${running.path}/start`, {});
    const asked = await orch().post(`${running.url}/cancel`);
    assert.deepEqual([asked.body.state, asked.body.cancel_requested], ['running', true]);
    const beat = await t.as(owner.key).post(`${running.path}/heartbeat`);
    assert.equal(beat.body.cancel_requested, true);
  });

  it('creates one recovery run per run: the next r, managed for the same user; 409 once the experiment is concluded', async () => {
    const run = await managedRun();
    await orch().post(`${run.url}/fail`, { reason: 'crash' });
    const created = await orch().post(`${run.url}/recovery`);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const recovery = created.body;
    assert.deepEqual(
      [
        recovery.state,
        recovery.n,
        recovery.r,
        recovery.managed,
        recovery.recovers_run_id,
        recovery.workflow_id,
      ],
      ['pending', 1, run.r + 1, true, run.id, `run-${experimentId}-1-${run.r + 1}`],
    );
    assert.match(recovery.workflow_url, /^http:\/\/temporal-ui\.test\//);
    const again = await orch().post(`${run.url}/recovery`);
    assert.deepEqual([again.status, again.body.id], [200, recovery.id]);
    // The recovery run's worker key belongs to the user who provisioned the original.
    const key = await workerKeyThroughExchange(t, orchestratorKey, recovery.id);
    const ownersKeys = (await t.as(owner.key).get('/api-keys')).body.items as { id: string }[];
    assert.ok(ownersKeys.some((k) => k.id === key.id));
    const seen = await t.as(owner.key).get(`/experiments/${experimentId}/variations/1/runs/${recovery.r}`);
    assert.deepEqual([seen.status, seen.body.recovers_run_id], [200, run.id]);

    const concluded = (await committedExperiment(t, owner.key)).id;
    const lost = await managedRun(concluded);
    assert.equal((await t.as(owner.key).post(`/experiments/${concluded}/conclude`)).status, 200);
    const refused = await orch().post(`${lost.url}/recovery`);
    assert.deepEqual([refused.status, refused.body.error.code], [409, 'experiment_not_runnable']);
  });

  it("lists the run's assets", async () => {
    const run = await managedRun();
    assert.deepEqual((await orch().get(`${run.url}/assets`)).body, { items: [] });
    const asset = await t.as(owner.key).post('/assets', {
      kind: 'output',
      name: 'metrics',
      content_json: { loss: 0.1 },
      run: { experiment_id: experimentId, n: 1, r: run.r },
    });
    assert.equal(asset.status, 201, JSON.stringify(asset.body));
    const listed = await orch().get(`${run.url}/assets`);
    assert.deepEqual(listed.body, {
      items: [{ id: asset.body.id, kind: 'output', name: 'metrics', state: 'ready' }],
    });
  });
});
