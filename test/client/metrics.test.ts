// run.logMetrics batches, flushes and retries against the real service; the read calls give the points back.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_METRIC_POINTS_PER_REQUEST } from '../../src/contract/index.ts';
import { ApiClient, ConflictError, MetricsError, type Run } from '../../src/client/browser.ts';
import { waitFor } from '../support/cli.ts';
import { committedExperiment, createRun, runningRun } from '../support/fixtures.ts';
import { startRecordingProxy, type Fault } from '../support/recording-proxy.ts';
import { startTestService, type TestService } from '../support/service.ts';

/** The shared proxy, where metric POSTs meet the queued faults first. */
async function faultyProxy(target: string) {
  const faults: Fault[] = [];
  const proxy = await startRecordingProxy(target, {
    intercept: (req) =>
      req.method === 'POST' && /\/metrics$/.test(req.url ?? '') ? faults.shift() : undefined,
  });
  return {
    ...proxy,
    faults,
    /** The metric POSTs seen so far, faults included. */
    posts: () => proxy.requests.filter((r) => r.startsWith('POST') && /\/metrics( |$)/.test(r)),
  };
}

describe('run metrics through the client', () => {
  let t: TestService;
  let key: string;
  let experimentId: string;
  let proxy: Awaited<ReturnType<typeof faultyProxy>>;
  let client: ApiClient;

  before(async () => {
    t = await startTestService({ listen: true });
    key = (await t.createUser()).key;
    experimentId = (await committedExperiment(t, key)).id;
    proxy = await faultyProxy(t.url!);
    // The browser client: the buffer needs nothing of Node. Short intervals keep the test quick.
    client = new ApiClient({
      serverUrl: proxy.url,
      apiKey: key,
      metrics: { flushInterval: 0.2, retryFor: 30 },
    });
  });
  after(async () => {
    await proxy.close();
    await t.close();
  });

  async function running(): Promise<Run> {
    const { r } = await runningRun(t, key, experimentId);
    return client.run(experimentId, 1, r);
  }

  it('sends thousands of logMetrics calls in a few full batches and reads them back by key, page and downsample', async () => {
    const run = await running();
    const before = proxy.posts().length;
    for (let step = 0; step < 2500; step += 1)
      run.logMetrics({ loss: 1 / (step + 1), 'train/acc': step / 2500 }, { step });
    await run.flushMetrics();
    // 5,000 points, 1,000 a request.
    assert.equal(proxy.posts().length - before, 5000 / MAX_METRIC_POINTS_PER_REQUEST);

    const summaries = await run.metrics();
    assert.deepEqual(
      summaries.map((s) => [s.key, s.count, s.last.step, s.min, s.max]),
      [
        ['loss', 2500, 2499, 1 / 2500, 1],
        ['train/acc', 2500, 2499, 0, 2499 / 2500],
      ],
    );
    const all = [];
    for await (const p of client.runs.iterateMetricPoints(experimentId, 1, run.r, 'train/acc', {
      limit: 700,
    }))
      all.push(p);
    assert.deepEqual(
      all.map((p) => p.step),
      Array.from({ length: 2500 }, (_, i) => i),
    );
    const chart = await run.metricSeries('loss', { maxPoints: 100 });
    assert.equal(chart.downsampled, true);
    assert.ok(chart.points.length <= 100 && chart.points.length > 0, String(chart.points.length));
    assert.equal(chart.next_cursor, null);
  });

  it('sends a partial batch after the flush interval, and the rest when the run succeeds', async () => {
    const run = await running();
    run.logMetrics({ loss: 0.5 }, { step: 1 });
    const posts = proxy.posts().length;
    // No flush asked for: the interval alone sends it.
    await waitFor('the interval’s batch', async () =>
      (await client.runs.metrics(experimentId, 1, run.r)).length > 0 ? true : undefined,
    );
    assert.equal(proxy.posts().length, posts + 1);
    run.logMetrics({ loss: 0.25 }, { step: 2 });
    assert.equal((await run.succeed()).state, 'succeeded');
    const [loss] = await run.metrics();
    assert.equal(loss?.count, 2);
    assert.deepEqual([loss?.last.step, loss?.last.value], [2, 0.25]);
  });

  it('retries a batch after a 503 and a dropped connection; every point is stored once', async () => {
    const run = await running();
    proxy.faults.push('503', 'reset');
    const before = proxy.posts().length;
    for (let step = 0; step < 1500; step += 1) run.logMetrics({ loss: step }, { step });
    await run.flushMetrics();
    const posts = proxy.posts().slice(before);
    // The first batch three times (503, reset, stored), the second once.
    assert.deepEqual(
      posts.map((p) => /\((\w+)\)$/.exec(p)?.[1] ?? 'ok'),
      ['503', 'reset', 'ok', 'ok'],
    );
    const [loss] = await run.metrics();
    assert.equal(loss?.count, 1500);
    const steps = [];
    for await (const p of client.runs.iterateMetricPoints(experimentId, 1, run.r, 'loss')) steps.push(p.step);
    assert.equal(new Set(steps).size, 1500);
  });

  it('carries NaN and ±Infinity, and numbers calls without a step 0, 1, 2… after the last given step', async () => {
    const run = await running();
    run.logMetrics({ x: Number.NaN });
    run.logMetrics({ x: Infinity });
    run.logMetrics({ x: -Infinity }, { step: 10 });
    run.logMetrics({ x: 2 });
    run.logMetrics({ x: 1 }, { step: 20, timestamp: '2026-01-02T03:04:05Z' });
    await run.flushMetrics();
    const series = await run.metricSeries('x');
    assert.deepEqual(
      series.points.map((p) => [p.step, p.value]),
      [
        [0, 'NaN'],
        [1, 'Infinity'],
        [10, '-Infinity'],
        [11, 2],
        [20, 1],
      ],
    );
    assert.equal(new Date(series.points[4]!.timestamp).toISOString(), '2026-01-02T03:04:05.000Z');
    const [x] = await run.metrics();
    assert.equal(x?.min, '-Infinity');
    assert.equal(x?.max, 'Infinity');
  });

  it('refuses a bad key, step or value at the call, before any request', async () => {
    const run = await running();
    const before = proxy.requests.length;
    assert.throws(() => run.logMetrics({ 'bad key!': 1 }), RangeError);
    assert.throws(() => run.logMetrics({ ' padded': 1 }), /invalid metric key/);
    assert.throws(() => run.logMetrics({ loss: 1 }, { step: -1 }), /invalid metric step/);
    assert.throws(() => run.logMetrics({ loss: '1' as unknown as number }), TypeError);
    await run.flushMetrics();
    assert.equal(proxy.requests.length, before);
  });

  it('does not retry a 4xx: the next call throws MetricsError with the service’s answer', async () => {
    const { r } = await createRun(t, key, experimentId);
    const run = client.run(experimentId, 1, r); // pending: metrics are refused until it starts
    const before = proxy.posts().length;
    run.logMetrics({ loss: 1 }, { step: 0 });
    run.logMetrics({ loss: 2 }, { step: 1 });
    const error = await run.flushMetrics().then(
      () => assert.fail('flush succeeded'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof MetricsError, String(error));
    assert.equal(error.dropped, 2);
    assert.match(error.message, /^2 metric point\(s\) not stored: .*\(run_not_started\)$/);
    assert.ok(error.cause instanceof ConflictError);
    assert.equal(error.cause.code, 'run_not_started');
    assert.equal(proxy.posts().length - before, 1);
    // Reported once: the handle goes on.
    await run.flushMetrics();
  });

  it("answers an experiment's figures per run for the asked keys", async () => {
    const a = await running();
    const b = await running();
    a.logMetrics({ loss: 0.4, acc: 0.8 }, { step: 5 });
    b.logMetrics({ loss: 0.3 }, { step: 7 });
    await Promise.all([a.flushMetrics(), b.flushMetrics()]);
    const figures = await client.experiments.metrics(experimentId, ['loss', 'acc']);
    assert.deepEqual(figures.keys, ['loss', 'acc']);
    const byRun = new Map(figures.items.map((i) => [i.r, i.metrics]));
    assert.deepEqual(byRun.get(a.r)?.acc, { last_step: 5, last: 0.8, min: 0.8, max: 0.8, count: 1 });
    assert.equal(byRun.get(b.r)?.loss?.last, 0.3);
    assert.equal(byRun.get(b.r)?.acc, undefined);
  });
});
