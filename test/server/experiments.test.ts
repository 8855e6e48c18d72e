import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  addVariation,
  committedExperiment,
  createExperiment,
  createRun,
  runningRun,
} from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

describe('experiments', () => {
  let t: TestService;
  let key: string;
  before(async () => {
    t = await startTestService();
    key = (await t.createUser()).key;
  });
  after(() => t.close());

  it('creates a draft with its fields and answers it in the detail form', async () => {
    const created = await t
      .as(key)
      .post('/experiments', { name: 'warmup', description: 'd', hypothesis: 'h' });
    assert.equal(created.status, 201);
    assert.equal(created.body.state, 'draft');
    assert.equal(created.body.committed_at, null);
    assert.equal(typeof created.body.created_at, 'string');
    const detail = await t.as(key).get(`/experiments/${created.body.id}`);
    assert.equal(detail.status, 200);
    assert.equal(detail.body.hypothesis, 'h');
    assert.deepEqual(detail.body.variations, []);
    assert.deepEqual(detail.body.run_counts, { pending: 0, running: 0, succeeded: 0, failed: 0 });
  });

  it('edits a draft, and refuses edits once committed (409)', async () => {
    const e = await createExperiment(t, key);
    const edited = await t.as(key).patch(`/experiments/${e.id}`, { name: 'renamed' });
    assert.equal(edited.status, 200);
    assert.equal(edited.body.name, 'renamed');
    await addVariation(t, key, e.id);
    assert.equal((await t.as(key).post(`/experiments/${e.id}/commit`)).status, 200);
    const refused = await t.as(key).patch(`/experiments/${e.id}`, { name: 'again' });
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'experiment_not_draft');
  });

  it('follows the state machine: every allowed move succeeds and every other move answers 409', async () => {
    const moves = ['commit', 'conclude', 'retract'] as const;
    const allowed: Record<string, readonly string[]> = {
      draft: ['commit'],
      committed: ['conclude', 'retract'],
      concluded: ['retract'],
      retracted: [],
    };
    // Reach each state, then try every move from it.
    const reach = async (state: string) => {
      const e = await createExperiment(t, key);
      await addVariation(t, key, e.id);
      const path = {
        draft: [],
        committed: ['commit'],
        concluded: ['commit', 'conclude'],
        retracted: ['commit', 'retract'],
      }[state]!;
      for (const m of path)
        assert.equal(
          (
            await t
              .as(key)
              .post(`/experiments/${e.id}/${m}`, m === 'retract' ? { reason: 'bad data' } : undefined)
          ).status,
          200,
        );
      return e.id;
    };
    for (const state of Object.keys(allowed)) {
      for (const move of moves) {
        const id = await reach(state);
        const res = await t
          .as(key)
          .post(`/experiments/${id}/${move}`, move === 'retract' ? { reason: 'r' } : undefined);
        if (allowed[state]!.includes(move)) {
          assert.equal(res.status, 200, `${move} from ${state}`);
          assert.notEqual(
            res.body[
              `${move === 'commit' ? 'committed' : move === 'conclude' ? 'concluded' : 'retracted'}_at`
            ],
            null,
          );
        } else {
          assert.equal(res.status, 409, `${move} from ${state} should be refused`);
          assert.equal(res.body.error.code, 'invalid_state_transition');
          assert.equal(res.body.error.details.state, state);
        }
      }
    }
  });

  it('needs a reason to retract (422) and keeps it', async () => {
    const e = await createExperiment(t, key);
    await addVariation(t, key, e.id);
    await t.as(key).post(`/experiments/${e.id}/commit`);
    assert.equal((await t.as(key).post(`/experiments/${e.id}/retract`, {})).status, 422);
    const retracted = await t.as(key).post(`/experiments/${e.id}/retract`, { reason: 'leaked test set' });
    assert.equal(retracted.body.retraction_reason, 'leaked test set');
    assert.equal(retracted.body.state, 'retracted');
  });

  it('refuses to commit an experiment without variations (409 no_variations)', async () => {
    const e = await createExperiment(t, key);
    const res = await t.as(key).post(`/experiments/${e.id}/commit`);
    assert.equal(res.status, 409);
    assert.equal(res.body.error.code, 'no_variations');
  });

  it('lists newest first with filters and cursor pagination that neither skips nor repeats', async () => {
    const other = (await t.createUser()).key;
    const made: string[] = [];
    for (let i = 0; i < 7; i++)
      made.push((await createExperiment(t, other, { name: i % 2 ? `odd ${i}` : `even ${i}` })).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await t.as(other).get(`/experiments?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(page.status, 200);
      assert.ok(page.body.items.length <= 3);
      seen.push(...page.body.items.map((e: { id: string }) => e.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, [...made].reverse());
    const odd = await t.as(other).get('/experiments?q=odd');
    assert.equal(odd.body.items.length, 3);
    assert.equal((await t.as(other).get('/experiments?state=committed')).body.items.length, 0);
    assert.equal(
      (await t.as(other).get('/experiments?q=100%25')).body.items.length,
      0,
      'LIKE wildcards in q are literal',
    );
    const bad = await t.as(other).get('/experiments?cursor=not-a-cursor');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'invalid_cursor');
  });

  it('counts each listed experiment’s runs by state', async () => {
    const owner = (await t.createUser()).key;
    const busy = await committedExperiment(t, owner);
    await createRun(t, owner, busy.id);
    await createRun(t, owner, busy.id);
    await runningRun(t, owner, busy.id);
    const idle = await createExperiment(t, owner);
    const listed = await t.as(owner).get('/experiments');
    assert.equal(listed.status, 200);
    const counts = new Map(listed.body.items.map((e: any) => [e.id, e.run_counts]));
    assert.deepEqual(counts.get(busy.id), { pending: 2, running: 1, succeeded: 0, failed: 0 });
    assert.deepEqual(counts.get(idle.id), { pending: 0, running: 0, succeeded: 0, failed: 0 });
  });

  it('walks lineage to a depth, both ways, and stays finite on diamonds', async () => {
    // a → b → d, a → c → d, d → e
    const a = await createExperiment(t, key, { name: 'a' });
    const b = await createExperiment(t, key, { name: 'b', parent_ids: [a.id] });
    const c = await createExperiment(t, key, { name: 'c', parent_ids: [a.id] });
    const d = await createExperiment(t, key, { name: 'd', parent_ids: [b.id, c.id] });
    const e = await createExperiment(t, key, { name: 'e', parent_ids: [d.id] });
    const both = await t.as(key).get(`/experiments/${d.id}/lineage`);
    assert.equal(both.status, 200);
    const byName = Object.fromEntries(both.body.nodes.map((n: any) => [n.name, `${n.relation}:${n.depth}`]));
    assert.deepEqual(byName, {
      a: 'ancestor:2',
      b: 'ancestor:1',
      c: 'ancestor:1',
      d: 'self:0',
      e: 'descendant:1',
    });
    assert.equal(both.body.edges.length, 5);
    const shallow = await t.as(key).get(`/experiments/${e.id}/lineage?direction=ancestors&depth=1`);
    assert.deepEqual(shallow.body.nodes.map((n: any) => n.name).sort(), ['d', 'e']);
    const down = await t.as(key).get(`/experiments/${a.id}/lineage?direction=descendants`);
    assert.deepEqual(down.body.nodes.map((n: any) => n.name).sort(), ['a', 'b', 'c', 'd', 'e']);
    const detail = await t.as(key).get(`/experiments/${d.id}`);
    assert.deepEqual(detail.body.parents.map((p: any) => p.name).sort(), ['b', 'c']);
    assert.deepEqual(
      detail.body.children.map((p: any) => p.name),
      ['e'],
    );
    assert.equal((await t.as(key).get(`/experiments/${a.id}/lineage?depth=0`)).status, 400);
  });

  it('refuses unknown parents (400) without writing anything', async () => {
    const before = (await t.as(key).get('/experiments?limit=200')).body.items.length;
    const res = await t
      .as(key)
      .post('/experiments', { name: 'orphan', parent_ids: ['00000000-0000-4000-8000-000000000000'] });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'unknown_parent');
    assert.equal((await t.as(key).get('/experiments?limit=200')).body.items.length, before);
  });

  it('answers 404 for an experiment that does not exist', async () => {
    const res = await t.as(key).get('/experiments/00000000-0000-4000-8000-000000000000');
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'not_found');
  });
});
