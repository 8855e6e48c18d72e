import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { committedExperiment, createExperiment, createRun } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

type User = { id: string; email: string; key: string };
const ids = (res: { body: { items: { id: string }[] } }) => res.body.items.map((e) => e.id);

async function createOrganization(t: TestService, key: string, slug: string) {
  const res = await t.as(key).post('/organizations', { slug, name: `Org ${slug}` });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { id: string; slug: string; role: string };
}

describe('organizations and scopes', () => {
  let t: TestService;
  let owner: User;
  let member: User;
  let outsider: User;
  let org: { id: string };
  before(async () => {
    t = await startTestService();
    [owner, member, outsider] = [await t.createUser(), await t.createUser(), await t.createUser()];
    org = await createOrganization(t, owner.key, 'vision-lab');
  });
  after(() => t.close());

  it('makes the creator the owner, and refuses a taken slug (409) or the reserved one (422)', async () => {
    const scopes = await t.as(owner.key).get('/v1/me/scopes');
    assert.equal(scopes.status, 200);
    assert.deepEqual(scopes.body.personal, { user_id: owner.id });
    assert.deepEqual(
      scopes.body.organizations.map((o: { id: string; slug: string; role: string }) => [
        o.id,
        o.slug,
        o.role,
      ]),
      [[org.id, 'vision-lab', 'owner']],
    );
    const taken = await t.as(outsider.key).post('/organizations', { slug: 'vision-lab', name: 'again' });
    assert.equal(taken.status, 409);
    assert.equal(taken.body.error.code, 'slug_taken');
    assert.equal(
      (await t.as(owner.key).post('/organizations', { slug: 'personal', name: 'mine' })).status,
      422,
    );
    assert.equal(
      (await t.as(owner.key).post('/organizations', { slug: 'Not A Slug', name: 'x' })).status,
      422,
    );
  });

  it('lets an owner add members by email and by id; others are refused', async () => {
    const byEmail = await t
      .as(owner.key)
      .post(`/organizations/${org.id}/members`, { email: member.email.toUpperCase() });
    assert.equal(byEmail.status, 201, JSON.stringify(byEmail.body));
    assert.deepEqual(byEmail.body, {
      organization_id: org.id,
      user_id: null,
      email: member.email.toUpperCase(),
      role: 'member',
    });
    assert.equal(
      (await t.as(owner.key).post(`/organizations/${org.id}/members`, { email: member.email })).status,
      409,
    );
    // An unknown address gets the very answer a registered one got: the owner learns nothing about who has an
    // account, and no one is added.
    const unknown = await t
      .as(owner.key)
      .post(`/organizations/${org.id}/members`, { email: 'NOBODY@example.test' });
    assert.deepEqual(
      [unknown.status, Object.keys(unknown.body).sort()],
      [201, Object.keys(byEmail.body).sort()],
    );
    assert.deepEqual(unknown.body, { ...byEmail.body, email: 'NOBODY@example.test' });
    const byMember = await t
      .as(member.key)
      .post(`/organizations/${org.id}/members`, { user_id: outsider.id });
    assert.equal(byMember.status, 403);
    assert.equal(byMember.body.error.code, 'not_organization_owner');
    assert.equal(
      (await t.as(outsider.key).post(`/organizations/${org.id}/members`, { user_id: outsider.id })).status,
      404,
    );
    const second = await createOrganization(t, owner.key, 'nlp-lab');
    const byId = await t
      .as(owner.key)
      .post(`/organizations/${second.id}/members`, { user_id: member.id, role: 'owner' });
    assert.equal(byId.status, 201);
    assert.deepEqual(byId.body, {
      organization_id: second.id,
      user_id: member.id,
      email: null,
      role: 'owner',
    });
    const unknownId = await t
      .as(owner.key)
      .post(`/organizations/${second.id}/members`, { user_id: '00000000-0000-4000-8000-000000000000' });
    assert.deepEqual(
      [unknownId.status, unknownId.body],
      [201, { ...byId.body, user_id: '00000000-0000-4000-8000-000000000000', role: 'member' }],
    );
    const members = await t.as(member.key).get(`/organizations/${org.id}/members`);
    assert.deepEqual(
      members.body.items.map((m: { user_id: string; role: string }) => [m.user_id, m.role]),
      [
        [owner.id, 'owner'],
        [member.id, 'member'],
      ],
    );
    const scopes = await t.as(member.key).get('/v1/me/scopes');
    assert.deepEqual(
      scopes.body.organizations.map((o: { slug: string; role: string }) => [o.slug, o.role]),
      [
        ['nlp-lab', 'owner'],
        ['vision-lab', 'member'],
      ],
    );
  });

  it('sets the default organization only to one the caller belongs to (else 404)', async () => {
    for (const orgId of [org.id, randomUUID()]) {
      const res = await t.as(outsider.key).patch('/v1/me', { default_organization_id: orgId });
      assert.equal(res.status, 404);
      assert.equal(res.body.error.code, 'not_found');
    }
    assert.equal((await t.as(outsider.key).get('/v1/me')).body.default_organization_id, null);
    const set = await t.as(owner.key).patch('/v1/me', { default_organization_id: org.id });
    assert.equal(set.status, 200);
    assert.equal(set.body.default_organization_id, org.id);
    assert.equal((await t.as(owner.key).get('/v1/me/scopes')).body.default_organization_id, org.id);
  });

  it('puts experiments in the default organization unless "personal" is asked, and lists by the same rule', async () => {
    assert.equal((await t.as(owner.key).patch('/v1/me', { default_organization_id: org.id })).status, 200);
    const inOrg = await createExperiment(t, owner.key, { name: 'defaulted' });
    assert.equal(inOrg.organization_id, org.id);
    const personal = await createExperiment(t, owner.key, { name: 'mine', organization_id: 'personal' });
    assert.equal(personal.organization_id, null);
    const listDefault = await t.as(owner.key).get('/experiments');
    assert.ok(ids(listDefault).includes(inOrg.id) && !ids(listDefault).includes(personal.id));
    const listPersonal = await t.as(owner.key).get('/experiments?organization_id=personal');
    assert.deepEqual(ids(listPersonal), [personal.id]);
    assert.ok(
      ids(await t.as(member.key).get(`/experiments?organization_id=${org.id}`)).includes(inOrg.id),
      'members see it',
    );
    const cleared = await t.as(owner.key).patch('/v1/me', { default_organization_id: null });
    assert.equal(cleared.body.default_organization_id, null);
    assert.equal((await createExperiment(t, owner.key)).organization_id, null, 'no default: personal');
    assert.ok(ids(await t.as(owner.key).get('/experiments')).includes(personal.id));
  });
});

