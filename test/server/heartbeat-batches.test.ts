// Heartbeats that arrive together share one statement (src/server/runs/run-service.ts `heartbeats`); each
// request must still get its own run's answer and the refusals a lone heartbeat gets. Run on both drivers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addVariation, committedExperiment, createExperiment, runningRun } from '../support/fixtures.ts';
import { startTestService, type Reply, type TestService } from '../support/service.ts';

const TIMEOUT_S = 1;

for (const driver of ['postgres', 'pglite'] as const) {
  describe(`coalesced heartbeats (${driver})`, () => {
    let t: TestService;
    let key: string;
    before(async () => {
      t = await startTestService({
        pglite: driver === 'pglite',
        env: { ASSAY_WATCHDOG_TIMEOUT_S: String(TIMEOUT_S) },
      });
      // The short timeout is for the race below, which sweeps by hand; no pass may fail runs while tests
      // set up.
      await t.service.watchdog.stop();
      key = (await t.createUser()).key;
    });
    after(() => t.close());

    const running = async (count: number, experimentId: string) => {
      const runs = [];
      for (let i = 0; i < count; i++) runs.push(await runningRun(t, key, experimentId));
      return runs;
    };
    const beat = (path: string, as = key) => t.as(as).post(`${path}/heartbeat`);

    it("answers each of many concurrent heartbeats with its own run's state and cancel flag", async () => {
      const e = await committedExperiment(t, key);
      const runs = await running(30, e.id);
      const cancelled = new Set(runs.filter((_, i) => i % 3 === 0).map((r) => r.id));
      for (const run of runs)
        if (cancelled.has(run.id)) assert.equal((await t.as(key).post(`${run.path}/cancel`)).status, 200);
      const answers = await Promise.all(runs.map((run) => beat(run.path)));
      for (const [i, answer] of answers.entries()) {
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        assert.equal(answer.body.state, 'running');
        assert.equal(answer.body.cancel_requested, cancelled.has(runs[i]!.id), `run ${runs[i]!.r}`);
        assert.equal(answer.body.cancel_reason, cancelled.has(runs[i]!.id) ? 'cancelled' : null);
        const stored = (await t.as(key).get(runs[i]!.path)).body;
        assert.equal(
          answer.body.last_heartbeat_at,
          stored.last_heartbeat_at,
          'the answer is what was stored',
        );
      }
    });

    it('refuses, inside a batch of good ones, a heartbeat for an ended run (409), a missing run (404) and runs of others (404)', async () => {
      const e = await committedExperiment(t, key);
      const runs = await running(12, e.id);
      const [succeeded, failed, ...alive] = runs;
      assert.equal((await t.as(key).post(`${succeeded!.path}/succeed`)).status, 200);
      assert.equal((await t.as(key).post(`${failed!.path}/fail`, { reason: 'crash' })).status, 200);
      const stranger = (await t.createUser()).key;
      // A worker key for one run of this experiment, beating another run of it.
      const minted = await t.as(key).post('/api-keys', {
        description: 'worker',
        kind: 'worker',
        scopes: ['runs:read', 'runs:write'],
        run: { experiment_id: e.id, n: 1, r: alive[0]!.r },
      });
      assert.equal(minted.status, 201, JSON.stringify(minted.body));
      const worker = minted.body.key as string;
      const asks: [string, Promise<Reply>][] = [
        ...alive.map((r) => ['ok', beat(r.path)] as [string, Promise<Reply>]),
        ['ended', beat(succeeded!.path)],
        ['ended', beat(failed!.path)],
        ['missing', beat(`/experiments/${e.id}/variations/1/runs/9999`)],
        ['stranger', beat(alive[1]!.path, stranger)],
        ['worker-other', beat(alive[2]!.path, worker)],
        ['worker-own', beat(alive[0]!.path, worker)],
      ];
      const answers = await Promise.all(asks.map(([, p]) => p));
      asks.forEach(([kind], i) => {
        const a = answers[i]!;
        const body = JSON.stringify(a.body);
        if (kind === 'ok' || kind === 'worker-own') {
          assert.equal(a.status, 200, `${kind}: ${body}`);
          assert.equal(a.body.state, 'running');
        } else if (kind === 'ended') {
          assert.equal(a.status, 409, body);
          assert.equal(a.body.error.code, 'invalid_state_transition');
          assert.ok(['succeeded', 'failed'].includes(a.body.error.details.state), body);
        } else {
          assert.equal(a.status, 404, `${kind}: ${body}`);
        }
      });
      // The refused ones changed nothing.
      assert.equal((await t.as(key).get(succeeded!.path)).body.state, 'succeeded');
      assert.equal((await t.as(key).get(failed!.path)).body.failure_reason, 'crash');
    });

    it('answers every heartbeat when the same run beats several times in one window', async () => {
      const e = await committedExperiment(t, key);
      const [twice, other] = await running(2, e.id);
      assert.equal((await t.as(key).post(`${other!.path}/cancel`)).status, 200);
      const answers = await Promise.all([
        beat(twice!.path),
        beat(other!.path),
        beat(twice!.path),
        beat(twice!.path),
        beat(other!.path),
      ]);
      assert.deepEqual(
        answers.map((a) => [a.status, a.body.state, a.body.cancel_requested]),
        [
          [200, 'running', false],
          [200, 'running', true],
          [200, 'running', false],
          [200, 'running', false],
          [200, 'running', true],
        ],
      );
      const stored = (await t.as(key).get(twice!.path)).body.last_heartbeat_at;
      assert.ok(answers.some((a, i) => i !== 1 && i !== 4 && a.body.last_heartbeat_at === stored));
    });

    it('never lets the watchdog fail a run after a heartbeat it acknowledged', async () => {
      // Runs beat at gaps around the timeout while the watchdog sweeps all the time, so batches and sweeps
      // race. Whatever the machine's pace, a run failed for silence must have been silent, after its last
      // acknowledged beat, for the whole timeout; and no beat may be acknowledged once it failed.
      const e = await committedExperiment(t, key);
      const runs = await running(16, e.id);
      const acked = new Map<string, string[]>(runs.map((r) => [r.id, []]));
      for (const a of await Promise.all(runs.map((run) => beat(run.path)))) assert.equal(a.status, 200);
      // Each run's beat before the race is acknowledged: the stored time counts as its first.
      for (const run of runs) acked.get(run.id)!.push((await t.as(key).get(run.path)).body.last_heartbeat_at);
      const refused = new Map<string, number>();
      const stopAt = Date.now() + 4_000;
      const sweeps = (async () => {
        while (Date.now() < stopAt) await t.service.watchdog.sweep();
      })();
      await Promise.all(
        runs.map(async (run, i) => {
          let gap = 200 + ((i * 97) % 11) * 100; // 0.2 to 1.2 s, some past the timeout
          while (Date.now() < stopAt) {
            const a = await beat(run.path);
            if (a.status === 200) {
              acked.get(run.id)!.push(a.body.last_heartbeat_at);
            } else {
              assert.equal(a.status, 409, JSON.stringify(a.body));
              assert.equal(a.body.error.details.failure_reason, 'heartbeat_timeout');
              refused.set(run.id, (refused.get(run.id) ?? 0) + 1);
              return;
            }
            await new Promise((r) => setTimeout(r, gap));
            gap = gap >= 1200 ? 200 : gap + 300;
          }
        }),
      );
      await sweeps;
      for (const run of runs) {
        const stored = (await t.as(key).get(run.path)).body;
        const last = acked.get(run.id)!.at(-1)!;
        assert.equal(stored.last_heartbeat_at, last, 'the stored beat is the last acknowledged one');
        if (stored.state === 'failed') {
          assert.equal(stored.failure_reason, 'heartbeat_timeout');
          const silentMs = Date.parse(stored.ended_at) - Date.parse(last);
          assert.ok(silentMs >= TIMEOUT_S * 1000, `failed ${silentMs} ms after an acknowledged beat`);
        } else {
          assert.equal(stored.state, 'running');
          assert.ok(!refused.has(run.id));
        }
      }
    });

    it('numbers concurrent run creations of two variations 1..n each, and keeps their refusals', async () => {
      const e = await createExperiment(t, key);
      await addVariation(t, key, e.id);
      await addVariation(t, key, e.id, 'lr: 0.2\n');
      const draft = await t.as(key).post(`/experiments/${e.id}/variations/1/runs`);
      assert.deepEqual([draft.status, draft.body.error.code], [409, 'experiment_not_runnable']);
      assert.equal((await t.as(key).post(`/experiments/${e.id}/commit`)).status, 200);
      const created = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          t.as(key).post(`/experiments/${e.id}/variations/${1 + (i % 2)}/runs`),
        ),
      );
      for (const n of [1, 2]) {
        const mine = created.filter((c) => c.body.n === n);
        assert.ok(mine.every((c) => c.status === 201 && c.body.state === 'pending'));
        assert.deepEqual(
          mine.map((c) => c.body.r).sort((a, b) => a - b),
          Array.from({ length: 20 }, (_, i) => i + 1),
        );
      }
      assert.equal((await t.as(key).post(`/experiments/${e.id}/variations/3/runs`)).status, 404);
      const stranger = (await t.createUser()).key;
      assert.equal((await t.as(stranger).post(`/experiments/${e.id}/variations/1/runs`)).status, 404);
    });
  });
}
