import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { createExperiment } from '../support/fixtures.ts';
import { prng, seedFrom } from '../support/prng.ts';
import { seedObjects, type SeededObjects } from '../support/seed-objects.ts';
import { startTestService, type Reply, type TestService } from '../support/service.ts';

// Property: whatever GET a caller sends, objects of an organization it is not a member of, and of another
// user's personal scope, never come back: a direct get answers exactly as for an id that names nothing (404),
// and no answer (list, search, detail, lineage, …) contains their ids. The GET operations come from
// /openapi.json, so a new endpoint is covered the day it lands (or fails here until the test knows what its
// path parameters name). The world (users, organizations, memberships, defaults, which ids go where) is drawn
// from a seeded PRNG.

const SEED = seedFrom('TENANT_SEED');
const rng = prng(SEED);
const REPLAY = `TENANT_SEED=${SEED}`;
const SHARED_WORD = 'isolation';

interface User {
  id: string;
  keys: string[];
}
interface Org {
  id: string;
  members: Set<string>;
}
interface Seed extends SeededObjects {
  ownerId: string;
}
/** An experiment in `organizationId` whose parent is its creator's personal experiment. */
interface Child {
  id: string;
  organizationId: string;
  ownerId: string;
  parentId: string;
}
interface GetOp {
  path: string;
  params: string[];
  query: { name: string; required?: boolean; schema: { maximum?: number; anyOf?: { const?: string }[] } }[];
}
type Params = Record<string, string>;

