import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  base64url,
  exportJWK,
  exportSPKI,
  generateKeyPair,
  SignJWT,
  type CryptoKey,
  type JWTPayload,
} from 'jose';
import { startTestService, type TestService } from '../support/service.ts';

const ISSUER = 'https://idp.example.test/';
const AUDIENCE = 'assay-api';
const KID = 'test-key-1';

interface Signer {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  jwks: { keys: object[] };
}

async function newSigner(): Promise<Signer> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  return {
    privateKey,
    publicKey,
    jwks: { keys: [{ ...(await exportJWK(publicKey)), kid: KID, alg: 'RS256', use: 'sig' }] },
  };
}

const now = () => Math.floor(Date.now() / 1000);

/** An RS256 access token; `claims` override the defaults (set one to undefined to drop it). */
async function token(key: CryptoKey, claims: JWTPayload = {}): Promise<string> {
  const payload: JWTPayload = {
    iss: ISSUER,
    aud: AUDIENCE,
    sub: `user-${randomUUID()}`,
    iat: now(),
    exp: now() + 600,
    jti: randomUUID(),
    ...claims,
  };
  for (const [k, v] of Object.entries(payload)) if (v === undefined) delete payload[k];
  return new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: KID, typ: 'JWT' }).sign(key);
}

function unsigned(claims: JWTPayload): string {
  const part = (o: object) => base64url.encode(JSON.stringify(o));
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ iss: ISSUER, aud: AUDIENCE, iat: now(), exp: now() + 600, ...claims })}.`;
}

describe('identity-provider JWTs (JWKS file)', () => {
  let t: TestService;
  let good: Signer;
  let other: Signer;
  let dir: string;
  before(async () => {
    [good, other] = await Promise.all([newSigner(), newSigner()]);
    dir = await mkdtemp(path.join(tmpdir(), 'assay-jwks-'));
    const jwksFile = path.join(dir, 'jwks.json');
    await writeFile(jwksFile, JSON.stringify(good.jwks));
    t = await startTestService({
      env: { ASSAY_JWT_ISSUER: ISSUER, ASSAY_JWT_AUDIENCE: AUDIENCE, ASSAY_JWT_JWKS_FILE: jwksFile },
    });
  });
  after(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('accepts a good RS256 token and creates the user on first sight, once per subject', async () => {
    const sub = `alice-${randomUUID()}`;
    const first = await t.as(await token(good.privateKey, { sub, name: 'Alice' })).get('/v1/me');
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.name, 'Alice');
    assert.equal(first.body.is_admin, false);
    assert.equal(first.body.auth.via, 'jwt');
    assert.equal(first.body.auth.key_id, null);
    assert.ok(!first.body.auth.scopes.includes('admin'));
    const second = await t.as(await token(good.privateKey, { sub })).get('/v1/me');
    assert.equal(second.status, 200);
    assert.equal(second.body.id, first.body.id, 'the same subject is the same user');
    const stranger = await t.as(await token(good.privateKey)).get('/v1/me');
    assert.notEqual(stranger.body.id, first.body.id, 'another subject is another user');
  });

  it('creates one user when a new subject arrives on concurrent requests', async () => {
    const sub = `carol-${randomUUID()}`;
    const tokens = await Promise.all(
      Array.from({ length: 8 }, () =>
        token(good.privateKey, { sub, email: `${sub}@example.test`, email_verified: true }),
      ),
    );
    const answers = await Promise.all(tokens.map((jwt) => t.as(jwt).get('/v1/me')));
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(8).fill(200),
    );
    assert.equal(new Set(answers.map((a) => a.body.id)).size, 1);
  });

  it('links an existing account by email only when the provider says the email is verified', async () => {
    const existing = await t.createUser();
    const unverified = await t
      .as(await token(good.privateKey, { email: existing.email, email_verified: false }))
      .get('/v1/me');
    assert.equal(unverified.status, 200);
    assert.notEqual(
      unverified.body.id,
      existing.id,
      'an unverified email claim does not take over an account',
    );
    assert.equal(unverified.body.email, null);
    const verified = await t
      .as(await token(good.privateKey, { email: existing.email, email_verified: true }))
      .get('/v1/me');
    assert.equal(verified.body.id, existing.id);
  });

  it('bootstraps: a JWT mints an API key for the same user', async () => {
    const jwt = await token(good.privateKey, { sub: `bob-${randomUUID()}` });
    const me = await t.as(jwt).get('/v1/me');
    const minted = await t.as(jwt).post('/api-keys', {
      description: 'from my laptop',
      scopes: ['experiments:read', 'experiments:write'],
    });
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    assert.match(minted.body.key, /^sk_user_/);
    const viaKey = await t.as(minted.body.key).get('/v1/me');
    assert.equal(viaKey.status, 200);
    assert.equal(viaKey.body.id, me.body.id);
    assert.deepEqual(viaKey.body.auth.scopes, ['experiments:read', 'experiments:write']);
    const created = await t.as(minted.body.key).post('/experiments', { name: 'from a minted key' });
    assert.equal(created.status, 201);
    assert.equal(
      (await t.as(jwt).get(`/experiments/${created.body.id}`)).status,
      200,
      'the JWT and the key are the same user',
    );
  });

  it('refuses forged, misdirected, stale and unsigned tokens with 401', async () => {
    const pem = await exportSPKI(good.publicKey);
    const hmac = (secret: Uint8Array) =>
      new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: 'mallory', exp: now() + 600 })
        .setProtectedHeader({ alg: 'HS256', kid: KID, typ: 'JWT' })
        .sign(secret);
    const cases: [string, string][] = [
      ['signed by another key (same kid)', await token(other.privateKey)],
      ['wrong issuer', await token(good.privateKey, { iss: 'https://evil.example.test/' })],
      ['wrong audience', await token(good.privateKey, { aud: 'another-api' })],
      ['expired', await token(good.privateKey, { iat: now() - 3600, exp: now() - 60 })],
      ['no exp (it would never expire)', await token(good.privateKey, { exp: undefined })],
      ['not yet valid (nbf in the future)', await token(good.privateKey, { nbf: now() + 600 })],
      ['alg none', unsigned({ sub: 'mallory' })],
      [
        'alg none, signature kept',
        `${unsigned({ sub: 'mallory' })}${(await token(good.privateKey)).split('.')[2]}`,
      ],
      ['HS256 keyed with the public key PEM', await hmac(new TextEncoder().encode(pem))],
      [
        'HS256 keyed with the public JWK',
        await hmac(new TextEncoder().encode(JSON.stringify(good.jwks.keys[0]))),
      ],
      ['no sub', await token(good.privateKey, { sub: undefined })],
      ['empty sub', await token(good.privateKey, { sub: '' })],
      [
        'tampered payload',
        (await token(good.privateKey)).replace(
          /\.[^.]+\./,
          `.${base64url.encode(JSON.stringify({ iss: ISSUER, aud: AUDIENCE, sub: 'admin', exp: now() + 600 }))}.`,
        ),
      ],
    ];
    for (const [label, jwt] of cases) {
      const res = await t.as(jwt).get('/v1/me');
      assert.equal(res.status, 401, `${label}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'unauthenticated', label);
      assert.equal(
        (await t.as(jwt).post('/api-keys', { description: 'x', scopes: ['experiments:read'] })).status,
        401,
        `${label}: cannot mint`,
      );
    }
  });
});

