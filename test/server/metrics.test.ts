import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { committedExperiment, createRun, runningRun } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

type Point = { key: string; step: number; value: number | string; timestamp?: string };

const points = (key: string, from: number, to: number, value: (step: number) => number | string) =>
  Array.from({ length: to - from }, (_, i) => ({ key, step: from + i, value: value(from + i) }));

for (const driver of ['postgres', 'pglite'] as const) {
  describe(`run metrics on ${driver}`, () => {
    let t: TestService;
    let key: string;
    let experimentId: string;
    before(async () => {
      t = await startTestService({ pglite: driver === 'pglite' });
      key = (await t.createUser()).key;
      experimentId = (await committedExperiment(t, key)).id;
    });
    after(() => t?.close());

    const log = (path: string, metrics: Point[], k = key) => t.as(k).post(`${path}/metrics`, { metrics });
    const series = (path: string, metric: string, query = '') =>
      t.as(key).get(`${path}/metrics/${encodeURIComponent(metric)}${query}`);

    it('stores a batch, and a resent batch overwrites instead of duplicating', async () => {
      const run = await runningRun(t, key, experimentId);
      const batch = [
        ...points('train/loss', 0, 100, (s) => 1 / (s + 1)),
        ...points('acc', 0, 100, (s) => s / 100),
      ];
      const first = await log(run.path, batch);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.deepEqual(first.body, { stored: 200 });
      const again = await log(run.path, batch);
      assert.deepEqual([again.status, again.body], [200, { stored: 200 }]);
      const list = await t.as(key).get(`${run.path}/metrics`);
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.items.map((s: any) => [s.key, s.count, s.last.step, s.last.value, s.min, s.max]),
        [
          ['acc', 100, 99, 0.99, 0, 0.99],
          ['train/loss', 100, 99, 0.01, 0.01, 1],
        ],
      );
      const loss = await series(run.path, 'train/loss', '?limit=10000');
      assert.equal(loss.status, 200, JSON.stringify(loss.body));
      assert.equal(loss.body.count, 100);
      assert.equal(loss.body.points.length, 100, 'no duplicates');
      assert.deepEqual(loss.body.points[3], {
        step: 3,
        value: 0.25,
        timestamp: loss.body.points[3].timestamp,
      });
    });

    it('takes many batches of one run at once (an SDK with requests in flight): every one stored, none a 500', async () => {
      const run = await runningRun(t, key, experimentId);
      const keys = Array.from({ length: 10 }, (_, i) => `k${i}`);
      // 16 batches in flight, each 10 keys × 100 steps, the keys in a different order in each: on PostgreSQL
      // two batches lock the same series and blocks in opposite orders, and one is rolled back to break the
      // deadlock.
      const batches = Array.from({ length: 16 }, (_, b) =>
        Array.from({ length: 100 }, (_, j) => b + 16 * j).flatMap((step) =>
          (b % 2 ? [...keys].reverse() : keys).map((k) => ({ key: k, step, value: step })),
        ),
      );
      for (let round = 0; round < 3; round++) {
        const answers = await Promise.all(batches.map((batch) => log(run.path, batch)));
        for (const a of answers) assert.deepEqual([a.status, a.body], [200, { stored: 1000 }]);
      }
      const list = await t.as(key).get(`${run.path}/metrics`);
      assert.deepEqual(
        list.body.items.map((s: any) => [s.key, s.count, s.last.step, s.min, s.max]),
        keys.map((k) => [k, 1600, 1599, 0, 1599]),
      );
    });

    it('keeps the last of repeats inside one batch, and the given timestamp or the time received', async () => {
      const run = await runningRun(t, key, experimentId);
      const before = Date.now();
      const res = await log(run.path, [
        { key: 'x', step: 1, value: 1, timestamp: '2020-01-02T03:04:05.678Z' },
        { key: 'x', step: 2, value: 5 },
        { key: 'x', step: 1, value: 2, timestamp: '2021-01-02T03:04:05.678Z' },
        // An offset PostgreSQL's timestamptz would refuse (it stops at ±15:59): stored as the same moment
        // in UTC.
        { key: 'x', step: 3, value: 7, timestamp: '1129-03-29T13:04:42+23:17' },
      ]);
      assert.deepEqual([res.status, res.body], [200, { stored: 3 }]);
      const got = (await series(run.path, 'x')).body;
      assert.deepEqual(
        got.points.map((p: any) => [p.step, p.value]),
        [
          [1, 2],
          [2, 5],
          [3, 7],
        ],
      );
      assert.equal(got.points[0].timestamp, '2021-01-02T03:04:05.678Z');
      assert.equal(Date.parse(got.points[2].timestamp), Date.parse('1129-03-28T13:47:42Z'));
      assert.ok(Date.parse(got.points[1].timestamp) >= before - 1000, got.points[1].timestamp);
    });

    it('round-trips NaN and ±Infinity, and min/max ignore NaN and follow overwrites', async () => {
      const run = await runningRun(t, key, experimentId);
      const res = await log(run.path, [
        { key: 'v', step: 0, value: 'NaN' },
        { key: 'v', step: 1, value: 3 },
        { key: 'v', step: 2, value: -2 },
        { key: 'v', step: 3, value: 'NaN' },
        { key: 'inf', step: 0, value: 'Infinity' },
        { key: 'inf', step: 1, value: '-Infinity' },
        { key: 'nan', step: 5, value: 'NaN' },
      ]);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const summary = async () =>
        Object.fromEntries(
          (await t.as(key).get(`${run.path}/metrics`)).body.items.map((s: any) => [
            s.key,
            [s.count, s.last.step, s.last.value, s.min, s.max],
          ]),
        );
      assert.deepEqual(await summary(), {
        v: [4, 3, 'NaN', -2, 3],
        inf: [2, 1, '-Infinity', '-Infinity', 'Infinity'],
        nan: [1, 5, 'NaN', null, null],
      });
      assert.deepEqual(
        (await series(run.path, 'inf')).body.points.map((p: any) => p.value),
        ['Infinity', '-Infinity'],
      );
      // Overwriting the max (3) with a smaller value, and the min with NaN: both extremes must move.
      await log(run.path, [
        { key: 'v', step: 1, value: 1 },
        { key: 'v', step: 2, value: 'NaN' },
      ]);
      assert.deepEqual((await summary()).v, [4, 3, 'NaN', 1, 1]);
      await log(run.path, [{ key: 'v', step: 10, value: 7.5 }]);
      assert.deepEqual((await summary()).v, [5, 10, 7.5, 1, 7.5]);
      // An overwrite of an earlier step leaves the last point alone.
      await log(run.path, [{ key: 'v', step: 0, value: -9 }]);
      assert.deepEqual((await summary()).v, [5, 10, 7.5, -9, 7.5]);
    });

    it('stores a batch of known and new keys, new and resent steps, and concurrent batches, exactly', async () => {
      const run = await runningRun(t, key, experimentId);
      const summary = async () =>
        Object.fromEntries(
          (await t.as(key).get(`${run.path}/metrics`)).body.items.map((s: any) => [
            s.key,
            [s.count, s.last.step, s.last.value, s.min, s.max],
          ]),
        );
      assert.equal(
        (
          await log(
            run.path,
            points('a', 0, 10, (s) => s),
          )
        ).status,
        200,
      );
      // One batch: a known key's new steps and a resent step lowering its max, and a key the run never had.
      const mixed = await log(run.path, [
        ...points('a', 10, 12, (s) => s),
        { key: 'a', step: 9, value: 0.5 },
        ...points('b', 0, 3, (s) => -s),
      ]);
      assert.deepEqual([mixed.status, mixed.body], [200, { stored: 6 }]);
      assert.deepEqual(await summary(), { a: [12, 11, 11, 0, 11], b: [3, 2, -2, -2, 0] });
      // Twenty batches of one series at once, each its own steps: every point counted once, extremes exact.
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          log(
            run.path,
            points('c', i * 50, i * 50 + 50, (s) => s % 97),
          ),
        ),
      );
      assert.deepEqual(
        results.map((r) => r.status),
        results.map(() => 200),
      );
      assert.deepEqual((await summary()).c, [1000, 999, 999 % 97, 0, 96]);
      const c = await series(run.path, 'c', '?max_points=10');
      assert.equal(c.status, 200, JSON.stringify(c.body));
      assert.ok(
        c.body.points.some((p: any) => p.value === 96) && c.body.points.some((p: any) => p.value === 0),
        'the downsampled curve keeps both extremes',
      );
    });

    it('refuses a batch with a bad point, naming its index, and stores nothing of it', async () => {
      const run = await runningRun(t, key, experimentId);
      const good = points('ok', 0, 5, (s) => s);
      for (const [bad, path] of [
        [{ key: 'ok', step: 9, value: 'nan' }, '/metrics/3/value'],
        [{ key: 'ok', step: -1, value: 1 }, '/metrics/3/step'],
        [{ key: 'ok', step: 1.5, value: 1 }, '/metrics/3/step'],
        [{ key: 'ok', step: 2, value: null }, '/metrics/3/value'],
        [{ key: 'ok', step: 2, value: true }, '/metrics/3/value'],
        [{ key: 'ok', step: '7', value: 1 }, '/metrics/3/step'],
        [{ key: 'ok', step: null, value: 1 }, '/metrics/3/step'],
        [{ key: 'bad key!', step: 2, value: 1 }, '/metrics/3/key'],
        [{ key: ' lead', step: 2, value: 1 }, '/metrics/3/key'],
        [{ key: 'k'.repeat(251), step: 2, value: 1 }, '/metrics/3/key'],
        [{ key: 'ok', step: 2, value: 1, timestamp: 'yesterday' }, '/metrics/3/timestamp'],
        // RFC 3339 date-times that PostgreSQL cannot store
        [{ key: 'ok', step: 2, value: 1, timestamp: '0000-01-01T00:00:00Z' }, '/metrics/3/timestamp'],
        [{ key: 'ok', step: 2, value: 1, timestamp: '9999-12-31T23:59:59-23:00' }, '/metrics/3/timestamp'],
      ] as const) {
        const res = await log(run.path, [...good.slice(0, 3), bad as never, ...good.slice(3)]);
        assert.equal(res.status, 422, JSON.stringify(res.body));
        assert.equal(res.body.error.code, 'validation_failed');
        assert.equal(res.body.error.details[0].path, path, JSON.stringify(res.body));
      }
      assert.deepEqual((await t.as(key).get(`${run.path}/metrics`)).body.items, []);
      const edge = await log(run.path, [
        { key: 'k'.repeat(250), step: Number.MAX_SAFE_INTEGER, value: 1 },
        { key: 'val acc', step: 0, value: 1e-300 },
        { key: 'a_b-c.d/e:f', step: 0, value: -1.7976931348623157e308 },
      ]);
      assert.equal(edge.status, 200, JSON.stringify(edge.body));
      const long = await series(run.path, 'k'.repeat(250));
      assert.deepEqual(long.body.points[0].step, Number.MAX_SAFE_INTEGER);
      assert.equal((await series(run.path, 'a_b-c.d/e:f')).body.points[0].value, -1.7976931348623157e308);
      assert.equal((await series(run.path, 'val acc')).body.points[0].value, 1e-300);
    });

    it('refuses an empty batch and one over 1,000 points', async () => {
      const run = await runningRun(t, key, experimentId);
      const over = await log(
        run.path,
        points('a', 0, 1001, (s) => s),
      );
      assert.equal(over.status, 422);
      assert.equal(over.body.error.details[0].path, '/metrics');
      assert.equal((await log(run.path, [])).status, 422);
      assert.deepEqual(
        [
          (
            await log(
              run.path,
              points('a', 0, 1000, (s) => s),
            )
          ).status,
        ],
        [200],
      );
    });

    it('takes metrics only once the run started, and for the grace after it ended', async () => {
      const pending = await createRun(t, key, experimentId);
      const early = await log(pending.path, [{ key: 'a', step: 0, value: 1 }]);
      assert.deepEqual([early.status, early.body.error.code], [409, 'run_not_started']);
      const run = await runningRun(t, key, experimentId);
      assert.equal((await t.as(key).post(`${run.path}/succeed`)).status, 200);
      const late = await log(run.path, [{ key: 'a', step: 0, value: 1 }]);
      assert.deepEqual([late.status, late.body], [200, { stored: 1 }], 'within the default grace of 300 s');
    });

    it('lets a worker key log and read its own run only', async () => {
      const mine = await runningRun(t, key, experimentId);
      const other = await runningRun(t, key, experimentId);
      const minted = await t.as(key).post('/api-keys', {
        description: 'worker',
        kind: 'worker',
        scopes: ['runs:read', 'runs:write'],
        run: { experiment_id: experimentId, n: 1, r: (mine as { r: number }).r },
      });
      assert.equal(minted.status, 201, JSON.stringify(minted.body));
      const worker = minted.body.key as string;
      assert.equal((await log(mine.path, [{ key: 'a', step: 0, value: 1 }], worker)).status, 200);
      assert.equal((await t.as(worker).get(`${mine.path}/metrics/a`)).body.points.length, 1);
      const refused = await log(other.path, [{ key: 'a', step: 0, value: 1 }], worker);
      assert.equal(refused.status, 404, JSON.stringify(refused.body));
      assert.equal((await t.as(worker).get(`${other.path}/metrics`)).status, 404);
      assert.deepEqual((await t.as(key).get(`${other.path}/metrics`)).body.items, []);
      const experiment = await t.as(worker).get(`/experiments/${experimentId}/metrics?keys=a`);
      assert.equal(experiment.status, 403);
      assert.equal((await t.as(worker).get(`/experiments/${experimentId}/metrics/a`)).status, 403);
      assert.equal((await t.as(worker).get(`/experiments/${experimentId}/metric-keys`)).status, 403);
      const reader = await t.as(key).post('/api-keys', { description: 'no runs', scopes: ['assets:read'] });
      assert.equal((await t.as(reader.body.key).get(`${mine.path}/metrics`)).status, 403);
      assert.equal((await log(mine.path, [{ key: 'a', step: 1, value: 1 }], reader.body.key)).status, 403);
    });

    it("answers another tenant's runs and experiments as missing (404)", async () => {
      const run = await runningRun(t, key, experimentId);
      await log(run.path, [{ key: 'a', step: 0, value: 1 }]);
      const stranger = (await t.createUser()).key;
      for (const url of [
        `${run.path}/metrics`,
        `${run.path}/metrics/a`,
        `${run.path}/metrics/a?max_points=10`,
        `/experiments/${experimentId}/metrics?keys=a`,
        `/experiments/${experimentId}/metrics/a`,
        `/experiments/${experimentId}/metric-keys`,
      ]) {
        const res = await t.as(stranger).get(url);
        assert.equal(res.status, 404, `${url}: ${JSON.stringify(res.body)}`);
      }
      assert.equal((await log(run.path, [{ key: 'a', step: 1, value: 1 }], stranger)).status, 404);
      assert.equal((await series(run.path, 'a')).body.count, 1, 'nothing was stored');
    });

    it('pages a series by cursor and filters by step range; an unknown key is 404', async () => {
      const run = await runningRun(t, key, experimentId);
      await log(
        run.path,
        points('p', 0, 1000, (s) => s * 2),
      );
      await log(
        run.path,
        points('p', 1000, 1500, (s) => s * 2),
      );
      const seen: number[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const q: string = `?limit=400&min_step=100&max_step=1299${cursor ? `&cursor=${cursor}` : ''}`;
        const res = await series(run.path, 'p', q);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.equal(res.body.count, 1200);
        assert.equal(res.body.downsampled, false);
        seen.push(...res.body.points.map((p: any) => p.step));
        cursor = res.body.next_cursor;
        pages++;
      } while (cursor);
      assert.equal(pages, 3);
      assert.deepEqual(
        seen,
        Array.from({ length: 1200 }, (_, i) => i + 100),
      );
      const bad = await series(run.path, 'p', '?cursor=nonsense');
      assert.deepEqual([bad.status, bad.body.error.code], [400, 'invalid_cursor']);
      const none = await series(run.path, 'never');
      assert.deepEqual([none.status, none.body.error.code], [404, 'not_found']);
      assert.equal((await log(run.path, [{ key: 'train/loss', step: 0, value: 1 }])).status, 200);
      const slash = await t.as(key).get(`${run.path}/metrics/${encodeURIComponent('train/loss')}`);
      assert.deepEqual(
        [slash.status, slash.body.key, slash.body.count],
        [200, 'train/loss', 1],
        'an encoded slash stays in the key',
      );
    });

    // 3,000 points: the points themselves, or 16-step blocks for few buckets; 20,000: 16-step blocks; 60,000:
    // 256-step blocks (src/server/metrics/metric-repository.ts, blocksFor).
    for (const [label, length] of [
      ['short', 3000],
      ['mid-length (16-step block extremes)', 20_000],
      ['long (256-step block extremes)', 60_000],
    ] as const) {
      it(`downsamples a ${label} series to at most max_points, keeping each bucket's extremes`, async () => {
        const run = await runningRun(t, key, experimentId);
        const spikeUp = Math.floor(length * 0.37);
        const spikeDown = Math.floor(length * 0.81);
        const value = (s: number) =>
          s === spikeUp ? 1000 : s === spikeDown ? -1000 : Math.sin(s / 50) + (s % 7) / 100;
        const sends: Promise<unknown>[] = [];
        for (let from = 0; from < length; from += 1000)
          sends.push(log(run.path, points('s', from, Math.min(length, from + 1000), value)));
        for (const res of (await Promise.all(sends)) as { status: number }[]) assert.equal(res.status, 200);
        for (const maxPoints of [2, 101, 1000]) {
          const res = await series(run.path, 's', `?max_points=${maxPoints}`);
          assert.equal(res.status, 200, JSON.stringify(res.body));
          assert.equal(res.body.count, length);
          assert.equal(res.body.downsampled, true);
          assert.ok(res.body.points.length <= maxPoints, `${res.body.points.length} > ${maxPoints}`);
          assert.ok(res.body.points.length >= Math.min(maxPoints, 2) - 1, `${res.body.points.length}`);
          const steps = res.body.points.map((p: any) => p.step);
          assert.deepEqual(
            steps,
            [...steps].sort((a: number, b: number) => a - b),
            'in step order',
          );
          for (const p of res.body.points) assert.equal(p.value, value(p.step), `point ${p.step}`);
          assert.ok(steps.includes(spikeUp), `the upward spike survives max_points=${maxPoints}`);
          assert.ok(steps.includes(spikeDown), `the downward spike survives max_points=${maxPoints}`);
        }
        const ranged = await series(
          run.path,
          's',
          `?max_points=50&min_step=${spikeUp - 700}&max_step=${spikeUp + 700}`,
        );
        assert.equal(ranged.body.count, 1401);
        assert.ok(ranged.body.points.length <= 50);
        assert.ok(ranged.body.points.every((p: any) => p.step >= spikeUp - 700 && p.step <= spikeUp + 700));
        assert.ok(ranged.body.points.some((p: any) => p.step === spikeUp));
        const small = await series(run.path, 's', `?max_points=1000&max_step=99`);
        assert.deepEqual(
          [small.body.count, small.body.downsampled, small.body.points.length],
          [100, false, 100],
        );

        // Overwrites move the blocks' extremes: the upward spike flattened, a new one elsewhere.
        const moved = Math.floor(length * 0.55);
        const after = (s: number) => (s === moved ? 2000 : s === spikeUp ? 0 : value(s));
        const resent = await log(run.path, [
          ...points('s', spikeUp - 5, spikeUp + 5, after),
          ...points('s', moved - 5, moved + 5, after),
        ]);
        assert.equal(resent.status, 200, JSON.stringify(resent.body));
        for (const maxPoints of [101, 1000]) {
          const res = await series(run.path, 's', `?max_points=${maxPoints}`);
          assert.equal(res.body.count, length);
          for (const p of res.body.points)
            assert.equal(p.value, after(p.step), `point ${p.step} after the overwrite`);
          assert.ok(!res.body.points.some((p: any) => p.value === 1000), 'the flattened spike is gone');
          assert.ok(
            res.body.points.some((p: any) => p.step === moved),
            `the new spike shows at max_points=${maxPoints}`,
          );
          assert.ok(res.body.points.some((p: any) => p.step === spikeDown));
          // The compared curve takes its values from the blocks themselves, not from the points.
          const compared = await t
            .as(key)
            .get(`/experiments/${experimentId}/metrics/s?max_points=${maxPoints}`);
          assert.deepEqual(
            compared.body.items.find((i: any) => i.run_id === run.id).points,
            res.body.points.map((p: any) => ({ step: p.step, value: p.value })),
          );
        }
        const list = await t.as(key).get(`${run.path}/metrics`);
        assert.deepEqual(
          list.body.items.map((i: any) => [i.key, i.count, i.min, i.max]),
          [['s', length, -1000, 2000]],
        );

        // A series that turns NaN for good: its NaN stretch keeps points in the curve, as NaN.
        const nanFrom = Math.floor(length * 0.75);
        const nanValue = (s: number) => (s >= nanFrom ? 'NaN' : Math.cos(s / 40));
        const nanSends: Promise<{ status: number }>[] = [];
        for (let from = 0; from < length; from += 1000)
          nanSends.push(log(run.path, points('n', from, Math.min(length, from + 1000), nanValue)));
        for (const res of await Promise.all(nanSends)) assert.equal(res.status, 200);
        for (const maxPoints of [101, 1000]) {
          const res = await series(run.path, 'n', `?max_points=${maxPoints}`);
          const tail = res.body.points.filter((p: any) => p.step >= nanFrom);
          assert.ok(tail.length >= 2, `${tail.length} NaN points at ${maxPoints}`);
          assert.ok(tail.every((p: any) => p.value === 'NaN'));
          // At the latest, the first point of the last block or of the last bucket, whichever is wider.
          const reach = Math.max(256, length / Math.floor(maxPoints / 2));
          assert.ok(
            res.body.points.at(-1).step >= length - reach,
            `${res.body.points.at(-1).step}: up to the end`,
          );
          for (const p of res.body.points) assert.equal(p.value, nanValue(p.step));
        }
      });
    }

    it('compares runs of an experiment by their keys’ summaries', async () => {
      const e = await committedExperiment(t, key);
      const a = await runningRun(t, key, e.id);
      const b = await runningRun(t, key, e.id);
      await runningRun(t, key, e.id); // logs nothing: absent from the answer
      await log(a.path, [...points('loss', 0, 10, (s) => 10 - s), ...points('acc', 0, 10, (s) => s / 10)]);
      await log(b.path, [...points('loss', 0, 5, (s) => 20 - s), ...points('other', 0, 3, (s) => s)]);
      const res = await t.as(key).get(`/experiments/${e.id}/metrics?keys=loss,acc,loss`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.keys, ['loss', 'acc']);
      assert.deepEqual(
        res.body.items.map((i: any) => [i.r, i.state, i.run_id, i.metrics]),
        [
          [
            (a as { r: number }).r,
            'running',
            a.id,
            {
              acc: { last_step: 9, last: 0.9, min: 0, max: 0.9, count: 10 },
              loss: { last_step: 9, last: 1, min: 1, max: 10, count: 10 },
            },
          ],
          [
            (b as { r: number }).r,
            'running',
            b.id,
            { loss: { last_step: 4, last: 16, min: 16, max: 20, count: 5 } },
          ],
        ],
      );
      const tooMany = Array.from({ length: 51 }, (_, i) => `k${i}`).join(',');
      for (const q of [`keys=${tooMany}`, 'keys=a,bad%20key!', 'keys=a,,b', 'keys=']) {
        const bad = await t.as(key).get(`/experiments/${e.id}/metrics?${q}`);
        assert.equal(bad.status, 400, `${q}: ${JSON.stringify(bad.body)}`);
      }
      assert.equal((await t.as(key).get(`/experiments/${e.id}/metrics`)).status, 400);
    });

    it("answers one key's curves of every run in one read, paged by run, and lists the experiment's keys", async () => {
      const e = await committedExperiment(t, key);
      const a = await runningRun(t, key, e.id);
      const b = await runningRun(t, key, e.id);
      const c = await runningRun(t, key, e.id);
      await runningRun(t, key, e.id); // logs nothing: in no answer
      await log(
        a.path,
        points('loss', 0, 1000, (s) => (s === 500 ? 99 : 1 / (s + 1))),
      );
      await log(
        a.path,
        points('acc', 0, 3, (s) => s),
      );
      await log(b.path, [
        ...points('loss', 0, 3, (s) => 20 - s),
        { key: 'loss', step: 3, value: 'NaN' },
        { key: 'loss', step: 4, value: 'Infinity' },
      ]);
      await log(
        c.path,
        points('other/key', 0, 2, (s) => s),
      );
      const base = `/experiments/${e.id}/metrics/loss`;
      const all = await t.as(key).get(`${base}?max_points=100`);
      assert.equal(all.status, 200, JSON.stringify(all.body));
      assert.equal(all.body.key, 'loss');
      assert.deepEqual(
        all.body.items.map((i: any) => [i.run_id, i.state, i.count, i.downsampled, i.points.length]),
        [
          [a.id, 'running', 1000, true, all.body.items[0].points.length],
          [b.id, 'running', 5, false, 5],
        ],
      );
      assert.ok(all.body.items[0].points.length <= 100);
      assert.deepEqual(all.body.items[1].points, [
        { step: 0, value: 20 },
        { step: 1, value: 19 },
        { step: 2, value: 18 },
        { step: 3, value: 'NaN' },
        { step: 4, value: 'Infinity' },
      ]);
      // Each curve is the one run's own downsampled read, spike included.
      const own = await series(a.path, 'loss', '?max_points=100');
      assert.deepEqual(
        all.body.items[0].points,
        own.body.points.map((p: any) => ({ step: p.step, value: p.value })),
      );
      assert.ok(
        own.body.points.some((p: any) => p.value === 99),
        'the spike survives',
      );
      assert.equal(all.body.next_cursor, null);

      // A step range, and a page of one run at a time.
      const ranged = await t.as(key).get(`${base}?max_points=1000&min_step=2&max_step=3`);
      assert.deepEqual(
        ranged.body.items.map((i: any) => i.points.map((p: any) => p.step)),
        [
          [2, 3],
          [2, 3],
        ],
      );
      const first = await t.as(key).get(`${base}?limit=1`);
      assert.deepEqual([first.body.items.length, first.body.items[0].run_id], [1, a.id]);
      assert.equal(first.body.items[0].points.length, 1000, 'max_points defaults to 1,000');
      const second = await t.as(key).get(`${base}?limit=1&cursor=${first.body.next_cursor}`);
      assert.deepEqual(
        [second.body.items.map((i: any) => i.run_id), second.body.next_cursor],
        [[b.id], null],
      );
      assert.equal((await t.as(key).get(`/experiments/${e.id}/metrics/never`)).status, 404);
      for (const q of ['limit=101', 'max_points=1', 'cursor=nonsense', 'min_step=-1', 'color=red']) {
        const bad = await t.as(key).get(`${base}?${q}`);
        assert.equal(bad.status, 400, `${q}: ${JSON.stringify(bad.body)}`);
      }

      const keys = await t.as(key).get(`/experiments/${e.id}/metric-keys`);
      assert.equal(keys.status, 200, JSON.stringify(keys.body));
      assert.deepEqual(keys.body, {
        items: [
          { key: 'acc', runs: 1 },
          { key: 'loss', runs: 2 },
          { key: 'other/key', runs: 1 },
        ],
        next_cursor: null,
      });
      const page = await t.as(key).get(`/experiments/${e.id}/metric-keys?limit=2`);
      assert.deepEqual(
        page.body.items.map((k: any) => k.key),
        ['acc', 'loss'],
      );
      const rest = await t
        .as(key)
        .get(`/experiments/${e.id}/metric-keys?limit=2&cursor=${page.body.next_cursor}`);
      assert.deepEqual([rest.body.items, rest.body.next_cursor], [[{ key: 'other/key', runs: 1 }], null]);
      for (const cursor of ['bad', Buffer.from('v1t:a\u0000b').toString('base64url')]) {
        const bad = await t.as(key).get(`/experiments/${e.id}/metric-keys?cursor=${cursor}`);
        assert.equal(bad.status, 400, JSON.stringify(bad.body));
      }
    });
    it('reads an ended run’s compared curve once, until a late batch changes it; a running run’s on every read', async () => {
      const ended = await runningRun(t, key, experimentId);
      const running = await runningRun(t, key, experimentId);
      for (const run of [ended, running])
        for (let from = 0; from < 3000; from += 1000)
          assert.equal(
            (
              await log(
                run.path,
                points('cached', from, from + 1000, (s) => 1 / (s + 1)),
              )
            ).status,
            200,
          );
      assert.equal((await t.as(key).post(`${ended.path}/succeed`)).status, 200);
      const curves = async (maxPoints: number) => {
        const res = await t
          .as(key)
          .get(`/experiments/${experimentId}/metrics/cached?max_points=${maxPoints}`);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const byR = new Map(res.body.items.map((item: any) => [item.r, item]));
        return [byR.get(ended.r), byR.get(running.r)].map((item: any) => ({
          state: item.state,
          count: item.count,
          points: item.points,
        }));
      };
      const first = await curves(100);
      assert.deepEqual(
        first.map((c) => [c.state, c.count, c.points.length <= 100]),
        [
          ['succeeded', 3000, true],
          ['running', 3000, true],
        ],
      );
      // Every stored value moved behind the service's back (the blocks' extremes with them), its series rows
      // untouched (no API call stores a point without updating its series): the ended run's curve is the one
      // read before, the running run's is read again, and so is another size of the ended one.
      await t.service.db.query(`UPDATE metric_points SET value = value + 1 WHERE step < 3000`);
      for (const blocks of ['metric_blocks', 'metric_fine_blocks'])
        await t.service.db.query(`UPDATE ${blocks} SET min_value = min_value + 1, max_value = max_value + 1`);
      const moved = (c: { points: Array<{ step: number; value: number }> }) =>
        c.points.map((p) => ({ step: p.step, value: p.value + 1 }));
      const second = await curves(100);
      assert.deepEqual(second[0], first[0]);
      assert.deepEqual(second[1]!.points, moved(first[1]!));
      assert.equal((await curves(50))[0]!.points[0].value, first[0]!.points[0].value + 1);
      // A batch after the end, within the grace, makes a new version of the ended run's series: read again.
      assert.equal((await log(ended.path, [{ key: 'cached', step: 3000, value: 5 }])).status, 200);
      const third = await curves(100);
      assert.equal(third[0]!.count, 3001);
      assert.deepEqual(third[0]!.points[0], { step: 0, value: 2 });
      assert.deepEqual(third[0]!.points.at(-1), { step: 3000, value: 5 });
    });
  });

  describe(`compared curves with ASSAY_CURVE_CACHE_POINTS=0 on ${driver}`, () => {
    let t: TestService;
    before(async () => {
      t = await startTestService({ pglite: driver === 'pglite', env: { ASSAY_CURVE_CACHE_POINTS: '0' } });
    });
    after(() => t?.close());

    it('reads an ended run’s curve from the database on every look', async () => {
      const e = await committedExperiment(t, t.adminKey);
      const run = await runningRun(t, t.adminKey, e.id);
      const logged = await t
        .as(t.adminKey)
        .post(`${run.path}/metrics`, { metrics: points('loss', 0, 10, (s) => s) });
      assert.equal(logged.status, 200, JSON.stringify(logged.body));
      assert.equal((await t.as(t.adminKey).post(`${run.path}/succeed`)).status, 200);
      const curve = async () =>
        (await t.as(t.adminKey).get(`/experiments/${e.id}/metrics/loss`)).body.items[0].points.map(
          (p: { value: number }) => p.value,
        );
      assert.deepEqual(await curve(), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      await t.service.db.query(`UPDATE metric_points SET value = value + 1`);
      assert.deepEqual(await curve(), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    });
  });

  describe(`run metrics after the grace on ${driver}`, () => {
    let t: TestService;
    before(async () => {
      t = await startTestService({ pglite: driver === 'pglite', env: { ASSAY_METRICS_GRACE_S: '0.001' } });
    });
    after(() => t?.close());

    it('refuses points once the grace after the end has passed (409 run_ended)', async () => {
      const e = await committedExperiment(t, t.adminKey);
      const run = await runningRun(t, t.adminKey, e.id);
      assert.equal(
        (await t.as(t.adminKey).post(`${run.path}/metrics`, { metrics: [{ key: 'a', step: 0, value: 1 }] }))
          .status,
        200,
      );
      assert.equal((await t.as(t.adminKey).post(`${run.path}/fail`, { reason: 'crash' })).status, 200);
      await sleep(20);
      const res = await t
        .as(t.adminKey)
        .post(`${run.path}/metrics`, { metrics: [{ key: 'a', step: 1, value: 1 }] });
      assert.deepEqual([res.status, res.body.error.code], [409, 'run_ended']);
      assert.equal((await t.as(t.adminKey).get(`${run.path}/metrics/a`)).body.count, 1);
    });
  });
}
