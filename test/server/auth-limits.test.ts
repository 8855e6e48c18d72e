import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startTestService, type TestService } from '../support/service.ts';

const LIMIT = 5;

/** A well-formed user key that names no stored key. */
const unknownKey = () =>
  `sk_user_${randomUUID().replaceAll('-', '')}${randomBytes(32).toString('base64url')}`;

describe('refused API keys and the failed-authentication limit', () => {
  let t: TestService;
  let user: { id: string; key: string };

  /** GET with a bearer token, as seen from `address`. */
  async function getFrom(address: string, key: string, url = '/experiments') {
    const res = await t.service.app.inject({
      method: 'GET',
      url,
      remoteAddress: address,
      headers: { authorization: `Bearer ${key}` },
    });
    return { status: res.statusCode, headers: res.headers, body: res.json() };
  }
  async function counter(name: string): Promise<number> {
    const text = (await t.request('GET', '/metrics')).body as string;
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    assert.ok(line, `/metrics has ${name}`);
    return Number(line.split(' ')[1]);
  }
  const lookups = () => counter('assay_auth_key_lookups_total');

  before(async () => {
    // A long cache TTL keeps the timing out of the assertions: entries cannot lapse mid-test.
    t = await startTestService({
      env: { ASSAY_AUTH_FAILURE_LIMIT: String(LIMIT), ASSAY_AUTH_CACHE_S: '60' },
    });
    user = await t.createUser();
  });
  after(() => t.close());

  it('reads an unknown key from the database once, however often it is presented', async () => {
    const key = unknownKey();
    const before = await lookups();
    for (let i = 0; i < LIMIT - 1; i++) assert.equal((await getFrom('10.0.1.1', key)).status, 401);
    assert.equal((await lookups()) - before, 1);
  });

  it('reads a revoked key once after its revocation, then refuses it from memory', async () => {
    const minted = await t
      .as(user.key)
      .post('/api-keys', { description: 'soon gone', scopes: ['runs:read'] });
    assert.equal(minted.status, 201);
    assert.equal((await getFrom('10.0.2.1', minted.body.key, '/v1/me')).status, 200);
    assert.equal((await t.as(user.key).delete(`/api-keys/${minted.body.id}`)).status, 200);
    const before = await lookups();
    for (let i = 0; i < LIMIT - 1; i++)
      assert.equal((await getFrom('10.0.2.1', minted.body.key, '/v1/me')).status, 401);
    assert.equal((await lookups()) - before, 1);
  });

  it('lets a key minted right after a burst of refused ones work at once', async () => {
    for (let i = 0; i < LIMIT - 2; i++) assert.equal((await getFrom('10.0.3.1', unknownKey())).status, 401);
    const minted = await t
      .as(user.key)
      .post('/api-keys', { description: 'new', scopes: ['experiments:read'] });
    assert.equal((await getFrom('10.0.3.1', minted.body.key)).status, 200);
  });

  it('answers 429 with Retry-After once an address failed too often; other addresses and verified keys go on', async () => {
    const bad = '10.0.4.1';
    assert.equal((await getFrom(bad, user.key)).status, 200, 'verified (and cached) before the failures');
    for (let i = 0; i < LIMIT; i++) assert.equal((await getFrom(bad, unknownKey())).status, 401);
    const limitedBefore = await counter('assay_auth_rate_limited_total');
    const lookupsBefore = await lookups();
    const refused = await getFrom(bad, unknownKey());
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'too_many_auth_failures');
    const retryAfter = Number(refused.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${refused.headers['retry-after']}`);
    const fresh = await t
      .as(user.key)
      .post('/api-keys', { description: 'fresh', scopes: ['experiments:read'] });
    assert.equal((await getFrom(bad, fresh.body.key)).status, 429, 'an unverified key waits too');
    assert.equal((await lookups()) - lookupsBefore, 0, 'a limited address costs no database read');
    assert.equal((await counter('assay_auth_rate_limited_total')) - limitedBefore, 2);
    assert.equal((await getFrom(bad, user.key)).status, 200, 'a key verified moments ago still works');
    assert.equal((await getFrom('10.0.4.2', fresh.body.key)).status, 200, 'another address is not limited');
    assert.equal((await getFrom('10.0.4.2', unknownKey())).status, 401);
  });

  it('counts refused exchange tokens like refused keys: past the limit the address gets 429 everywhere', async () => {
    const bad = '10.0.6.1';
    /** A well-formed exchange token that names no stored token (a guess at one). */
    const forged = () =>
      `sk_exchange_${randomUUID().replaceAll('-', '')}${randomBytes(32).toString('base64url')}`;
    const exchangeFrom = async (address: string, token: string) => {
      const res = await t.service.app.inject({
        method: 'POST',
        url: '/worker-keys/exchange',
        remoteAddress: address,
        headers: { authorization: `Bearer ${token}` },
      });
      return { status: res.statusCode, body: res.json() };
    };
    for (let i = 0; i < LIMIT; i++) assert.equal((await exchangeFrom(bad, forged())).status, 401);
    const limited = await exchangeFrom(bad, forged());
    assert.deepEqual([limited.status, limited.body.error.code], [429, 'too_many_auth_failures']);
    assert.equal((await getFrom(bad, unknownKey())).status, 429, 'the address is limited for keys too');
    assert.equal((await exchangeFrom('10.0.6.2', forged())).status, 401, 'another address is not limited');

    // And the other way round: refused keys count toward the exchange endpoint's limit.
    const keyGuesser = '10.0.6.3';
    for (let i = 0; i < LIMIT; i++) assert.equal((await getFrom(keyGuesser, unknownKey())).status, 401);
    assert.equal((await exchangeFrom(keyGuesser, forged())).status, 429);
  });

  it('never limits valid keys, however many requests one address makes', async () => {
    const keys = [user.key];
    for (let i = 0; i < 3 * LIMIT; i++) {
      const minted = await t.as(user.key).post('/api-keys', { description: `k${i}`, scopes: ['runs:read'] });
      keys.push(minted.body.key);
    }
    for (const key of keys) assert.equal((await getFrom('10.0.5.1', key, '/v1/me')).status, 200);
  });

  it('documents 429 on every operation that may answer 401', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
    };
    let checked = 0;
    for (const [path, methods] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(methods)) {
        if (!op.responses?.['401']) continue;
        assert.ok(op.responses['429'], `${method.toUpperCase()} ${path} documents 429`);
        checked++;
      }
    assert.ok(checked > 20, `${checked} operations checked`);
  });
});

describe('/metrics behind ASSAY_METRICS_SCOPE', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ env: { ASSAY_METRICS_SCOPE: 'admin' } });
  });
  after(() => t.close());

  it('answers 401 without a token, 403 without the scope, and the metrics with it', async () => {
    assert.equal((await t.request('GET', '/metrics')).status, 401);
    const user = await t.createUser();
    const refused = await t.as(user.key).get('/metrics');
    assert.deepEqual([refused.status, refused.body.error.code], [403, 'insufficient_scope']);
    const res = await t.as(t.adminKey).get('/metrics');
    assert.equal(res.status, 200);
    assert.match(String(res.body), /assay_http_request_duration_seconds/);
  });
});
