// A deployment's identity: made at its first start, kept in its database, carried by its task queue.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TemporalOrchestrator } from '../../src/orchestrator/temporal-orchestrator.ts';
import { generateOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { FAST_SAGA } from '../support/orchestration.ts';
import { startTestService, type TestService } from '../support/service.ts';

/** The real orchestrator; its connection is lazy, and these requests never reach Temporal. */
const orchestrator = (taskQueue: string | undefined) =>
  TemporalOrchestrator.connect({
    temporal: { address: '127.0.0.1:1', namespace: 'default', uiUrl: undefined, taskQueue },
    saga: FAST_SAGA,
  });

describe('the deployment identity and its task queue', () => {
  const key = generateOrchestratorKey();
  const env = { ASSAY_ORCHESTRATOR_KEY: key };
  let first: TestService;
  before(async () => {
    first = await startTestService({ orchestrator: await orchestrator(undefined), env });
  });
  after(() => first.close());

  it('names the task queue after an installation id made once: a later start (or a replica) keeps it', async () => {
    const answer = await first.as(key).get('/orchestrator/deployment');
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const { installation_id, task_queue, namespace } = answer.body;
    assert.match(installation_id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.deepEqual([task_queue, namespace], [`assay-${installation_id}`, 'default']);
    const replica = await startTestService({
      replicaOf: first,
      orchestrator: await orchestrator(undefined),
      env,
    });
    try {
      assert.deepEqual((await replica.as(key).get('/orchestrator/deployment')).body, answer.body);
    } finally {
      await replica.close();
    }
  });

  it('an operator-set ASSAY_TASK_QUEUE wins over the derived name', async () => {
    const installationId = (await first.as(key).get('/orchestrator/deployment')).body.installation_id;
    const replica = await startTestService({
      replicaOf: first,
      orchestrator: await orchestrator('ops'),
      env,
    });
    try {
      assert.deepEqual((await replica.as(key).get('/orchestrator/deployment')).body, {
        installation_id: installationId,
        namespace: 'default',
        task_queue: 'ops',
      });
    } finally {
      await replica.close();
    }
  });

  it('answers only the orchestrator key', async () => {
    const user = await first.createUser();
    const refused = await first.as(user.key).get('/orchestrator/deployment');
    assert.deepEqual([refused.status, refused.body.error.code], [403, 'insufficient_scope']);
  });
});
