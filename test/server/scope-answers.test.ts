import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestService, type TestService } from '../support/service.ts';

// Issue #25, friction 5: the experiments list and search say which scope they looked in, and an empty search
// counts the matches in each other scope the caller can search.

describe('answers name their scope', () => {
  let t: TestService;
  let alice: string;
  let bob: string;
  let lab: { id: string; slug: string; name: string };
  let other: { id: string };
  const PERSONAL = { id: 'personal', slug: null, name: null };

  const report = (key: string, name: string, content: string, organizationId?: string) =>
    t.as(key).post('/assets', {
      kind: 'report',
      name,
      content,
      ...(organizationId ? { organization_id: organizationId } : {}),
    });
  const search = async (key: string, query: string) =>
    (await t.as(key).get(`/search?q=${encodeURIComponent(query)}`)).body;

  before(async () => {
    t = await startTestService({ listen: true });
    alice = (await t.createUser()).key;
    const bobUser = await t.createUser();
    bob = bobUser.key;
    lab = (await t.as(alice).post('/organizations', { slug: 'ml-lab', name: 'ML Lab' })).body;
    const added = await t.as(alice).post(`/organizations/${lab.id}/members`, { user_id: bobUser.id });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    // An organization Bob is not in, holding matches: never counted for him.
    other = (await t.as(alice).post('/organizations', { slug: 'secret-lab', name: 'Secret' })).body;
    for (const [name, org] of [
      ['warmup in the lab', lab.id],
      ['warmup again in the lab', lab.id],
      ['warmup, secretly', other.id],
    ] as const)
      assert.equal((await report(alice, name, `${name}: linear warmup`, org)).status, 201);
    assert.equal((await report(bob, 'cosine notes', 'cosine schedule, personal')).status, 201);
    // Not a document kind: not searchable, so not counted.
    await t.as(bob).post('/assets', { kind: 'output', name: 'warmup.log', content: 'warmup warmup' });
  });
  after(() => t.close());

  it('the experiments list: personal by default, the organization asked for, then the default organization', async () => {
    const personal = await t.as(bob).get('/experiments');
    assert.equal(personal.status, 200);
    assert.deepEqual(personal.body.scope, PERSONAL);
    const inLab = await t.as(bob).get(`/experiments?organization_id=${lab.id}`);
    assert.deepEqual(inLab.body.scope, { id: lab.id, slug: 'ml-lab', name: 'ML Lab' });
    assert.deepEqual((await t.as(bob).get('/experiments?organization_id=personal')).body.scope, PERSONAL);
    // The server-side default, as a client that names no scope gets it (the CLI's default can differ).
    assert.equal((await t.as(bob).patch('/v1/me', { default_organization_id: lab.id })).status, 200);
    try {
      assert.deepEqual((await t.as(bob).get('/experiments')).body.scope.slug, 'ml-lab');
    } finally {
      await t.as(bob).patch('/v1/me', { default_organization_id: null });
    }
    // Not a member: 404, as before.
    assert.equal((await t.as(bob).get(`/experiments?organization_id=${other.id}`)).status, 404);
  });

  it('an empty search counts the matches of each other scope the caller can search, none of the others', async () => {
    const empty = await search(bob, 'warmup');
    assert.deepEqual(empty.items, []);
    assert.deepEqual(empty.scope, PERSONAL);
    assert.deepEqual(empty.other_scopes, [
      { scope: { id: lab.id, slug: 'ml-lab', name: 'ML Lab' }, hits: 2 },
    ]);

    // Alice is in both organizations; from her personal scope she sees both counts.
    const alices = await search(alice, 'warmup');
    assert.deepEqual(
      alices.other_scopes.map((o: any) => [o.scope.slug, o.hits]),
      [
        ['ml-lab', 2],
        ['secret-lab', 1],
      ],
    );

    // From the lab, Bob's personal scope counts for "cosine".
    const fromLab = (await t.as(bob).get(`/search?q=cosine&organization_id=${lab.id}`)).body;
    assert.deepEqual(fromLab.scope, { id: lab.id, slug: 'ml-lab', name: 'ML Lab' });
    assert.deepEqual(fromLab.other_scopes, [{ scope: PERSONAL, hits: 1 }]);

    // The kind filter applies to the counts; a search with results counts nothing elsewhere.
    assert.deepEqual((await t.as(bob).get('/search?q=warmup&kind=paper')).body.other_scopes, []);
    const found = (await t.as(bob).get(`/search?q=warmup&organization_id=${lab.id}`)).body;
    assert.equal(found.items.length, 2);
    assert.deepEqual(found.other_scopes, []);
    assert.deepEqual((await search(bob, 'zeppelin')).other_scopes, []);
  });
});
