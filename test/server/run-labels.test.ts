// Run names, tags, notes and archiving (POST and PATCH …/runs, the list filters, the experiment-wide list,
// comparisons without archived runs), and resume-from: a run's checkpoint comes from its own chain only. On
// the embedded PGlite and on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import {
  addVariation,
  committedExperiment,
  createExperiment,
  createRun,
  runningRun,
} from '../support/fixtures.ts';
import { startTestService, type Reply, type TestService } from '../support/service.ts';

type RunBody = Record<string, unknown>;

for (const backend of ['PGlite', 'PostgreSQL'] as const) {
  describe(`run labels and resume-from (${backend})`, () => {
    let t: TestService;
    let key: string;
    let other: string;
    let orchestratorKey: string;

    const runsOf = (e: string, n = 1) => `/experiments/${e}/variations/${n}/runs`;
    /** A new run of variation `n` with a body; asserts 201. */
    async function labelledRun(e: string, body: RunBody, n = 1) {
      const res = await t.as(key).post(runsOf(e, n), body);
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return { ...res.body, path: `${runsOf(e, n)}/${res.body.r}` };
    }
    /** A ready checkpoint of a run, inline (ready at once). */
    async function checkpoint(e: string, r: number, name: string, n = 1) {
      const res = await t.as(key).post('/assets', {
        kind: 'checkpoint',
        name,
        run: { experiment_id: e, n, r },
        content: name,
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.id as string;
    }
    const checkpointOf = async (path: string) => {
      const res = await t.as(key).get(`${path}/checkpoint`);
      return res.status === 200 ? (res.body.asset.name as string) : res.status;
    };

    before(async () => {
      orchestratorKey = generateOrchestratorKey();
      t = await startTestService({
        pglite: backend === 'PGlite',
        orchestrator: new FakeOrchestrator(),
        env: { ASSAY_ORCHESTRATOR_KEY: orchestratorKey },
      });
      key = (await t.createUser()).key;
      other = (await t.createUser()).key;
    });
    after(() => t?.close());

    it('creates a run with a name, tags and notes; PATCH renames, clears the name, replaces tags, keeps the rest', async () => {
      const e = await committedExperiment(t, key);
      const plain = await createRun(t, key, e.id);
      const bare = (await t.as(key).get(plain.path)).body;
      assert.deepEqual(
        [bare.name, bare.tags, bare.notes, bare.archived_at, bare.resumes_from_run_id],
        [null, [], '', null, null],
      );
      const run = await labelledRun(e.id, {
        name: 'warmup 500',
        tags: ['baseline', 'lr-3e-4'],
        notes: '# why\nwarmup *matters*',
      });
      assert.deepEqual(
        [run.name, run.tags, run.notes, run.state],
        ['warmup 500', ['baseline', 'lr-3e-4'], '# why\nwarmup *matters*', 'pending'],
      );
      const renamed = await t.as(key).patch(run.path, { name: 'warmup 1000', tags: ['ablation'] });
      assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
      assert.deepEqual(
        [renamed.body.name, renamed.body.tags, renamed.body.notes],
        ['warmup 1000', ['ablation'], '# why\nwarmup *matters*'],
      );
      const cleared = await t.as(key).patch(run.path, { name: null, notes: '' });
      assert.deepEqual([cleared.body.name, cleared.body.tags, cleared.body.notes], [null, ['ablation'], '']);
      assert.deepEqual((await t.as(key).get(run.path)).body.tags, ['ablation'], 'a read sees the change');
    });

    // A body that breaks the schema is 422 validation_failed, a bad query parameter 400 (the service's rule).
    it('refuses bad labels: a tag too long, 33 tags, a comma, a duplicate, an empty name, an empty PATCH', async () => {
      const e = await committedExperiment(t, key);
      const run = await createRun(t, key, e.id);
      const tooMany = Array.from({ length: 33 }, (_, i) => `t${i}`);
      const bad: RunBody[] = [
        { tags: ['x'.repeat(65)] },
        { tags: tooMany },
        { tags: ['a,b'] },
        { tags: ['same', 'same'] },
        { tags: [''] },
        { tags: [' padded'] },
        { name: '' },
        { notes: 'x'.repeat(20_001) },
      ];
      const refused = (res: { status: number; body: any }) => [res.status, res.body.error?.code];
      for (const body of bad) {
        const what = JSON.stringify(body).slice(0, 80);
        const created = await t.as(key).post(runsOf(e.id), body);
        assert.deepEqual(refused(created), [422, 'validation_failed'], `POST ${what}`);
        // The schema's types are coerced: in a PATCH, where a name may be null, "" is taken as null.
        if (body.name === '') continue;
        const patched = await t.as(key).patch(run.path, body);
        assert.deepEqual(refused(patched), [422, 'validation_failed'], `PATCH ${what}`);
      }
      assert.deepEqual(refused(await t.as(key).patch(run.path, {})), [422, 'validation_failed']);
      assert.deepEqual(refused(await t.as(key).patch(run.path, { state: 'succeeded' })), [
        422,
        'validation_failed',
      ]);
      const ok = await t.as(key).post(runsOf(e.id), { tags: Array.from({ length: 32 }, (_, i) => `t${i}`) });
      assert.equal(ok.status, 201, '32 tags are the most');
      for (const tag of ['x'.repeat(65), 'a,,b', ',']) {
        const res = await t.as(key).get(`${runsOf(e.id)}?tag=${encodeURIComponent(tag)}`);
        assert.deepEqual([res.status, res.body.error?.code], [400, 'invalid_parameter'], tag);
      }
      // Nothing refused was stored.
      assert.deepEqual((await t.as(key).get(run.path)).body.tags, []);
      assert.equal((await t.as(key).patch(run.path, { name: 'named' })).body.name, 'named');
      assert.equal((await t.as(key).patch(run.path, { name: '' })).body.name, null, '"" clears the name');
    });

    it('PATCH: a worker key is refused 403 worker_key_restricted, a key without runs:write 403, another user gets 404, an unknown run 404', async () => {
      const e = await committedExperiment(t, key);
      const run = await createRun(t, key, e.id);
      const minted = await t.as(key).post('/api-keys', {
        description: 'worker',
        kind: 'worker',
        scopes: ['runs:read', 'runs:write'],
        run: { experiment_id: e.id, n: 1, r: run.r },
      });
      assert.equal(minted.status, 201, JSON.stringify(minted.body));
      const byWorker = await t.as(minted.body.key).patch(run.path, { name: 'mine' });
      assert.deepEqual([byWorker.status, byWorker.body.error.code], [403, 'worker_key_restricted']);
      const created = await t.as(minted.body.key).post(runsOf(e.id), { name: 'x' });
      assert.deepEqual([created.status, created.body.error.code], [403, 'worker_key_restricted']);
      // A person's key without runs:write may read the run, not relabel or archive it.
      const reader = await t.as(key).post('/api-keys', {
        description: 'read only',
        scopes: ['experiments:read', 'runs:read'],
      });
      assert.equal(reader.status, 201, JSON.stringify(reader.body));
      assert.equal((await t.as(reader.body.key).get(run.path)).status, 200);
      for (const change of [{ name: 'read-only' }, { archived: true }]) {
        const byReader = await t.as(reader.body.key).patch(run.path, change);
        assert.deepEqual([byReader.status, byReader.body.error.code], [403, 'insufficient_scope']);
      }
      const byOther = await t.as(other).patch(run.path, { name: 'theirs' });
      assert.deepEqual([byOther.status, byOther.body.error.code], [404, 'not_found']);
      assert.equal((await t.as(key).patch(`${runsOf(e.id)}/99`, { name: 'x' })).status, 404);
      const after = (await t.as(key).get(run.path)).body;
      assert.deepEqual([after.name, after.archived_at], [null, null], 'no refused change was stored');
    });

    it("filters a variation's runs by state and by tag (every tag), and leaves archived runs out unless asked", async () => {
      const e = await committedExperiment(t, key);
      const a = await labelledRun(e.id, { tags: ['base', 'seed-1'] });
      const b = await labelledRun(e.id, { tags: ['base', 'seed-2'] });
      const c = await labelledRun(e.id, { tags: ['other'] });
      assert.equal((await t.as(key).get(`${a.path}/config`)).status, 200);
      assert.equal((await t.as(key).post(`${a.path}/start`, { environment: {} })).status, 200);
      const rs = async (q: string) => {
        const res = await t.as(key).get(`${runsOf(e.id)}${q}`);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        return res.body.items.map((x: { r: number }) => x.r);
      };
      assert.deepEqual(await rs(''), [a.r, b.r, c.r]);
      assert.deepEqual(await rs('?tag=base'), [a.r, b.r]);
      assert.deepEqual(await rs('?tag=base,seed-2'), [b.r], 'every tag must match');
      assert.deepEqual(await rs('?tag=seed-2,other'), []);
      assert.deepEqual(await rs('?state=running'), [a.r]);
      assert.deepEqual(await rs('?state=pending&tag=base'), [b.r]);

      const archived = await t.as(key).patch(b.path, { archived: true });
      assert.equal(archived.status, 200, JSON.stringify(archived.body));
      assert.ok(archived.body.archived_at, 'archived_at is set');
      const again = await t.as(key).patch(b.path, { archived: true });
      assert.equal(again.body.archived_at, archived.body.archived_at, 'archiving again keeps the first time');
      assert.deepEqual(await rs(''), [a.r, c.r], 'archived runs are left out');
      assert.deepEqual(await rs('?archived=false'), [a.r, c.r]);
      assert.deepEqual(await rs('?archived=true'), [a.r, b.r, c.r]);
      assert.deepEqual(await rs('?archived=true&tag=seed-2'), [b.r]);
      assert.equal((await t.as(key).get(b.path)).status, 200, 'an archived run is still read by its address');
      const back = await t.as(key).patch(b.path, { archived: false });
      assert.equal(back.body.archived_at, null);
      assert.deepEqual(await rs(''), [a.r, b.r, c.r]);
    });

    it('lists the runs of every variation of an experiment newest first, page by page, with the same filters', async () => {
      const draft = await createExperiment(t, key);
      await addVariation(t, key, draft.id, 'lr: 0.1\n');
      await addVariation(t, key, draft.id, 'lr: 0.2\n');
      assert.equal((await t.as(key).post(`/experiments/${draft.id}/commit`)).status, 200);
      const made: { n: number; r: number }[] = [];
      for (const [n, tags] of [
        [1, ['keep']],
        [2, ['keep']],
        [1, []],
        [2, ['keep', 'x']],
        [1, ['keep']],
      ] as const) {
        const run = await labelledRun(draft.id, { tags: [...tags] }, n);
        made.push({ n: run.n, r: run.r });
      }
      const all = async (q: string) => {
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const url = `/experiments/${draft.id}/runs?limit=2${q}${cursor ? `&cursor=${cursor}` : ''}`;
          const res: Reply = await t.as(key).get(url);
          assert.equal(res.status, 200, JSON.stringify(res.body));
          assert.ok(res.body.items.length <= 2);
          seen.push(...res.body.items.map((x: { n: number; r: number }) => `${x.n}.${x.r}`));
          cursor = res.body.next_cursor;
        } while (cursor);
        return seen;
      };
      const newestFirst = made.map((m) => `${m.n}.${m.r}`).reverse();
      assert.deepEqual(await all(''), newestFirst);
      assert.deepEqual(
        await all('&tag=keep'),
        newestFirst.filter((x) => x !== `${made[2]!.n}.${made[2]!.r}`),
      );
      assert.deepEqual(await all('&tag=keep,x'), [`${made[3]!.n}.${made[3]!.r}`]);
      const first = `${runsOf(draft.id, made[0]!.n)}/${made[0]!.r}`;
      assert.equal((await t.as(key).patch(first, { archived: true })).status, 200);
      assert.deepEqual(await all(''), newestFirst.slice(0, -1));
      assert.deepEqual(await all('&archived=true'), newestFirst);
      assert.deepEqual(await all('&state=running'), []);
      const one = await t.as(key).get(`/experiments/${draft.id}/runs?limit=200`);
      assert.equal(one.body.next_cursor, null);

      assert.equal((await t.as(other).get(`/experiments/${draft.id}/runs`)).status, 404);
      const bad = await t.as(key).get(`/experiments/${draft.id}/runs?cursor=nonsense`);
      assert.deepEqual([bad.status, bad.body.error.code], [400, 'invalid_cursor']);
      assert.equal((await t.as(key).get(`/experiments/${draft.id}/runs?limit=0`)).status, 400);
    });

    it('leaves archived runs out of the experiment metric comparisons unless archived=true; run counts keep them', async () => {
      const e = await committedExperiment(t, key);
      const kept = await runningRun(t, key, e.id);
      const hidden = await runningRun(t, key, e.id);
      for (const [run, value] of [
        [kept, 1],
        [hidden, 2],
      ] as const) {
        const res = await t.as(key).post(`${run.path}/metrics`, {
          metrics: [{ key: 'loss', step: 1, value }],
        });
        assert.equal(res.status, 200, JSON.stringify(res.body));
      }
      assert.equal((await t.as(key).patch(hidden.path, { archived: true })).status, 200);
      const rs = (body: { items: { r: number }[] }) => body.items.map((x) => x.r);
      const get = async (url: string) => {
        const res = await t.as(key).get(url);
        assert.equal(res.status, 200, `${url}: ${JSON.stringify(res.body)}`);
        return res.body;
      };
      assert.deepEqual(rs(await get(`/experiments/${e.id}/metrics?keys=loss`)), [kept.r]);
      assert.deepEqual(rs(await get(`/experiments/${e.id}/metrics?keys=loss&archived=true`)), [
        kept.r,
        hidden.r,
      ]);
      assert.deepEqual(rs(await get(`/experiments/${e.id}/metrics/loss`)), [kept.r]);
      assert.deepEqual(rs(await get(`/experiments/${e.id}/metrics/loss?archived=true`)), [kept.r, hidden.r]);
      assert.deepEqual((await get(`/experiments/${e.id}/metric-keys`)).items, [{ key: 'loss', runs: 1 }]);
      assert.deepEqual((await get(`/experiments/${e.id}/metric-keys?archived=true`)).items, [
        { key: 'loss', runs: 2 },
      ]);
      assert.equal((await get(`/experiments/${e.id}`)).run_counts.running, 2, 'counts keep archived runs');
    });

    it('resume-from: a new run of a variation starts from scratch (404); resume_from gets that run’s checkpoint', async () => {
      const e = await committedExperiment(t, key);
      const first = await createRun(t, key, e.id);
      await checkpoint(e.id, first.r, 'step-100');
      await checkpoint(e.id, first.r, 'step-200');
      assert.equal(await checkpointOf(first.path), 'step-200', 'a run reads its own newest checkpoint');

      const fresh = await createRun(t, key, e.id);
      assert.equal(await checkpointOf(fresh.path), 404, 'another run of the variation is not its chain');

      const resumed = await labelledRun(e.id, { resume_from: { r: first.r } });
      assert.equal(resumed.resumes_from_run_id, first.id);
      assert.equal(await checkpointOf(resumed.path), 'step-200');
      // Its own checkpoint is newer than the one it resumed from; the chain goes on through it.
      await checkpoint(e.id, resumed.r, 'step-300');
      assert.equal(await checkpointOf(resumed.path), 'step-300');
      const further = await labelledRun(e.id, { resume_from: { n: 1, r: resumed.r } });
      assert.equal(await checkpointOf(further.path), 'step-300');
      assert.equal(await checkpointOf(fresh.path), 404);

      // Across variations of the experiment: n names the variation of the run resumed from.
      const two = await createExperiment(t, key);
      await addVariation(t, key, two.id, 'lr: 0.1\n');
      await addVariation(t, key, two.id, 'lr: 0.2\n');
      assert.equal((await t.as(key).post(`/experiments/${two.id}/commit`)).status, 200);
      const source = await createRun(t, key, two.id, 1);
      await checkpoint(two.id, source.r, 'v1-step-10', 1);
      const cross = await labelledRun(two.id, { resume_from: { n: 1, r: source.r } }, 2);
      assert.equal(await checkpointOf(cross.path), 'v1-step-10');

      // A run that is not there, or not the caller's, or of another experiment: 422, and nothing created.
      for (const [experiment, body, as] of [
        [e.id, { resume_from: { r: 99 } }, key],
        [e.id, { resume_from: { n: 2, r: 1 } }, key],
        [two.id, { resume_from: { n: 1, r: first.r + 50 } }, key],
      ] as const) {
        const res = await t.as(as).post(runsOf(experiment), body);
        assert.deepEqual(
          [res.status, res.body.error.code],
          [422, 'resume_from_not_found'],
          JSON.stringify(body),
        );
      }
      const foreign = await t.as(other).post(runsOf(e.id), { resume_from: { r: first.r } });
      assert.equal(foreign.status, 404, "another user's experiment is not found, whatever the body");
      const runs = (await t.as(key).get(runsOf(e.id))).body.items;
      assert.equal(runs.length, 4, 'refused creations used no run number');
    });

    it('a recovery run resumes from the run it recovers, through a chain of recoveries, under its name and tags', async () => {
      const e = await committedExperiment(t, key);
      const orch = t.as(orchestratorKey);
      /** Provisions a pending run; its orchestrator URL. */
      const managed = async () => {
        const run = await createRun(t, key, e.id);
        const res = await t.as(key).post(`${run.path}/provision`);
        assert.equal(res.status, 202, JSON.stringify(res.body));
        return run;
      };
      const lost = await managed();
      assert.equal((await t.as(key).patch(lost.path, { name: 'long job', tags: ['gpu'] })).status, 200);
      await checkpoint(e.id, lost.r, 'before-the-loss');
      assert.equal((await orch.post(`/orchestrator/runs/${lost.id}/fail`, { reason: 'crash' })).status, 200);
      const recovery = await orch.post(`/orchestrator/runs/${lost.id}/recovery`);
      assert.equal(recovery.status, 201, JSON.stringify(recovery.body));
      const recoveryPath = `${runsOf(e.id)}/${recovery.body.r}`;
      assert.deepEqual(
        [recovery.body.name, recovery.body.tags, recovery.body.notes],
        ['long job', ['gpu'], ''],
        'a recovery carries the name and tags of the run it recovers',
      );
      assert.equal(await checkpointOf(recoveryPath), 'before-the-loss');

      // The recovery is lost too before it wrote a checkpoint: its own recovery still finds the first one.
      assert.equal(
        (await orch.post(`/orchestrator/runs/${recovery.body.id}/fail`, { reason: 'crash' })).status,
        200,
      );
      const second = await orch.post(`/orchestrator/runs/${recovery.body.id}/recovery`);
      assert.equal(second.status, 201, JSON.stringify(second.body));
      assert.equal(await checkpointOf(`${runsOf(e.id)}/${second.body.r}`), 'before-the-loss');
      assert.equal(second.body.name, 'long job', 'and so does a recovery of a recovery');

      // A deliberate new run of the variation is not a recovery: from scratch.
      const fresh = await managed();
      assert.equal(await checkpointOf(fresh.path), 404);
    });

    it("a sweep's retry of a failed trial resumes from the run it retries", async () => {
      const draft = await createExperiment(t, key, { name: 'retried sweep' });
      const created = await t
        .as(key)
        .post(`/experiments/${draft.id}/sweeps`, { base_yaml: 'lr: 0.1\n', grid: { lr: [0.1] } });
      assert.equal(created.status, 202, JSON.stringify(created.body));
      const [trial] = created.body.runs as { id: string; n: number; r: number }[];
      assert.ok(trial, JSON.stringify(created.body));
      await checkpoint(draft.id, trial.r, 'trial-step-50', trial.n);
      const orch = t.as(orchestratorKey);
      assert.equal((await orch.post(`/orchestrator/runs/${trial.id}/fail`, { reason: 'crash' })).status, 200);
      const retry = await orch.post(`/orchestrator/runs/${trial.id}/retry`);
      assert.equal(retry.status, 201, JSON.stringify(retry.body));
      assert.equal(retry.body.retries_run_id, trial.id);
      assert.equal(await checkpointOf(`${runsOf(draft.id, trial.n)}/${retry.body.r}`), 'trial-step-50');
    });
  });
}