describe(`tenant isolation, every GET of the OpenAPI document (${REPLAY})`, () => {
  let t: TestService;
  const users: User[] = [];
  const orgs: Org[] = [];
  const seeds: Seed[] = [];
  const children: Child[] = [];
  let ops: GetOp[];

  const member = (userId: string, orgId: string) => orgs.find((o) => o.id === orgId)!.members.has(userId);
  const visible = (userId: string, scope: { organizationId: string | null; ownerId: string }) =>
    scope.organizationId === null ? scope.ownerId === userId : member(userId, scope.organizationId);
  const experimentIds = () => [
    ...seeds.flatMap((s) => [s.experimentId, s.draftId, s.sweepExperimentId]),
    ...children.map((c) => c.id),
  ];

  /** Every id the user must never see, with what it is (for the failure message). */
  function forbiddenFor(userId: string): Map<string, string> {
    const ids = new Map<string, string>();
    for (const s of seeds) {
      if (s.ownerId !== userId)
        ids.set(s.apiKeyId, `another user's API key (${s.organizationId ?? 'personal'})`);
      if (visible(userId, s)) continue;
      const where = s.organizationId ? `organization ${s.organizationId}` : `personal scope of ${s.ownerId}`;
      for (const [what, id] of Object.entries({
        experiment: s.experimentId,
        draft: s.draftId,
        'sweep experiment': s.sweepExperimentId,
        sweep: s.sweepId,
        ...s.assetIds,
      }))
        ids.set(id, `${what} of ${where}`);
      for (const r of s.runs) ids.set(r.id, `run ${r.r} of ${where}`);
    }
    for (const c of children)
      if (!visible(userId, c)) ids.set(c.id, `child experiment of organization ${c.organizationId}`);
    for (const o of orgs)
      if (!o.members.has(userId)) ids.set(o.id, 'an organization the user is not a member of');
    return ids;
  }

  before(async () => {
    // The seeds' researchers provision launch blocks they wrote themselves.
    t = await startTestService({
      orchestrator: new FakeOrchestrator(),
      env: { ASSAY_LOCAL_COMPUTE_USERS: 'all' },
    });
    for (let i = 0; i < 4; i++) {
      const u = await t.createUser();
      const agent = await t.as(u.key).post('/api-keys', {
        description: 'reader',
        kind: 'agent',
        scopes: ['experiments:read', 'runs:read', 'assets:read', 'search:read'],
      });
      assert.equal(agent.status, 201, JSON.stringify(agent.body));
      users.push({ id: u.id, keys: [u.key, agent.body.key] });
    }
    // a shares org 0 with b only; c owns org 1 (with b or d); d owns org 2 with some of b and c: a and d
    // share nothing.
    const [a, b, c, d] = rng.shuffle(users);
    const plan: [User, User[]][] = [
      [a!, [b!]],
      [c!, [rng.pick([b!, d!])]],
      [d!, [b!, c!].filter(() => rng.chance(0.5))],
    ];
    for (const [i, [owner, others]] of plan.entries()) {
      const res = await t
        .as(owner.keys[0]!)
        .post('/organizations', { slug: `tenant-${i}-${SEED}`, name: `Tenant ${i}` });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const org: Org = { id: res.body.id, members: new Set([owner.id]) };
      for (const o of others) {
        assert.equal(
          (await t.as(owner.keys[0]!).post(`/organizations/${org.id}/members`, { user_id: o.id })).status,
          201,
        );
        org.members.add(o.id);
      }
      orgs.push(org);
    }
    let n = 0;
    const seed = async (owner: User, organizationId: string | null) => {
      const searchWord = `word${n++}x${rng.int(1e6)}`;
      const objects = await seedObjects(t, owner.keys[0]!, {
        organizationId,
        label: `tenant ${n}`,
        searchWord,
        sharedWord: SHARED_WORD,
      });
      seeds.push({ ...objects, ownerId: owner.id });
      return objects;
    };
    for (const u of users) await seed(u, null);
    const someMember = (o: Org) => {
      const id = rng.pick([...o.members]);
      return users.find((u) => u.id === id)!;
    };
    for (const o of orgs) await seed(someMember(o), o.id);
    for (const o of orgs) {
      const creator = someMember(o);
      const parentId = seeds.find((s) => s.ownerId === creator.id && s.organizationId === null)!.experimentId;
      const child = await createExperiment(t, creator.keys[0]!, {
        name: 'child of a personal experiment',
        organization_id: o.id,
        parent_ids: [parentId],
      });
      children.push({ id: child.id, organizationId: o.id, ownerId: creator.id, parentId });
    }
    for (const u of users) {
      const mine = orgs.filter((o) => o.members.has(u.id));
      if (mine.length > 0 && rng.chance(0.5))
        assert.equal(
          (await t.as(u.keys[0]!).patch('/v1/me', { default_organization_id: rng.pick(mine).id })).status,
          200,
        );
    }
    const openapi = (await t.request('GET', '/openapi.json')).body as {
      paths: Record<
        string,
        {
          get?: {
            parameters?: {
              in: string;
              name: string;
              required?: boolean;
              schema: GetOp['query'][number]['schema'];
            }[];
          };
        }
      >;
    };
    ops = Object.entries(openapi.paths)
      .filter(([, methods]) => methods.get)
      .map(([path, methods]) => {
        const parameters = methods.get!.parameters ?? [];
        return {
          path,
          params: parameters.filter((p) => p.in === 'path').map((p) => p.name),
          query: parameters
            .filter((p) => p.in === 'query')
            .map(({ name, required, schema }) => ({ name, required, schema })),
        };
      });
  });
  after(() => t?.close());

  /**
   * What a path parameter of `path` names in seed `s`: the canonical object when `own`, any fitting
   * one otherwise.
   */
  function valueOf(path: string, name: string, s: Seed, own: boolean): string | undefined | null {
    if (path.startsWith('/experiments/')) {
      const sweep = path.includes('{sweep_id}');
      const experiments = sweep
        ? [s.sweepExperimentId]
        : path.includes('{r}')
          ? [s.experimentId, s.sweepExperimentId]
          : [s.experimentId, s.draftId, s.sweepExperimentId];
      if (name === 'id') return own ? experiments[0] : rng.pick(experiments);
      if (name === 'sweep_id') return s.sweepId;
      if (name === 'n') return '1';
      if (name === 'r') return own ? '2' : String(rng.pick([1, 2, 3])); // r2 is running; variation 1 holds the checkpoint
      if (name === 'key') return 'loss'; // r2 logged it
    }
    if (path.startsWith('/assets/') && name === 'id')
      return own ? s.assetIds.report : rng.pick(Object.values(s.assetIds));
    if (path.startsWith('/organizations/') && name === 'id') return s.organizationId ?? undefined;
    if (path.startsWith('/orchestrator/runs/') && name === 'run_id') return s.managedRun.id;
    if (path.startsWith('/orchestrator/sweeps/') && name === 'sweep_id') return s.sweepId;
    return null; // a parameter this test cannot fill yet
  }
  const isId = (name: string) => name !== 'n' && name !== 'r' && name !== 'key';
  /** The query parameters an operation requires, filled with what the seeds hold. */
  function requiredQuery(op: GetOp): string {
    const query: Params = {};
    for (const { name, required } of op.query) {
      // The run-control long-poll would hold a running run's request for its default 25 s.
      if (name === 'wait_s') query[name] = '0';
      if (!required) continue;
      if (name === 'keys') query[name] = 'loss,acc';
      else
        assert.fail(
          `${op.path}: the test does not know what to give the required ?${name}; teach requiredQuery`,
        );
    }
    const text = new URLSearchParams(query).toString();
    return text ? `?${text}` : '';
  }
  const urlOf = (path: string, params: Params, op?: GetOp) =>
    path.replace(/\{(\w+)\}/g, (_, name: string) => params[name]!) + (op ? requiredQuery(op) : '');
  function paramsOf(op: GetOp, s: Seed, own: boolean): Params | undefined {
    const params: Params = {};
    for (const name of op.params) {
      const value = valueOf(op.path, name, s, own);
      if (value === null)
        assert.fail(`${op.path}: the test does not know what {${name}} names; teach valueOf`);
      if (value === undefined) return undefined;
      params[name] = value;
    }
    return params;
  }
  /**
   * The /orchestrator/* reads answer the orchestrator's key only, /admin/* an admin's: every user key
   * gets 403.
   */
  const scopeDenied = (op: GetOp) => op.path.startsWith('/orchestrator/') || op.path.startsWith('/admin/');

  function assertNoLeak(userId: string, label: string, res: Reply) {
    assert.ok(res.status < 500, `${label}: ${res.status} ${JSON.stringify(res.body)} (${REPLAY})`);
    if (res.status >= 300) return;
    // An empty answer (a run's empty logs.txt) has no body to leak anything.
    const text = JSON.stringify(res.body) ?? '';
    for (const [id, what] of forbiddenFor(userId))
      assert.ok(!text.includes(id), `${label} leaked ${what} (${id}) (${REPLAY})`);
  }

  it('answers a direct get of another tenant’s object exactly as one of an id that names nothing', async () => {
    const paramOps = ops.filter((op) => op.params.length > 0);
    assert.ok(paramOps.length >= 10, `only ${paramOps.length} GET operations with path parameters`);
    let foreign = 0;
    for (const op of paramOps) {
      for (const user of users) {
        const key = () => rng.pick(user.keys);
        for (const s of seeds) {
          const mine = visible(user.id, s);
          const own = paramsOf(op, s, true);
          if (own && mine) {
            const res = await t.as(key()).get(urlOf(op.path, own, op));
            const expected = scopeDenied(op) ? res.status === 403 : res.status === 200;
            assert.ok(
              expected,
              `${op.path} own object ${urlOf(op.path, own, op)}: ${res.status} ${JSON.stringify(res.body)} (${REPLAY})`,
            );
            assertNoLeak(user.id, `GET ${urlOf(op.path, own, op)}`, res);
          }
          if (mine) continue;
          // The whole tuple from the other tenant, then each id alone inside a tuple of the caller's
          // own objects.
          const cases: [Params, Params][] = [];
          const theirs = paramsOf(op, s, false);
          if (theirs)
            cases.push([
              theirs,
              Object.fromEntries(Object.entries(theirs).map(([k, v]) => [k, isId(k) ? rng.uuid() : v])),
            ]);
          const candidates = seeds.filter((x) => visible(user.id, x) && paramsOf(op, x, true));
          const ownSeed = candidates.length > 0 ? rng.pick(candidates) : undefined;
          const base = ownSeed && paramsOf(op, ownSeed, true);
          for (const name of op.params.filter(isId))
            if (base && theirs)
              cases.push([
                { ...base, [name]: theirs[name]! },
                { ...base, [name]: rng.uuid() },
              ]);
          for (const [params, ghost] of cases) {
            foreign++;
            const k = key();
            const res = await t.as(k).get(urlOf(op.path, params, op));
            const none = await t.as(k).get(urlOf(op.path, ghost, op));
            const label = `GET ${urlOf(op.path, params, op)} by ${user.id}`;
            assert.equal(
              res.status,
              scopeDenied(op) ? 403 : 404,
              `${label}: ${res.status} ${JSON.stringify(res.body)} (${REPLAY})`,
            );
            assert.deepEqual(
              res.body,
              none.body,
              `${label}: not the answer for an id that names nothing (${REPLAY})`,
            );
          }
        }
      }
    }
    assert.ok(foreign > 100, `only ${foreign} foreign reads`);
  });

  it('keeps other tenants’ objects out of every list, search, detail and lineage', async () => {
    const allExperiments = experimentIds();
    const queryValue = (
      op: GetOp,
      name: string,
      schema: GetOp['query'][number]['schema'],
    ): string | undefined => {
      if (name === 'organization_id') return rng.pick([undefined, 'personal', ...orgs.map((o) => o.id)]);
      if (name === 'experiment_id') return rng.pick([undefined, ...allExperiments]);
      if (name === 'q')
        return op.path === '/search'
          ? rng.pick([SHARED_WORD, ...seeds.map((s) => s.searchWord)])
          : rng.pick([undefined, 'tenant', 'draft']);
      if (name === 'limit') return schema.maximum === undefined ? undefined : String(schema.maximum);
      if (name === 'kind') return rng.pick([undefined, 'report', 'checkpoint', 'output']);
      if (name === 'direction') return 'both';
      if (name === 'depth') return schema.maximum === undefined ? undefined : String(schema.maximum);
      const literals = schema.anyOf?.map((s) => s.const).filter((c): c is string => typeof c === 'string');
      return literals?.length ? rng.pick([undefined, ...literals]) : undefined;
    };
    const listOps = ops.filter((op) => op.params.length === 0);
    for (const user of users) {
      const forbidden = forbiddenFor(user.id);
      for (const op of listOps) {
        if (scopeDenied(op)) {
          const res = await t.as(rng.pick(user.keys)).get(op.path);
          assert.equal(
            res.status,
            403,
            `GET ${op.path} by ${user.id}: ${JSON.stringify(res.body)} (${REPLAY})`,
          );
          continue;
        }
        let reached = 0;
        for (let round = 0; round < 12; round++) {
          const query: Params = {};
          for (const { name, schema } of op.query) {
            const value = queryValue(op, name, schema);
            if (value !== undefined) query[name] = value;
          }
          if (query.experiment_id && op.query.some((q) => q.name === 'r') && rng.chance(0.5))
            Object.assign(query, { n: '1', r: String(rng.pick([1, 2, 3])) });
          const url = `${op.path}?${new URLSearchParams(query)}`;
          const key = rng.pick(user.keys);
          const res = await t.as(key).get(url);
          assertNoLeak(user.id, `GET ${url} by ${user.id}`, res);
          if (res.status < 300) reached++;
          const foreignIds = Object.values(query).filter((v) => forbidden.has(v));
          if (foreignIds.length === 0) continue;
          // A filter naming another tenant's object answers as one naming nothing.
          const ghost = Object.fromEntries(
            Object.entries(query).map(([k, v]) => [k, forbidden.has(v) ? rng.uuid() : v]),
          );
          const none = await t.as(key).get(`${op.path}?${new URLSearchParams(ghost)}`);
          assert.deepEqual(
            [res.status, res.body],
            [none.status, none.body],
            `GET ${url}: not the answer for an id that names nothing (${REPLAY})`,
          );
        }
        assert.ok(
          reached > 0,
          `GET ${op.path} never answered 2xx to ${user.id}: the test does not reach it (${REPLAY})`,
        );
      }
      // Every experiment the user can list, read through every GET that takes only its id: no parent or child
      // of another tenant shows.
      const reachable = allExperiments.filter((id) => !forbidden.has(id));
      for (const op of ops.filter((o) => o.path.startsWith('/experiments/') && o.params.join() === 'id')) {
        for (const id of reachable)
          assertNoLeak(
            user.id,
            `GET ${op.path.replace('{id}', id)}`,
            await t
              .as(rng.pick(user.keys))
              .get(
                requiredQuery(op)
                  ? `${op.path.replace('{id}', id)}${requiredQuery(op)}`
                  : `${op.path.replace('{id}', id)}?${op.query.length ? 'depth=50' : ''}`,
              ),
          );
      }
    }
  });

  it('is not vacuous: each user lists, searches and reads what it may see', async () => {
    for (const user of users) {
      for (const s of seeds.filter((x) => visible(user.id, x))) {
        const scope = s.organizationId ?? 'personal';
        const key = rng.pick(user.keys);
        const listed = await t.as(key).get(`/experiments?organization_id=${scope}&limit=200`);
        assert.ok(
          JSON.stringify(listed.body).includes(s.experimentId),
          `experiment list of ${scope} for ${user.id} (${REPLAY})`,
        );
        const assets = await t.as(key).get(`/assets?experiment_id=${s.experimentId}&limit=200`);
        assert.ok(
          JSON.stringify(assets.body).includes(s.assetIds.report),
          `asset list of ${s.experimentId} for ${user.id} (${REPLAY})`,
        );
        const found = await t.as(key).get(`/search?q=${s.searchWord}&organization_id=${scope}`);
        assert.ok(
          JSON.stringify(found.body).includes(s.assetIds.report),
          `search ${s.searchWord} in ${scope} for ${user.id}: ${JSON.stringify(found.body)} (${REPLAY})`,
        );
      }
    }
  });
});
