import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { eventually } from '../support/bounded-waits.ts';
import { listensForRevocations } from '../support/http-api.ts';
import { createTestDatabase } from '../support/postgres.ts';
import { startTestService, type Reply, type TestService } from '../support/service.ts';

const DAY_MS = 86_400_000;

/** Asserts an expiry is `days` from now, give or take a minute (the request's own duration). */
function assertExpiresInDays(expiresAt: string, days: number) {
  const delta = Date.parse(expiresAt) - (Date.now() + days * DAY_MS);
  assert.ok(
    Math.abs(delta) < 60_000,
    `expires_at ${expiresAt} should be ~${days} days from now (off by ${delta} ms)`,
  );
}

/** A 401 with the JSON error body and nothing that leaks internals (no stack lines, no file paths). */
function assertCleanUnauthorized(res: Reply, label: string) {
  assert.equal(res.status, 401, label);
  assert.equal(res.body?.error?.code, 'unauthenticated', label);
  assert.equal(typeof res.body.error.message, 'string', label);
  const text = JSON.stringify(res.body);
  assert.doesNotMatch(text, /\bat \S+ \(|\n\s+at |\\n\s+at /, `${label}: stack trace in body`);
  assert.doesNotMatch(
    text,
    /\/(work|home|tmp|src|node_modules)\/|\.ts:\d+|file:\/\//,
    `${label}: file path in body`,
  );
}

async function sql<R extends pg.QueryResultRow>(
  databaseUrl: string,
  text: string,
  params: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<R>(text, params)).rows;
  } finally {
    await client.end();
  }
}

