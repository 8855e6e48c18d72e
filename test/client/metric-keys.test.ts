// The client's reads of metric keys (a run's, an experiment's) and of compared curves, page by page, and the
// per-run key limit as a caller meets it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiClient, ConflictError, MetricsError, NotFoundError } from '../../src/client/browser.ts';
import { committedExperiment, runningRun } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

const names = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);

describe('metric keys and compared curves through the client', () => {
  let t: TestService;
  let key: string;
  let client: ApiClient;

  before(async () => {
    // Past the default page (1,000 keys), so that reading every key needs a second page.
    t = await startTestService({ listen: true, env: { ASSAY_METRIC_KEYS_PER_RUN: '1200' } });
    key = (await t.createUser()).key;
    client = new ApiClient({ serverUrl: t.url!, apiKey: key });
  });
  after(() => t?.close());

  async function runWithKeys(experimentId: string, keys: string[], step = 0) {
    const { r } = await runningRun(t, key, experimentId);
    for (let i = 0; i < keys.length; i += 1000) {
      const points = keys.slice(i, i + 1000).map((k) => ({ key: k, step, value: step + 0.5 }));
      await client.runs.logMetrics(experimentId, 1, r, points);
    }
    return r;
  }

  it("pages a run's keys, filters them by text, and reads every page with metrics()", async () => {
    const experimentId = (await committedExperiment(t, key)).id;
    const keys = [...names('train/', 1100), ...names('eval/', 100)];
    const r = await runWithKeys(experimentId, keys);
    const first = await client.runs.metricKeys(experimentId, 1, r, { limit: 700 });
    assert.equal(first.items.length, 700);
    assert.deepEqual(
      first.items.slice(0, 2).map((m) => [m.key, m.count, m.last.value]),
      [
        ['eval/0000', 1, 0.5],
        ['eval/0001', 1, 0.5],
      ],
    );
    assert.ok(first.next_cursor);
    const second = await client.runs.metricKeys(experimentId, 1, r, {
      limit: 700,
      cursor: first.next_cursor,
    });
    assert.deepEqual([second.items.length, second.next_cursor], [500, null]);
    const filtered = await client.runs.metricKeys(experimentId, 1, r, { contains: 'EVAL/009' });
    assert.deepEqual(
      filtered.items.map((m) => m.key),
      names('eval/', 100).slice(90),
    );
    // The default page holds 1,000 keys: metrics() follows the cursor to the rest.
    const all = await client.run(experimentId, 1, r).metrics();
    assert.deepEqual(
      all.map((m) => m.key),
      [...keys].sort(),
    );
  });

  it("pages an experiment's keys and one key's curves of every run", async () => {
    const experimentId = (await committedExperiment(t, key)).id;
    const r1 = await runWithKeys(experimentId, ['loss', 'acc']);
    const r2 = await runWithKeys(experimentId, ['loss', 'lr']);
    const page = await client.experiments.metricKeys(experimentId, { limit: 2 });
    assert.deepEqual(page.items, [
      { key: 'acc', runs: 1 },
      { key: 'loss', runs: 2 },
    ]);
    const rest = await client.experiments.metricKeys(experimentId, { cursor: page.next_cursor! });
    assert.deepEqual([rest.items, rest.next_cursor], [[{ key: 'lr', runs: 1 }], null]);

    const curves = await client.experiments.metricSeries(experimentId, 'loss', { limit: 1, maxPoints: 10 });
    assert.deepEqual(
      curves.items.map((c) => [c.r, c.count, c.points]),
      [[r1, 1, [{ step: 0, value: 0.5 }]]],
    );
    const next = await client.experiments.metricSeries(experimentId, 'loss', {
      limit: 1,
      cursor: curves.next_cursor!,
    });
    assert.deepEqual([next.items.map((c) => c.r), next.next_cursor], [[r2], null]);
    const ranged = await client.experiments.metricSeries(experimentId, 'loss', { minStep: 1 });
    assert.deepEqual(
      ranged.items.map((c) => c.count),
      [0, 0],
    );
    await assert.rejects(client.experiments.metricSeries(experimentId, 'never-logged'), NotFoundError);
  });

  it('reports a batch past the key limit as a MetricsError caused by a ConflictError (metric_key_limit)', async () => {
    const experimentId = (await committedExperiment(t, key)).id;
    const r = await runWithKeys(experimentId, names('k', 1200));
    const run = client.run(experimentId, 1, r);
    run.logMetrics({ 'one-more': 1, k0000: 2 }, { step: 1 });
    const error = await run.flushMetrics().then(
      () => assert.fail('flush succeeded'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof MetricsError, String(error));
    assert.ok(error.cause instanceof ConflictError);
    assert.equal(error.cause.code, 'metric_key_limit');
    assert.match(error.message, /1,200 metric keys/);
    const k0 = await run.metricSeries('k0000');
    assert.deepEqual(
      k0.points.map((p) => p.step),
      [0],
    );
  });
});
