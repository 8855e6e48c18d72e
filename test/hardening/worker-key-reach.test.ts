import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { seedObjects, type SeededObjects, type SeededRun } from '../support/seed-objects.ts';
import { startTestService, type TestService } from '../support/service.ts';

// A worker key travels in an instance's user data, so whoever reads that must reach the key's run and the
// run's assets and nothing else: not the owner's organizations, profile or other experiments. The operations
// come from /openapi.json, so an endpoint added later is covered the day it lands.

/** Where a worker key may go at all; everything else must refuse it. */
const RUN_OR_ASSET = /^\/(experiments\/\{id\}\/variations\/\{n\}\/runs(\/|$)|assets(\/|$))/;

interface Op {
  method: string;
  path: string;
}

describe('worker keys reach their run and its assets, nothing else (every operation of the OpenAPI document)', () => {
  let t: TestService;
  let seed: SeededObjects;
  let run: SeededRun;
  let worker: { id: string; key: string };
  let ops: Op[];

  before(async () => {
    // The seed's researcher provisions a launch block they wrote themselves.
    t = await startTestService({
      orchestrator: new FakeOrchestrator(),
      env: { ASSAY_LOCAL_COMPUTE_USERS: 'all' },
    });
    const owner = await t.createUser();
    const org = await t.as(owner.key).post('/organizations', { slug: `reach-${Date.now()}`, name: 'Reach' });
    assert.equal(org.status, 201, JSON.stringify(org.body));
    seed = await seedObjects(t, owner.key, {
      organizationId: org.body.id,
      label: 'reach',
      searchWord: 'reach',
    });
    run = seed.runs[1]!; // running, and the checkpoint asset is its own
    const minted = await t.as(owner.key).post('/api-keys', {
      description: 'worker',
      kind: 'worker',
      scopes: ['runs:read', 'runs:write', 'assets:read', 'assets:write'],
      run: { experiment_id: run.experimentId, n: run.n, r: run.r },
    });
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    worker = { id: minted.body.id, key: minted.body.key };
    const doc = (await t.request('GET', '/openapi.json')).body as { paths: Record<string, object> };
    ops = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods)
        .filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
        .map((method) => ({ method: method.toUpperCase(), path })),
    );
  });
  after(() => t?.close());

  /** The worker's own objects wherever a path names one, so a refusal is about the route, not the object. */
  function urlOf(path: string): string {
    return path.replace(/\{(\w+)\}/g, (_, name: string) => {
      if (name === 'n') return String(run.n);
      if (name === 'r') return String(run.r);
      if (name === 'run_id') return run.id;
      if (name === 'sweep_id') return seed.sweepId;
      if (name === 'key') return 'loss'; // a metric key
      if (name !== 'id') assert.fail(`${path}: the test does not know what {${name}} names`);
      if (path.startsWith('/experiments/')) return run.experimentId;
      if (path.startsWith('/assets/')) return seed.assetIds.checkpoint;
      if (path.startsWith('/organizations/')) return seed.organizationId!;
      if (path.startsWith('/api-keys/')) return worker.id;
      return randomUUID();
    });
  }
  const call = (op: Op, key?: string) =>
    t.request(op.method, urlOf(op.path), {
      ...(key ? { key } : {}),
      ...(op.method === 'GET' || op.method === 'DELETE' ? {} : { body: {} }),
    });

  it('answers 403 or 404 on every authenticated operation outside its run and assets', async () => {
    const outside = ops.filter((op) => !RUN_OR_ASSET.test(op.path));
    let checked = 0;
    for (const op of outside) {
      if ((await call(op)).status !== 401) continue; // public: health, docs
      const res = await call(op, worker.key);
      assert.ok(
        res.status === 403 || res.status === 404,
        `${op.method} ${op.path}: ${res.status} ${JSON.stringify(res.body)}`,
      );
      checked++;
    }
    for (const path of ['/v1/me', '/v1/me/scopes', '/organizations/{id}', '/organizations/{id}/members']) {
      const res = await call({ method: 'GET', path }, worker.key);
      assert.deepEqual([res.status, res.body.error.code], [403, 'worker_key_restricted'], path);
    }
    assert.ok(checked >= 20, `only ${checked} operations checked`);
  });

  it("still reads its own run and the run's assets", async () => {
    const api = t.as(worker.key);
    for (const url of [
      run.path,
      `${run.path}/config`,
      `${run.path}/metrics`,
      `${run.path}/metrics/loss?max_points=10`,
      `/experiments/${run.experimentId}/variations/${run.n}/runs`,
      `/assets/${seed.assetIds.checkpoint}`,
      `/assets/${seed.assetIds.checkpoint}/download`,
      `/assets?experiment_id=${run.experimentId}&n=${run.n}&r=${run.r}`,
    ]) {
      const res = await api.get(url);
      assert.equal(res.status, 200, `${url}: ${JSON.stringify(res.body)}`);
    }
    const beat = await api.post(`${run.path}/heartbeat`);
    assert.equal(beat.status, 200, JSON.stringify(beat.body));
    const logged = await api.post(`${run.path}/metrics`, { metrics: [{ key: 'loss', step: 1, value: 1 }] });
    assert.equal(logged.status, 200, JSON.stringify(logged.body));
    const report = await api.post('/assets', {
      kind: 'report',
      name: 'worker report',
      run: { experiment_id: run.experimentId, n: run.n, r: run.r },
      content: 'done',
    });
    assert.equal(report.status, 201, JSON.stringify(report.body));
  });
});