describe('identity-provider JWTs (JWKS URL)', () => {
  let t: TestService;
  let signer: Signer;
  let jwksServer: Server;
  let fetches = 0;
  before(async () => {
    signer = await newSigner();
    jwksServer = createServer((req, res) => {
      fetches++;
      if (req.url !== '/.well-known/jwks.json') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(signer.jwks));
    });
    await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
    const { port } = jwksServer.address() as AddressInfo;
    t = await startTestService({
      env: {
        ASSAY_JWT_ISSUER: ISSUER,
        ASSAY_JWT_AUDIENCE: AUDIENCE,
        ASSAY_JWT_JWKS_URL: `http://127.0.0.1:${port}/.well-known/jwks.json`,
      },
    });
  });
  after(async () => {
    await t.close();
    await new Promise((resolve) => jwksServer.close(resolve));
  });

  it('verifies tokens against keys fetched from the JWKS URL', async () => {
    const res = await t.as(await token(signer.privateKey)).get('/v1/me');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.auth.via, 'jwt');
    assert.ok(fetches >= 1, 'the service fetched the JWKS');
    assert.equal(
      (await t.as(await token((await newSigner()).privateKey)).get('/v1/me')).status,
      401,
      'a key outside the set is refused',
    );
  });
});

describe('identity-provider JWTs when the server has no JWT config', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.close());

  it('refuses every JWT with 401', async () => {
    const res = await t.as(await token((await newSigner()).privateKey)).get('/v1/me');
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 'unauthenticated');
  });
});
