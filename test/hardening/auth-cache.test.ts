// Verified keys are cached for minutes on every replica; whatever stops a key from working must still reach
// all of them: revocations (with the keys minted from the revoked one) through LISTEN/NOTIFY, an orchestrator
// key rotated out by another replica's start, expiry and a worker key's grace by the entry's own lifetime,
// and a lost LISTEN session by emptying the cache. Two `assay server` processes on one PostgreSQL, as
// scale-out.test.ts runs them; each bound below is the rule under test, not a timing measurement.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { KEY_CHANGES_CHANNEL } from '../../src/server/auth/credential-repository.ts';
import { generateOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { startAssayServer, type AssayServer } from '../support/assay-server.ts';
import { eventually } from '../support/bounded-waits.ts';
import { committedExperiment, runningRun } from '../support/fixtures.ts';
import { httpApi, listensForRevocations, metric } from '../support/http-api.ts';
import { createTestDatabase } from '../support/postgres.ts';
import { startTestService, type Api, type TestService } from '../support/service.ts';

/** Every replica answers 401 for a revoked key within this (docs/architecture.md, Auth cache). */
const REVOCATION_BOUND_MS = 5_000;
const GRACE_S = 2;

const lookups = (api: Api) => metric(api, 'assay_auth_key_lookups_total');

/** The status a key gets on a route every valid key reaches (or is refused 403 after authenticating). */
const status = async (api: Api, key: string) => (await api.as(key).get('/v1/me')).status;

async function answers401Within(api: Api, key: string, ms: number, what: string): Promise<void> {
  await eventually(async () => (await status(api, key)) === 401, ms, what);
}

/**
 * Uses the key on a replica until a use is answered from its cache (reads no key from the database). Not
 * always the second use: a check that overlapped a notice about its key (its creation's or a change's)
 * caches nothing.
 */
async function cacheOn(api: Api, key: string, expected = 200): Promise<void> {
  assert.equal(await status(api, key), expected);
  for (let attempt = 1; ; attempt++) {
    const before = await lookups(api);
    assert.equal(await status(api, key), expected);
    if ((await lookups(api)) === before) return;
    assert.ok(attempt < 5, 'a use of the key is answered from the cache');
  }
}

describe('auth cache across two replicas on one PostgreSQL', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dataDir: string;
  let serverEnv: Record<string, string>;
  const servers: AssayServer[] = [];
  let a: Api;
  let b: Api;
  let admin: string;
  let sql: pg.Client;
  const orchestratorKey = generateOrchestratorKey();

  // The sessions listening for key changes (a replica has another for run control; its last query tells).
  const listenerPids = async () =>
    (
      await sql.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE application_name = 'assay-listener' AND datname = current_database()
            AND query = 'LISTEN "' || $1 || '"'`,
        [KEY_CHANGES_CHANNEL],
      )
    ).rows.map((r) => r.pid);

  async function userKey(): Promise<string> {
    const res = await a
      .as(admin)
      .post('/admin/users', { email: `u${Date.now()}${Math.random()}@example.test` });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.api_key.key;
  }
  async function mint(api: Api, minter: string, scopes: string[] = ['api_keys:write', 'experiments:read']) {
    const res = await api.as(minter).post('/api-keys', { description: 'cached', scopes });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as { id: string; key: string };
  }

  before(async () => {
    database = await createTestDatabase();
    dataDir = await mkdtemp(path.join(tmpdir(), 'assay-auth-cache-'));
    serverEnv = {
      DATABASE_URL: database.url,
      ASSAY_DATA_DIR: dataDir,
      ASSAY_ORCHESTRATOR: 'off',
      ASSAY_ORCHESTRATOR_KEY: orchestratorKey,
      ASSAY_LOG_LEVEL: 'warn',
      ASSAY_WORKER_KEY_GRACE_S: String(GRACE_S),
      // No periodic re-check within a test: what ends a cached key here is the notice or the
      // entry's lifetime.
      ASSAY_AUTH_RECHECK_S: '3600',
    };
    const first = await startAssayServer(serverEnv);
    servers.push(first);
    admin = first.bootstrapKey!;
    assert.ok(admin, 'the first replica bootstraps the admin');
    servers.push(await startAssayServer(serverEnv));
    [a, b] = servers.map((s) => httpApi(s.url)) as [Api, Api];
    for (const api of [a, b]) await eventually(() => listensForRevocations(api), 10_000, 'listening');
    sql = new pg.Client({ connectionString: database.url });
    await sql.connect();
  });
  after(async () => {
    await sql?.end();
    for (const s of servers) await s.stop();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('a key revoked through one replica answers 401 on the other, with every key minted from it', async () => {
    const owner = await userKey();
    const root = await mint(a, owner);
    const child = await mint(b, root.key);
    const grandchild = await mint(a, child.key);
    for (const api of [a, b]) for (const k of [root, child, grandchild]) await cacheOn(api, k.key);

    assert.equal((await a.as(owner).delete(`/api-keys/${root.id}`)).status, 200);
    for (const k of [root, child, grandchild])
      assert.equal(await status(a, k.key), 401, 'at once where revoked');
    for (const k of [root, child, grandchild])
      await answers401Within(b, k.key, REVOCATION_BOUND_MS, 'the other replica refuses the revoked lineage');
  });

  it('an orchestrator key rotated out by a replica starting with another one stops on the running replicas', async () => {
    for (const api of [a, b]) await cacheOn(api, orchestratorKey, 403); // authenticated, then kept off /v1/me
    const rotated = await startAssayServer({
      ...serverEnv,
      ASSAY_ORCHESTRATOR_KEY: generateOrchestratorKey(),
    });
    servers.push(rotated);
    for (const api of [a, b])
      await answers401Within(api, orchestratorKey, REVOCATION_BOUND_MS, 'the old orchestrator key stops');
  });

  it('a cached key answers 401 once it expires', async () => {
    const owner = await userKey();
    const k = await mint(a, owner);
    // Minted lifetimes are whole days: a key about to expire is made by setting its expiry, before any cache
    // has it.
    await sql.query(`UPDATE api_keys SET expires_at = now() + interval '5 seconds' WHERE id = $1`, [k.id]);
    await cacheOn(b, k.key);
    await answers401Within(b, k.key, 10_000, 'the expired key is refused although nothing announced it');
  });

  it('a cached worker key answers 401 once its run ended longer ago than the grace', async () => {
    const owner = await userKey();
    const full = await mint(a, owner, [
      'api_keys:write',
      'experiments:read',
      'experiments:write',
      'runs:read',
      'runs:write',
    ]);
    const experimentId = (await committedExperiment(a, full.key)).id;
    const run = await runningRun(a, full.key, experimentId);
    const minted = await a.as(full.key).post('/api-keys', {
      description: 'worker',
      kind: 'worker',
      scopes: ['runs:read', 'runs:write'],
      run: { experiment_id: experimentId, n: 1, r: run.r },
    });
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    const worker: string = minted.body.key;
    const beat = async () => (await b.as(worker).post(`${run.path}/heartbeat`)).status;
    assert.equal(await beat(), 200);
    const before = await lookups(b);
    assert.equal(await beat(), 200);
    assert.equal(await lookups(b), before, 'the heartbeat was authenticated from the cache');
    assert.equal((await b.as(worker).post(`${run.path}/succeed`)).status, 200);
    await eventually(
      async () => (await b.as(worker).get(run.path)).status === 401,
      GRACE_S * 1000 + 10_000,
      'the worker key stops after the grace',
    );
  });

  it('a lost LISTEN session empties the cache: a key revoked meanwhile answers 401, and notices flow again', async () => {
    const owner = await userKey();
    const k = await mint(a, owner);
    await cacheOn(b, k.key);
    const pids = await listenerPids();
    assert.equal(pids.length, servers.length, 'one listening session per replica');
    await sql.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [pids]);
    assert.equal((await a.as(owner).delete(`/api-keys/${k.id}`)).status, 200);
    await answers401Within(b, k.key, REVOCATION_BOUND_MS, 'the key revoked in the gap is refused');

    await eventually(
      async () => (await listenerPids()).filter((p) => !pids.includes(p)).length === servers.length,
      10_000,
      'every replica listens again',
    );
    for (const api of [a, b]) await eventually(() => listensForRevocations(api), 10_000, 'listening again');
    assert.equal(await status(b, k.key), 401, 'still refused after the reconnect');
    const next = await mint(a, owner);
    await cacheOn(b, next.key);
    assert.equal((await a.as(owner).delete(`/api-keys/${next.id}`)).status, 200);
    await answers401Within(b, next.key, REVOCATION_BOUND_MS, 'the new session carries revocations');
  });
});

describe('auth cache on PGlite (one replica)', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ pglite: true, env: { ASSAY_AUTH_RECHECK_S: '3600' } });
    await eventually(() => listensForRevocations(t), 10_000, 'listening');
  });
  after(() => t.close());

  it('a revoked key answers 401 at once, whether revoked through the API or by an operator in SQL', async () => {
    const { key: owner } = await t.createUser();
    const viaApi = (await t.as(owner).post('/api-keys', { description: 'a', scopes: ['experiments:read'] }))
      .body;
    const viaSql = (await t.as(owner).post('/api-keys', { description: 'b', scopes: ['experiments:read'] }))
      .body;
    for (const k of [viaApi, viaSql]) await cacheOn(t, k.key);
    assert.equal((await t.as(owner).delete(`/api-keys/${viaApi.id}`)).status, 200);
    assert.equal(await status(t, viaApi.key), 401);
    // The trigger's notice is delivered before PGlite answers the statement.
    await t.service.db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [viaSql.id]);
    assert.equal(await status(t, viaSql.key), 401);
  });
});
