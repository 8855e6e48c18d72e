import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { committedExperiment, runningRun } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

const keys = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);
const pointsOf = (names: string[], step = 0) => names.map((key) => ({ key, step, value: step + 1 }));

for (const driver of ['postgres', 'pglite'] as const) {
  describe(`distinct metric keys per run on ${driver}`, () => {
    let t: TestService;
    let small: TestService;
    let key: string;
    let smallKey: string;
    let experimentId: string;
    let smallExperimentId: string;
    before(async () => {
      t = await startTestService({ pglite: driver === 'pglite' });
      key = (await t.createUser()).key;
      experimentId = (await committedExperiment(t, key)).id;
      small = await startTestService({
        pglite: driver === 'pglite',
        env: { ASSAY_METRIC_KEYS_PER_RUN: '50' },
      });
      smallKey = (await small.createUser()).key;
      smallExperimentId = (await committedExperiment(small, smallKey)).id;
    });
    after(async () => {
      await t?.close();
      await small?.close();
    });

    const listKeys = async (s: TestService, k: string, path: string) => {
      const res = await s.as(k).get(`${path}/metrics?limit=10000`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.items.map((m: { key: string }) => m.key) as string[];
    };

    it('takes 1,000 keys by default and refuses a batch bringing one more with 409, storing none of it', async () => {
      const run = await runningRun(t, key, experimentId);
      const first = await t.as(key).post(`${run.path}/metrics`, { metrics: pointsOf(keys('k', 1000)) });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      // A known key's new step and one new key, in one batch: the batch is refused whole.
      const over = await t.as(key).post(`${run.path}/metrics`, {
        metrics: [...pointsOf(['k0000'], 1), ...pointsOf(['one-more'])],
      });
      assert.equal(over.status, 409, JSON.stringify(over.body));
      assert.equal(over.body.error.code, 'metric_key_limit');
      assert.match(over.body.error.message, /1,000/);
      assert.deepEqual(over.body.error.details, { keys: 1000, new_keys: 1, limit: 1000 });
      const listed = await listKeys(t, key, run.path);
      assert.equal(listed.length, 1000);
      assert.ok(!listed.includes('one-more'));
      const k0 = await t.as(key).get(`${run.path}/metrics/k0000`);
      assert.deepEqual(
        k0.body.points.map((p: { step: number }) => p.step),
        [0],
        'the known key’s point of the refused batch is not stored',
      );
      // Points of keys the run has are still taken.
      const known = await t.as(key).post(`${run.path}/metrics`, { metrics: pointsOf(keys('k', 1000), 1) });
      assert.deepEqual([known.status, known.body], [200, { stored: 1000 }]);
    });

    it('counts keys per run: another run of the experiment has its own allowance', async () => {
      const a = await runningRun(small, smallKey, smallExperimentId);
      const b = await runningRun(small, smallKey, smallExperimentId);
      for (const run of [a, b]) {
        const res = await small
          .as(smallKey)
          .post(`${run.path}/metrics`, { metrics: pointsOf(keys('x', 50)) });
        assert.equal(res.status, 200, JSON.stringify(res.body));
      }
      const over = await small.as(smallKey).post(`${a.path}/metrics`, { metrics: pointsOf(['y']) });
      assert.equal(over.status, 409);
      assert.match(over.body.error.message, /50 metric keys.*1 new.*limit of 50/);
    });

    it('lets no two concurrent batches of new keys pass the limit together', async () => {
      const run = await runningRun(small, smallKey, smallExperimentId);
      // Ten batches of ten new keys each (a key shared by all, too), sent at once: five fit under 50.
      const batches = Array.from({ length: 10 }, (_, i) => [
        ...pointsOf(keys(`b${i}-`, 9)),
        { key: 'shared', step: i, value: i },
      ]);
      const answers = await Promise.all(
        batches.map((metrics) => small.as(smallKey).post(`${run.path}/metrics`, { metrics })),
      );
      const statuses = answers.map((a) => a.status).sort();
      assert.ok(
        answers.every((a) => a.status === 200 || a.body.error?.code === 'metric_key_limit'),
        JSON.stringify(answers.map((a) => a.body)),
      );
      const taken = answers.flatMap((a, i) => (a.status === 200 ? [i] : []));
      const listed = await listKeys(small, smallKey, run.path);
      // The first batch stored brings 10 keys (with `shared`), each later one 9: 1 + 5 batches = 46, a 6th
      // is 55.
      assert.equal(taken.length, 5, JSON.stringify(statuses));
      assert.equal(listed.length, 46);
      const expected = ['shared', ...taken.flatMap((i) => keys(`b${i}-`, 9))].sort();
      assert.deepEqual([...listed].sort(), expected, 'exactly the keys of the batches answered 200');
      const shared = await small.as(smallKey).get(`${run.path}/metrics/shared`);
      assert.deepEqual(
        shared.body.points.map((p: { step: number }) => p.step),
        taken,
        'a refused batch stored no point of a known key either',
      );
    });

    it("pages a run's keys by cursor, filters them by text, and answers them all on the default page", async () => {
      const run = await runningRun(small, smallKey, smallExperimentId);
      const names = [...keys('train/', 15), ...keys('Eval/', 10)];
      const res = await small.as(smallKey).post(`${run.path}/metrics`, { metrics: pointsOf(names) });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const byteOrder = [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const all = await small.as(smallKey).get(`${run.path}/metrics`);
      assert.deepEqual(
        [all.body.items.map((m: { key: string }) => m.key), all.body.next_cursor],
        [byteOrder, null],
      );
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: { status: number; body: any } = await small
          .as(smallKey)
          .get(`${run.path}/metrics?limit=10${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        assert.equal(page.status, 200, JSON.stringify(page.body));
        seen.push(...page.body.items.map((m: { key: string }) => m.key));
        cursor = page.body.next_cursor;
        pages++;
      } while (cursor);
      assert.deepEqual([seen, pages], [byteOrder, 3]);
      const evalKeys = await small.as(smallKey).get(`${run.path}/metrics?contains=eVAL/000`);
      assert.deepEqual(
        evalKeys.body.items.map((m: { key: string }) => m.key),
        keys('Eval/', 10),
      );
      assert.equal(evalKeys.body.items[0].count, 1);
      const bad = await small.as(smallKey).get(`${run.path}/metrics?cursor=bm90LWEtY3Vyc29y`);
      assert.deepEqual([bad.status, bad.body.error.code], [400, 'invalid_cursor']);
      const tooMany = await small.as(smallKey).get(`${run.path}/metrics?limit=10001`);
      assert.equal(tooMany.status, 400);
    });
  });
}
