// On `local`, a launch block runs as the service's OS user: who WROTE it decides, not who provisions it.
// An organization owner can add the admin to their organization; the admin then sees Provision on its runs.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { stringify } from 'yaml';
import { createActivities } from '../../activities/index.ts';
import { OrchestratorApi } from '../../activities/orchestrator-api.ts';
import { LocalProvider } from '../../src/compute/local-provider.ts';
import { mintEmbeddedOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { startTestService, type TestService } from '../support/service.ts';

const LAUNCH = { command: 'cat "$HOME/.ssh/id_rsa"' };

/** A researcher's org experiment with the admin added to the org, one variation written by the researcher. */
async function researcherRun(t: TestService, researcherKey: string) {
  const adminId = (await t.as(t.adminKey).get('/v1/me')).body.id as string;
  const slug = `lab-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
  const org = await t.as(researcherKey).post('/organizations', { slug, name: 'Lab' });
  assert.equal(org.status, 201, JSON.stringify(org.body));
  const added = await t.as(researcherKey).post(`/organizations/${org.body.id}/members`, { user_id: adminId });
  assert.equal(added.status, 201, JSON.stringify(added.body));
  const e = await t.as(researcherKey).post('/experiments', { name: 'lab', organization_id: org.body.id });
  const id = e.body.id as string;
  const v = await t
    .as(researcherKey)
    .post(`/experiments/${id}/variations`, { config_yaml: stringify({ lr: 0.1, launch: LAUNCH }) });
  assert.equal(v.status, 201, JSON.stringify(v.body));
  return { id, variation: `/experiments/${id}/variations/1` };
}

async function pendingRun(t: TestService, key: string, experimentId: string) {
  assert.equal((await t.as(key).post(`/experiments/${experimentId}/commit`)).status, 200);
  const run = await t.as(key).post(`/experiments/${experimentId}/variations/1/runs`);
  assert.equal(run.status, 201, JSON.stringify(run.body));
  return { id: run.body.id as string, r: run.body.r as number };
}

describe('local compute with ASSAY_LOCAL_COMPUTE_USERS=admins: the launch block’s author decides', () => {
  let t: TestService;
  let researcher: { key: string; email: string };
  before(async () => {
    t = await startTestService({
      orchestrator: new FakeOrchestrator(),
      env: { ASSAY_LOCAL_COMPUTE_USERS: 'admins' },
    });
    researcher = await t.createUser();
  });
  after(() => t.close());

  it('refuses the admin’s provision of a researcher’s launch block: 422, the run left pending', async () => {
    const { id, variation } = await researcherRun(t, researcher.key);
    // An admin's edit that leaves the launch block as it was does not make it theirs.
    const edit = await t
      .as(t.adminKey)
      .patch(variation, { config_yaml: stringify({ lr: 0.2, launch: LAUNCH }) });
    assert.equal(edit.status, 200, JSON.stringify(edit.body));
    const run = await pendingRun(t, t.adminKey, id);
    const res = await t.as(t.adminKey).post(`${variation}/runs/${run.r}/provision`);
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'launch_not_allowed');
    assert.equal(res.body.error.details.field, 'launch.command');
    assert.match(res.body.error.message, new RegExp(researcher.email.replace(/[.+]/g, '\\$&')));
    assert.match(res.body.error.message, /ASSAY_LOCAL_COMPUTE_USERS/);
    const after = (await t.as(t.adminKey).get(`${variation}/runs/${run.r}`)).body;
    assert.deepEqual([after.state, after.managed], ['pending', false]);
  });

  it('runs a launch block the admin rewrote: the admin is then its author', async () => {
    const { id, variation } = await researcherRun(t, researcher.key);
    const edit = await t
      .as(t.adminKey)
      .patch(variation, { config_yaml: stringify({ lr: 0.1, launch: { command: 'python train.py' } }) });
    assert.equal(edit.status, 200, JSON.stringify(edit.body));
    const run = await pendingRun(t, t.adminKey, id);
    const res = await t.as(t.adminKey).post(`${variation}/runs/${run.r}/provision`);
    assert.equal(res.status, 202, JSON.stringify(res.body));
  });

  it('refuses a researcher’s sweep, whose points carry the researcher’s launch block, before writing anything', async () => {
    const e = await t.as(researcher.key).post('/experiments', { name: 'sweep' });
    const res = await t.as(researcher.key).post(`/experiments/${e.body.id}/sweeps`, {
      base_yaml: stringify({ lr: 0.1, launch: LAUNCH }),
      grid: { lr: [0.1, 0.2] },
    });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'launch_not_allowed');
    assert.match(res.body.error.message, /ASSAY_LOCAL_COMPUTE_USERS/);
    const variations = await t.as(researcher.key).get(`/experiments/${e.body.id}/variations`);
    assert.deepEqual(variations.body.items, [], 'nothing was created');
  });
});

describe('the worker’s local provider checks the launch block’s author, whoever provisioned the run', () => {
  let t: TestService;
  let dataDir: string;
  let orchestratorKey: string;
  before(async () => {
    // The service lets everyone provision; the worker's own setting is `admins`, and it enforces that.
    t = await startTestService({
      listen: true,
      orchestrator: new FakeOrchestrator(),
      env: { ASSAY_LOCAL_COMPUTE_USERS: 'all' },
    });
    orchestratorKey = (await mintEmbeddedOrchestratorKey(t.service.db)).token;
    dataDir = await mkdtemp(path.join(tmpdir(), 'assay-author-'));
  });
  after(async () => {
    await t.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('fails the admin-provisioned run of a researcher’s launch block without starting anything', async () => {
    const researcher = await t.createUser();
    const { id, variation } = await researcherRun(t, researcher.key);
    const run = await pendingRun(t, t.adminKey, id);
    const provisioned = await t.as(t.adminKey).post(`${variation}/runs/${run.r}/provision`);
    assert.equal(provisioned.status, 202, JSON.stringify(provisioned.body));
    const stateDir = path.join(dataDir, 'instances');
    const provider = new LocalProvider({ stateDir, runnerArgv: ['true'], users: 'admins' });
    const api = new OrchestratorApi({ serverUrl: t.url!, apiKey: orchestratorKey, timeout: 30 });
    let minted = 0;
    const mint = api.mintExchangeToken.bind(api);
    api.mintExchangeToken = (runId) => (minted++, mint(runId));
    const activities = createActivities({ api, provider, runnerServerUrl: t.url! });
    const ref = { runId: run.id, workflowId: provisioned.body.workflow_id, experimentId: id, n: 1, r: run.r };
    await assert.rejects(
      new MockActivityEnvironment().run(activities.provisionInstance, ref),
      (error: Error) => {
        assert.match(error.message, /written by .*ASSAY_LOCAL_COMPUTE_USERS/);
        return true;
      },
    );
    assert.equal(minted, 0, 'no exchange token was minted');
    const files = await readdir(stateDir).catch(() => []);
    assert.deepEqual(files, [], 'no instance was started');
  });
});