describe('tenant isolation', () => {
  let t: TestService;
  let a: User;
  let b: User;
  let orgA: { id: string };
  let orgB: { id: string };
  const owned: { label: string; experimentId: string; runPath: string; orgId: string | null }[] = [];
  let draftA: string;

  /** Every GET that reaches one of A's objects; a new route means a new row. */
  const reads: [string, (o: (typeof owned)[number]) => string][] = [
    ['experiment detail', (o) => `/experiments/${o.experimentId}`],
    ['lineage', (o) => `/experiments/${o.experimentId}/lineage`],
    ['variations', (o) => `/experiments/${o.experimentId}/variations`],
    ['one variation', (o) => `/experiments/${o.experimentId}/variations/1`],
    ['runs', (o) => `/experiments/${o.experimentId}/variations/1/runs`],
    ['one run', (o) => o.runPath],
    ['run config', (o) => `${o.runPath}/config`],
  ];
  /** Every write that reaches one of A's objects, as [method, url, body]. */
  const writes: [string, (o: (typeof owned)[number]) => string, (o: (typeof owned)[number]) => unknown][] = [
    ['PATCH', (o) => `/experiments/${o.experimentId}`, () => ({ name: 'hijacked' })],
    ['POST', (o) => `/experiments/${o.experimentId}/conclude`, () => ({})],
    ['POST', (o) => `/experiments/${o.experimentId}/retract`, () => ({ reason: 'sabotage' })],
    ['POST', (o) => `/experiments/${o.experimentId}/variations/1/runs`, () => ({})],
    ['POST', (o) => `${o.runPath}/start`, () => ({})],
    ['POST', (o) => `${o.runPath}/heartbeat`, () => ({})],
    ['POST', (o) => `${o.runPath}/fail`, () => ({ reason: 'crash' })],
    ['POST', (o) => `${o.runPath}/cancel`, () => ({})],
    [
      'POST',
      () => '/api-keys',
      (o) => ({
        description: 'x',
        kind: 'worker',
        scopes: ['runs:read'],
        run: { experiment_id: o.experimentId, n: 1, r: 1 },
      }),
    ],
  ];

  before(async () => {
    t = await startTestService();
    [a, b] = [await t.createUser(), await t.createUser()];
    orgA = await createOrganization(t, a.key, 'org-a');
    orgB = await createOrganization(t, b.key, 'org-b');
    for (const [label, orgId] of [
      ['org A', orgA.id],
      ['A personal', null],
    ] as const) {
      const e = await committedExperiment(t, a.key, {
        name: `A ${label}`,
        organization_id: orgId ?? 'personal',
      });
      const run = await createRun(t, a.key, e.id);
      owned.push({ label, experimentId: e.id, runPath: run.path, orgId });
    }
    draftA = (
      await createExperiment(t, a.key, { organization_id: orgA.id, parent_ids: [owned[1]!.experimentId] })
    ).id;
    await createExperiment(t, b.key, { name: 'B personal', organization_id: 'personal' });
    await createExperiment(t, b.key, { name: 'B org', organization_id: orgB.id });
  });
  after(() => t.close());

  it("answers 404 to every read of another tenant's objects, exactly as for objects that do not exist", async () => {
    for (const o of owned) {
      const ghost = {
        ...o,
        experimentId: randomUUID(),
        runPath: o.runPath.replace(o.experimentId, randomUUID()),
      };
      for (const [label, url] of reads) {
        assert.equal((await t.as(a.key).get(url(o))).status, 200, `${o.label} ${label}: the owner reads it`);
        const res = await t.as(b.key).get(url(o));
        assert.equal(res.status, 404, `${o.label} ${label}: ${JSON.stringify(res.body)}`);
        assert.deepEqual(
          res.body,
          (await t.as(b.key).get(url(ghost))).body,
          `${o.label} ${label}: same answer as a missing object`,
        );
      }
    }
    for (const url of [`/organizations/${orgA.id}`, `/organizations/${orgA.id}/members`]) {
      assert.equal((await t.as(a.key).get(url)).status, 200, url);
      const res = await t.as(b.key).get(url);
      assert.equal(res.status, 404, url);
      assert.deepEqual(res.body, (await t.as(b.key).get(url.replace(orgA.id, randomUUID()))).body, url);
    }
    const scopes = await t.as(b.key).get('/v1/me/scopes');
    assert.deepEqual(
      scopes.body.organizations.map((o: { id: string }) => o.id),
      [orgB.id],
    );
  });

  it("answers 404 to every write on another tenant's objects, and changes nothing", async () => {
    for (const o of owned) {
      for (const [method, url, body] of writes) {
        const res = await t.request(method, url(o), { key: b.key, body: body(o) });
        assert.equal(res.status, 404, `${o.label} ${method} ${url(o)}: ${JSON.stringify(res.body)}`);
      }
      const detail = await t.as(a.key).get(`/experiments/${o.experimentId}`);
      assert.equal(detail.body.state, 'committed');
      assert.deepEqual(detail.body.run_counts, { pending: 1, running: 0, succeeded: 0, failed: 0 });
      const run = await t.as(a.key).get(o.runPath);
      assert.deepEqual([run.body.state, run.body.cancel_requested], ['pending', false]);
    }
    assert.equal(
      (await t.as(b.key).post(`/experiments/${draftA}/variations`, { config_yaml: 'lr: 1\n' })).status,
      404,
    );
    assert.equal((await t.as(b.key).post(`/experiments/${draftA}/commit`)).status, 404);
    assert.equal((await t.as(a.key).get(`/experiments/${draftA}/variations`)).body.items.length, 0);
  });

  it("keeps A's experiments out of every listing of B, and refuses B the use of org A", async () => {
    for (const query of ['', '?organization_id=personal', `?organization_id=${orgB.id}`]) {
      const res = await t.as(b.key).get(`/experiments${query}`);
      assert.equal(res.status, 200, query);
      assert.equal(res.body.items.length, 1, query);
      for (const o of owned) assert.ok(!ids(res).includes(o.experimentId), `${query}: ${o.label} leaked`);
      assert.ok(!ids(res).includes(draftA));
    }
    const list = await t.as(b.key).get(`/experiments?organization_id=${orgA.id}`);
    assert.equal(list.status, 404);
    const create = await t.as(b.key).post('/experiments', { name: 'squatter', organization_id: orgA.id });
    assert.equal(create.status, 404);
    const child = await t
      .as(b.key)
      .post('/experiments', { name: 'child', parent_ids: [owned[0]!.experimentId] });
    const ghostChild = await t.as(b.key).post('/experiments', { name: 'child', parent_ids: [randomUUID()] });
    assert.equal(child.status, ghostChild.status);
    assert.equal(child.body.error.code, ghostChild.body.error.code);
    assert.notEqual(child.status, 201, "B cannot descend from A's experiment");
    assert.equal((await t.as(b.key).patch('/v1/me', { default_organization_id: orgA.id })).status, 404);
  });

  it("opens org A's experiments (and only those) to B once B is a member", async () => {
    assert.equal(
      (await t.as(a.key).post(`/organizations/${orgA.id}/members`, { user_id: b.id })).status,
      201,
    );
    const [inOrg, personal] = owned;
    const list = await t.as(b.key).get(`/experiments?organization_id=${orgA.id}`);
    assert.equal(list.status, 200);
    assert.deepEqual(new Set(ids(list)), new Set([inOrg!.experimentId, draftA]));
    for (const [label, url] of reads)
      assert.equal((await t.as(b.key).get(url(inOrg!))).status, 200, `org A ${label}`);
    for (const [label, url] of reads)
      assert.equal((await t.as(b.key).get(url(personal!))).status, 404, `A personal ${label}`);
    // draftA descends from A's personal experiment: B must learn nothing about that parent.
    const draft = await t.as(b.key).get(`/experiments/${draftA}`);
    assert.equal(draft.status, 200);
    assert.deepEqual([draft.body.parent_ids, draft.body.parents], [[], []]);
    const lineage = await t.as(b.key).get(`/experiments/${draftA}/lineage`);
    assert.deepEqual(
      lineage.body.nodes.map((n: { id: string }) => n.id),
      [draftA],
    );
    assert.ok(
      !JSON.stringify(ids(await t.as(b.key).get(`/experiments?organization_id=${orgA.id}`))).includes(
        personal!.experimentId,
      ),
    );
  });
});