describe('API keys', () => {
  let t: TestService;
  let user: { id: string; email: string; key: string };
  before(async () => {
    t = await startTestService();
    user = await t.createUser();
  });
  after(() => t.close());

  const mint = (key: string, body: Record<string, unknown>) =>
    t.as(key).post('/api-keys', { description: 'test key', ...body });

  it('mints a key (201) whose full value is returned once and never listed', async () => {
    const res = await mint(user.key, { description: 'laptop', scopes: ['experiments:read'] });
    assert.equal(res.status, 201);
    assert.match(res.body.key, /^sk_user_[0-9a-f]{32}[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(
      { kind: res.body.kind, description: res.body.description, scopes: res.body.scopes },
      { kind: 'user', description: 'laptop', scopes: ['experiments:read'] },
    );
    assert.equal((await t.as(res.body.key).get('/v1/me')).body.id, user.id);
    const list = await t.as(user.key).get('/api-keys');
    assert.equal(list.status, 200);
    const listed = list.body.items.find((k: { id: string }) => k.id === res.body.id);
    assert.ok(listed, 'the new key is listed');
    assert.equal(listed.key, undefined);
    const text = JSON.stringify(list.body);
    assert.ok(
      !text.includes(res.body.key) && !text.includes(res.body.key.slice(-43)),
      'the list shows no secret',
    );
    assert.ok(!text.includes(user.key.slice(-43)), "the list shows no secret of the caller's own key");
    assert.doesNotMatch(text, /hash/i);
  });

  it('mints agent keys with their own prefix, usable like user keys', async () => {
    const res = await mint(user.key, {
      kind: 'agent',
      description: 'coding agent',
      scopes: ['experiments:read', 'runs:read'],
    });
    assert.equal(res.status, 201);
    assert.match(res.body.key, /^sk_agent_/);
    const me = await t.as(res.body.key).get('/v1/me');
    assert.deepEqual(
      [me.body.id, me.body.auth.via, me.body.auth.scopes],
      [user.id, 'agent', ['experiments:read', 'runs:read']],
    );
    assert.equal(
      (await t.as(res.body.key).post('/experiments', { name: 'x' })).status,
      403,
      'no experiments:write',
    );
  });

  it('gives keys 90 days by default, or expires_in_days when asked', async () => {
    const byDefault = await mint(user.key, { scopes: ['experiments:read'] });
    assertExpiresInDays(byDefault.body.expires_at, 90);
    const explicit = await mint(user.key, { scopes: ['experiments:read'], expires_in_days: 3 });
    assert.equal(explicit.status, 201);
    assertExpiresInDays(explicit.body.expires_at, 3);
    assert.equal((await mint(user.key, { scopes: ['experiments:read'], expires_in_days: 0 })).status, 422);
  });

  it("caps a minted key's expiry at its minter's own", async () => {
    const minter = await mint(user.key, { scopes: ['api_keys:write', 'runs:read'], expires_in_days: 2 });
    assertExpiresInDays(minter.body.expires_at, 2);
    const long = await mint(minter.body.key, { scopes: ['runs:read'], expires_in_days: 3650 });
    assert.equal(long.status, 201, JSON.stringify(long.body));
    assert.equal(long.body.expires_at, minter.body.expires_at);
    const byDefault = await mint(minter.body.key, { scopes: ['runs:read'] });
    assert.equal(byDefault.body.expires_at, minter.body.expires_at, 'the 90-day default is capped too');
    const short = await mint(minter.body.key, { scopes: ['runs:read'], expires_in_days: 1 });
    assertExpiresInDays(short.body.expires_at, 1);
  });

  it('revokes the keys a revoked key minted, transitively, and no others', async () => {
    const scopes = ['api_keys:write', 'experiments:read'];
    const a = await mint(user.key, { scopes });
    const b = await mint(a.body.key, { kind: 'agent', scopes });
    const c = await mint(b.body.key, { scopes: ['experiments:read'] });
    const sibling = await mint(user.key, { scopes: ['experiments:read'] });
    const bChild = await mint(b.body.key, { scopes: ['experiments:read'] });
    for (const k of [a, b, c, sibling, bChild]) {
      assert.equal(k.status, 201, JSON.stringify(k.body));
      assert.equal((await t.as(k.body.key).get('/experiments')).status, 200, 'cached before the revocation');
    }
    const revoked = await t.as(user.key).delete(`/api-keys/${a.body.id}`);
    assert.deepEqual([revoked.status, revoked.body.id], [200, a.body.id]);
    for (const k of [a, b, c, bChild])
      assertCleanUnauthorized(await t.as(k.body.key).get('/experiments'), k.body.description);
    assert.equal((await t.as(sibling.body.key).get('/experiments')).status, 200, 'a sibling stays');
    assert.equal((await t.as(user.key).get('/experiments')).status, 200, 'the minter of the root stays');
    const listed = (await t.as(user.key).get('/api-keys')).body.items as { id: string; revoked_at: string }[];
    const revokedAt = (id: string) => listed.find((k) => k.id === id)?.revoked_at;
    for (const k of [a, b, c, bChild]) assert.notEqual(revokedAt(k.body.id), null);
    assert.equal(revokedAt(sibling.body.id), null);
  });

  it('lets a minted key revoke only itself and the keys minted from it; the user’s first key revokes any', async () => {
    const scopes = ['api_keys:write', 'experiments:read'];
    const parent = await mint(user.key, { scopes });
    const child = await mint(parent.body.key, { scopes });
    const grandchild = await mint(child.body.key, { scopes: ['experiments:read'] });
    const sibling = await mint(user.key, { scopes: ['experiments:read'] });
    for (const k of [parent, child, grandchild, sibling]) assert.equal(k.status, 201, JSON.stringify(k.body));
    const firstKeyId = (await t.as(user.key).get('/v1/me')).body.auth.key_id as string;

    for (const target of [parent.body.id, sibling.body.id, firstKeyId]) {
      const refused = await t.as(child.body.key).delete(`/api-keys/${target}`);
      assert.deepEqual([refused.status, refused.body.error?.code], [403, 'key_outside_lineage']);
    }
    for (const k of [parent, sibling]) assert.equal((await t.as(k.body.key).get('/v1/me')).status, 200);
    assert.equal((await t.as(user.key).get('/v1/me')).status, 200);

    const own = await t.as(child.body.key).delete(`/api-keys/${grandchild.body.id}`);
    assert.deepEqual([own.status, own.body.id], [200, grandchild.body.id], 'a key it minted');
    assertCleanUnauthorized(await t.as(grandchild.body.key).get('/v1/me'), 'the revoked grandchild');
    const itself = await t.as(child.body.key).delete(`/api-keys/${child.body.id}`);
    assert.deepEqual([itself.status, itself.body.id], [200, child.body.id], 'itself');

    // The user's first key stands for the user: it revokes any of their keys, minted from it or not.
    const fromParent = await mint(parent.body.key, { scopes: ['experiments:read'] });
    assert.equal((await t.as(user.key).delete(`/api-keys/${fromParent.body.id}`)).status, 200);
    assert.equal((await t.as(user.key).delete(`/api-keys/${sibling.body.id}`)).status, 200);
  });

  it('never gives a key a scope its minter lacks', async () => {
    const narrow = await mint(user.key, { scopes: ['experiments:read', 'api_keys:write'] });
    const escalation = await mint(narrow.body.key, { scopes: ['experiments:read', 'experiments:write'] });
    assert.equal(escalation.status, 403);
    assert.equal(escalation.body.error.code, 'scope_escalation');
    assert.match(escalation.body.error.message, /experiments:write/);
    assert.equal((await mint(narrow.body.key, { scopes: ['experiments:read'] })).status, 201);
    const admin = await mint(user.key, { scopes: ['admin'] });
    assert.equal(admin.status, 403, 'an ordinary user cannot mint an admin key');
    assert.equal(admin.body.error.code, 'scope_escalation');
  });

  it('refuses to mint, list or revoke with a key lacking api_keys:write (403)', async () => {
    const readOnly = await mint(user.key, { scopes: ['experiments:read'] });
    const res = await mint(readOnly.body.key, { scopes: ['experiments:read'] });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'insufficient_scope');
    assert.equal((await t.as(readOnly.body.key).get('/api-keys')).status, 403);
    assert.equal((await t.as(readOnly.body.key).delete(`/api-keys/${readOnly.body.id}`)).status, 403);
  });

  it('revokes a key: the same key answers 401 at once', async () => {
    const k = await mint(user.key, { scopes: ['experiments:read'] });
    assert.equal((await t.as(k.body.key).get('/v1/me')).status, 200, 'used once, so it sits in the cache');
    const revoked = await t.as(user.key).delete(`/api-keys/${k.body.id}`);
    assert.equal(revoked.status, 200);
    assert.notEqual(revoked.body.revoked_at, null);
    assertCleanUnauthorized(await t.as(k.body.key).get('/v1/me'), 'revoked key');
    const again = await t.as(user.key).delete(`/api-keys/${k.body.id}`);
    assert.equal(again.body.revoked_at, revoked.body.revoked_at, 'revoking twice keeps the first moment');
  });

  it('revokes at once even while requests with the key are in flight', async () => {
    // A check that read the key just before the revocation must not put it back in the cache.
    for (let round = 0; round < 10; round++) {
      const k = await mint(user.key, { scopes: ['experiments:read'] });
      const inFlight = Array.from({ length: 20 }, () => t.as(k.body.key).get('/v1/me'));
      const [revoked] = await Promise.all([t.as(user.key).delete(`/api-keys/${k.body.id}`), ...inFlight]);
      assert.equal(revoked.status, 200);
      assert.equal(
        (await t.as(k.body.key).get('/v1/me')).status,
        401,
        `round ${round}: the key still worked after DELETE answered`,
      );
    }
  });

  it('answers 404 when revoking a key of someone else, and leaves that key working', async () => {
    const other = await t.createUser();
    const res = await t
      .as(user.key)
      .delete(`/api-keys/${(await t.as(other.key).get('/v1/me')).body.auth.key_id}`);
    assert.equal(res.status, 404);
    assert.equal((await t.as(other.key).get('/v1/me')).status, 200);
    assert.equal((await t.as(user.key).delete('/api-keys/00000000-0000-4000-8000-000000000000')).status, 404);
  });

  it('refuses an expired key (401)', async () => {
    const k = await mint(user.key, { scopes: ['experiments:read'] });
    // The API cannot mint keys shorter than a day: move this one's expiry into the past to simulate time.
    await sql(t.databaseUrl!, `UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE id = $1`, [
      k.body.id,
    ]);
    assertCleanUnauthorized(await t.as(k.body.key).get('/v1/me'), 'expired key');
  });

  it('refuses malformed credentials with a clean 401 JSON body', async () => {
    const valid: string = user.key;
    const cases: [string, string | undefined][] = [
      ['no header', undefined],
      ['sk_user_short', 'Bearer sk_user_short'],
      ['user key presented as an agent key', `Bearer ${valid.replace(/^sk_user_/, 'sk_agent_')}`],
      ['user key presented as a worker key', `Bearer ${valid.replace(/^sk_user_/, 'sk_worker_')}`],
      ['right id, wrong secret', `Bearer ${valid.slice(0, -43)}${'A'.repeat(43)}`],
      ['unknown id', `Bearer sk_user_${'0'.repeat(32)}${valid.slice(-43)}`],
      ['garbage', 'Bearer !!not-a-token$$'],
      ['garbage JWT-looking', 'Bearer aaa.bbb.ccc'],
      ['empty bearer', 'Bearer '],
      ['Basic scheme', 'Basic xyz'],
      ['key without scheme', valid],
      ['10 KB token', `Bearer sk_user_${'a'.repeat(10 * 1024)}`],
    ];
    for (const [label, header] of cases) {
      const res = await t.request('GET', '/v1/me', {
        headers: header === undefined ? {} : { authorization: header },
      });
      assertCleanUnauthorized(res, label);
      assert.ok(res.headers['x-request-id'], `${label}: x-request-id header`);
    }
  });

  it('stores a hash of the secret, never the secret itself', async () => {
    const k = await mint(user.key, { scopes: ['experiments:read'] });
    const secret: string = k.body.key.slice(-43);
    const [row] = await sql<{ row: string; hash_len: number }>(
      t.databaseUrl!,
      `SELECT row_to_json(k)::text AS row, length(k.secret_hash) AS hash_len FROM api_keys k WHERE id = $1`,
      [k.body.id],
    );
    assert.ok(row, 'the key is stored');
    assert.ok(!row.row.includes(secret), 'no column holds the secret');
    assert.ok(!row.row.includes(Buffer.from(secret).toString('hex')), 'no column holds the secret as bytes');
    assert.ok(
      !row.row.includes(Buffer.from(secret, 'base64url').toString('hex')),
      'no column holds the decoded secret',
    );
    assert.equal(row.hash_len, 32);
  });
});

describe('API key lifetime setting', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ env: { ASSAY_API_KEY_TTL_DAYS: '7' } });
  });
  after(() => t.close());

  it('honours ASSAY_API_KEY_TTL_DAYS for the default lifetime', async () => {
    const { key } = await t.createUser();
    const res = await t.as(key).post('/api-keys', { description: 'ci', scopes: ['runs:read'] });
    assert.equal(res.status, 201);
    assertExpiresInDays(res.body.expires_at, 7);
  });
});

