// A managed instance is started with a one-time exchange token and trades it for its run's worker key: the
// token works once and only for minutes, the key it buys reaches its run only and dies with the run's keys.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { committedExperiment, createRun } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { exchange, mintExchangeToken } from '../support/worker-key-exchange.ts';

describe('worker key exchange', () => {
  let t: TestService;
  let owner: { id: string; key: string };
  let orchestratorKey: string;
  let experimentId: string;

  async function managedRun() {
    const run = await createRun(t, owner.key, experimentId);
    const res = await t.as(owner.key).post(`${run.path}/provision`);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    return { ...run, workflowId: res.body.workflow_id as string, url: `/orchestrator/runs/${run.id}` };
  }
  const mint = (runId: string) => mintExchangeToken(t, orchestratorKey, runId);

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

  it('buys the run’s worker key once: the key drives its own run only; a second exchange answers 401', async () => {
    const run = await managedRun();
    const other = await managedRun();
    const minted = await t.as(orchestratorKey).post(`${run.url}/exchange-token`);
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    assert.match(minted.body.token, /^sk_exchange_/);
    const life = Date.parse(minted.body.expires_at) - Date.now();
    assert.ok(life > 60_000 && life <= 900_000, `minutes of life by default, not ${life} ms`);

    const traded = await exchange(t, minted.body.token);
    assert.equal(traded.status, 201, JSON.stringify(traded.body));
    assert.match(traded.body.key, /^sk_worker_/);
    assert.equal(traded.body.run_id, run.id);
    const worker = t.as(traded.body.key);
    assert.equal((await worker.get(`${run.path}/config`)).status, 200);
    const started = await worker.post(`${run.path}/start`, { environment: { host: 'instance-1' } });
    assert.deepEqual([started.status, started.body.state], [200, 'running']);
    assert.equal((await worker.get(other.path)).status, 404, 'another run of the variation');
    assert.equal((await worker.get('/experiments')).status, 403);

    const again = await exchange(t, minted.body.token);
    assert.deepEqual([again.status, again.body.error.message], [401, 'exchange token already used']);
    assert.equal((await worker.post(`${run.path}/heartbeat`)).status, 200, 'the bought key is untouched');

    const listed = (await t.as(owner.key).get('/api-keys')).body.items.filter(
      (k: { run_id: string | null }) => k.run_id === run.id,
    );
    assert.equal(listed.length, 1, 'one worker key, owned by the run’s provisioner');
    assert.deepEqual(
      [listed[0].id, listed[0].kind, listed[0].description],
      [traded.body.id, 'worker', `managed run ${run.workflowId}`],
    );
    assert.deepEqual(listed[0].scopes, ['runs:read', 'runs:write', 'assets:read', 'assets:write']);
    assert.ok(listed[0].expires_at, 'a worker key expires as other keys do');
  });

  it('takes an exchange token and nothing else; the token reaches no other endpoint', async () => {
    const run = await managedRun();
    const token = await mint(run.id);
    const anonymous = await t.request('POST', '/worker-keys/exchange');
    assert.equal(anonymous.status, 401);
    for (const key of [owner.key, t.adminKey, orchestratorKey]) {
      const refused = await exchange(t, key);
      assert.deepEqual([refused.status, refused.body.error.code], [403, 'exchange_token_required']);
    }
    const forged = `${token.slice(0, 44)}${'A'.repeat(token.length - 44)}`;
    assert.equal((await exchange(t, forged)).status, 401, 'the right id with a wrong secret');
    for (const url of [run.path, `${run.path}/config`, '/v1/me', run.url]) {
      assert.equal((await t.as(token).get(url)).status, 401, url);
    }
    assert.equal((await exchange(t, token)).status, 201, 'none of that spent the token');
  });

  it('an expired token answers 401 and buys nothing', async () => {
    const short = await startTestService({
      replicaOf: t,
      orchestrator: new FakeOrchestrator(),
      env: { ASSAY_ORCHESTRATOR_KEY: orchestratorKey, ASSAY_EXCHANGE_TOKEN_TTL_S: '0.3' },
    });
    try {
      const run = await managedRun();
      const token = await mintExchangeToken(short, orchestratorKey, run.id);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const expired = await exchange(short, token);
      assert.deepEqual([expired.status, expired.body.error.message], [401, 'exchange token expired']);
      const keys = (await t.as(owner.key).get('/api-keys')).body.items;
      assert.ok(!keys.some((k: { run_id: string | null }) => k.run_id === run.id), 'no key was minted');
    } finally {
      await short.close();
    }
  });

  it('minting revokes nothing: a late token leaves the live key alone and cannot buy a second one', async () => {
    const run = await managedRun();
    const first = await mint(run.id);
    const late = await mint(run.id); // an overlapping provisioning attempt
    const key = (await exchange(t, first)).body.key as string;
    assert.equal((await t.as(key).get(run.path)).status, 200);
    const later = await mint(run.id); // a retry after the instance started
    // Read from the database (the auth cache would hide a revocation for a moment).
    const keys = (await t.as(owner.key).get('/api-keys')).body.items.filter(
      (k: { run_id: string | null }) => k.run_id === run.id,
    );
    assert.deepEqual(
      keys.map((k: { revoked_at: string | null }) => k.revoked_at),
      [null],
      'minting a token revoked nothing',
    );
    const voided = await exchange(t, late);
    assert.deepEqual([voided.status, voided.body.error.message], [401, 'exchange token already used']);
    const second = await exchange(t, later);
    assert.deepEqual(
      [second.status, second.body.error.message],
      [401, 'exchange token void: its run’s worker key was already issued'],
    );
    assert.equal((await t.as(key).get(`${run.path}/config`)).status, 200, 'the instance’s key still works');
  });

  it('two exchanges of one token at once: exactly one key', async () => {
    const run = await managedRun();
    const token = await mint(run.id);
    const answers = await Promise.all([exchange(t, token), exchange(t, token), exchange(t, token)]);
    assert.deepEqual(
      answers.map((a) => a.status).sort(),
      [201, 401, 401],
      JSON.stringify(answers.map((a) => a.body)),
    );
  });

  it('the bought key ends with the run’s worker keys; unused tokens die with them, and an ended run takes none', async () => {
    const run = await managedRun();
    const key = (await exchange(t, await mint(run.id))).body.key as string;
    const unused = await mint(run.id);
    assert.equal((await t.as(key).get(run.path)).status, 200);
    const revoked = await t.as(orchestratorKey).delete(`${run.url}/worker-keys`);
    assert.deepEqual([revoked.status, revoked.body], [200, { revoked: 1 }]);
    assert.equal((await t.as(key).get(run.path)).status, 401, 'revoked with the run’s keys');
    assert.equal((await exchange(t, unused)).status, 401, 'no key after the revocation');

    const ended = await managedRun();
    const token = await mint(ended.id);
    assert.equal((await t.as(orchestratorKey).post(`${ended.url}/fail`, { reason: 'crash' })).status, 200);
    const late = await exchange(t, token);
    assert.deepEqual([late.status, late.body.error.message], [401, 'exchange token void: its run has ended']);
    const refused = await t.as(orchestratorKey).post(`${ended.url}/exchange-token`);
    assert.deepEqual([refused.status, refused.body.error.code], [409, 'run_ended']);
  });
});
