// The compute queue's grants under contention: two service replicas on one PostgreSQL database answer the
// sagas' asks (POST /orchestrator/runs/{id}/slot) at once, and still never hand out a run slot or a GPU twice.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { mintEmbeddedOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { startTestService, type TestService } from '../support/service.ts';

const env = { ASSAY_LOCAL_COMPUTE_USERS: 'all', ASSAY_LOCAL_GPUS: '0,1,2,3', ASSAY_LOCAL_MAX_RUNS: '3' };

describe('compute queue grants across replicas', () => {
  let primary: TestService;
  let replica: TestService;
  let orchestratorKey: string;

  before(async () => {
    primary = await startTestService({ orchestrator: new FakeOrchestrator(), env });
    replica = await startTestService({ replicaOf: primary, orchestrator: new FakeOrchestrator(), env });
    orchestratorKey = (await mintEmbeddedOrchestratorKey(primary.service.db)).token;
  });
  after(async () => {
    await replica?.close();
    await primary?.close();
  });

  it('twelve runs asking 1 GPU each, asked on both replicas at once: 3 granted, distinct GPUs, the rest in line', async () => {
    const users = [await primary.createUser(), await primary.createUser()];
    const runs: string[] = [];
    for (const [i, user] of users.entries()) {
      const api = primary.as(user.key);
      const experiment = await api.post('/experiments', { name: `busy ${i}`, organization_id: 'personal' });
      const base = `/experiments/${experiment.body.id}/variations`;
      await api.post(base, { config_yaml: stringify({ launch: { command: 'true', gpus: 1 } }) });
      await api.post(`/experiments/${experiment.body.id}/commit`);
      for (let r = 1; r <= 6; r++) {
        const run = (await api.post(`${base}/1/runs`)).body;
        assert.equal((await api.post(`${base}/1/runs/${run.r}/provision`)).status, 202);
        runs.push(run.id);
      }
    }
    const ask = (svc: TestService, id: string) =>
      svc.as(orchestratorKey).post(`/orchestrator/runs/${id}/slot`);
    const answers = await Promise.all(runs.map((id, i) => ask(i % 2 ? replica : primary, id)));
    for (const a of answers) assert.equal(a.status, 200, JSON.stringify(a.body));
    const granted = answers.filter((a) => a.body.state === 'granted');
    assert.equal(granted.length, 3, 'ASSAY_LOCAL_MAX_RUNS');
    const gpus = granted.flatMap((a) => a.body.gpu_ids);
    assert.equal(new Set(gpus).size, 3, `no GPU twice: ${gpus}`);
    // Every ask again, from the other replica: the same grants, and with everyone in line, places 1 to 9.
    const again = await Promise.all(runs.map((id, i) => ask(i % 2 ? primary : replica, id)));
    assert.deepEqual(
      again.map((a) => a.body.gpu_ids),
      answers.map((a) => a.body.gpu_ids),
    );
    const places = again.filter((a) => a.body.state === 'waiting').map((a) => a.body.queue.position);
    assert.deepEqual(
      places.sort((x, y) => x - y),
      [1, 2, 3, 4, 5, 6, 7, 8, 9],
    );

    // One ends: exactly one waiting run takes its place (and its GPU).
    const done = runs[answers.findIndex((a) => a.body.state === 'granted')]!;
    const freed = answers.find((a) => a.body.state === 'granted')!.body.gpu_ids;
    assert.deepEqual((await replica.as(orchestratorKey).delete(`/orchestrator/runs/${done}/slot`)).body, {
      released: true,
    });
    assert.deepEqual((await primary.as(orchestratorKey).delete(`/orchestrator/runs/${done}/slot`)).body, {
      released: false,
    });
    const after = await Promise.all(runs.filter((id) => id !== done).map((id) => ask(primary, id)));
    const now = after.filter((a) => a.body.state === 'granted');
    assert.equal(now.length, 3);
    assert.ok(
      now.some((a) => a.body.gpu_ids[0] === freed[0]),
      'the freed GPU went to the next run',
    );
    assert.equal(new Set(now.flatMap((a) => a.body.gpu_ids)).size, 3);
  });
});