describe('API key revocation across replicas', () => {
  let primary: TestService;
  let replica: TestService;
  before(async () => {
    primary = await startTestService();
    replica = await startTestService({ replicaOf: primary });
  });
  after(async () => {
    await replica.close();
    await primary.close();
  });

  it('a key minted through one revoked on another replica a moment ago is born revoked', async () => {
    // A replica that misses the revocation notice (it LISTENs on another database) and re-checks its cache
    // rarely: it still lets the revoked minter in, the worst case for the lineage.
    const elsewhere = await createTestDatabase();
    const lagging = await startTestService({
      replicaOf: primary,
      env: { ASSAY_DATABASE_LISTEN_URL: elsewhere.url, ASSAY_AUTH_RECHECK_S: '3600' },
    });
    try {
      await eventually(() => listensForRevocations(lagging), 10_000, 'the lagging replica listens');
      const { key: owner } = await primary.createUser();
      const minter = await primary
        .as(owner)
        .post('/api-keys', { description: 'minter', scopes: ['api_keys:write', 'experiments:read'] });
      assert.equal((await lagging.as(minter.body.key).get('/v1/me')).status, 200);
      assert.equal((await primary.as(owner).delete(`/api-keys/${minter.body.id}`)).status, 200);
      const child = await lagging
        .as(minter.body.key)
        .post('/api-keys', { description: 'child', scopes: ['experiments:read'] });
      assert.equal(child.status, 201, 'the lagging replica still lets the minter in');
      assert.notEqual(child.body.revoked_at, null);
      assert.equal((await primary.as(child.body.key).get('/experiments')).status, 401);
    } finally {
      await lagging.close();
      await elsewhere.drop();
    }
  });

  it('a key revoked on one replica answers 401 on another within 5 seconds', async (ctx) => {
    const { key: owner } = await primary.createUser();
    const k = await primary
      .as(owner)
      .post('/api-keys', { description: 'shared', scopes: ['experiments:read'] });
    assert.equal(k.status, 201);
    // Warm the replica's cache just before revoking: the worst case for propagation.
    assert.equal((await replica.as(k.body.key).get('/v1/me')).status, 200);
    assert.equal((await primary.as(owner).delete(`/api-keys/${k.body.id}`)).status, 200);
    const revokedAt = performance.now();
    assert.equal(
      (await primary.as(k.body.key).get('/v1/me')).status,
      401,
      'at once on the replica that revoked',
    );
    let status = 200;
    while (status !== 401 && performance.now() - revokedAt < 10_000) {
      status = (await replica.as(k.body.key).get('/v1/me')).status;
      if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const latencyMs = performance.now() - revokedAt;
    ctx.diagnostic(`revocation reached the other replica after ${Math.round(latencyMs)} ms`);
    assert.equal(status, 401);
    assert.ok(latencyMs < 5000, `revocation took ${Math.round(latencyMs)} ms to reach the other replica`);
  });
});
