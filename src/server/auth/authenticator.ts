import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { Counter, type Registry } from 'prom-client';
import type { ServiceConfig } from '../config.ts';
import type { Db } from '../db/database.ts';
import { AppError, tooManyRequests, unauthorized } from '../http/errors.ts';
import { looksLikeApiKey, parseToken, secretMatches } from './api-key-token.ts';
import { createFailureLimit } from './auth-failure-limit.ts';
import { findKeyForAuth, touchKey, userForSubject } from './credential-repository.ts';
import { createJwtVerifier, type JwtVerifier } from './jwt-verifier.ts';
import type { Principal } from './principal.ts';
import type { Scope } from '@assay/contract';
import { scopesOfUser } from './scopes.ts';

export interface Authenticator {
  /** `address` is the caller's IP: too many failed authentications from it answer 429 for a while. */
  authenticate(token: string, address: string): Promise<Principal>;
  /** Drops a revoked key from this replica's cache at once; other replicas see it when their entry expires. */
  forgetKey(keyId: string): void;
}

/**
 * Resolves bearer tokens to principals. Verified tokens are cached (LRU, short TTL) so the hot paths
 * (heartbeats) skip the database; the TTL bounds how late another replica notices a revocation. Refused API keys
 * are cached as briefly, so a client retrying a bad key costs one database read, not one per attempt.
 */
export function createAuthenticator(
  config: ServiceConfig,
  db: Db,
  log: { warn(o: object, m: string): void },
  registry?: Registry,
): Authenticator {
  const ttl = Math.max(config.authCacheTtlMs, 1);
  const cache = new LRUCache<string, Principal>({ max: config.authCacheMaxEntries, ttl });
  // Keys revoked here lately: a check that read the key before the revocation must not cache it (or pass) afterwards.
  const revoked = new LRUCache<string, true>({ max: config.authCacheMaxEntries, ttl });
  // Keyed by the whole token's hash, so an entry only ever refuses that exact string: a newly minted key carries
  // a fresh 256-bit secret no one can have presented before, and so is never refused by an entry made earlier.
  const refused = new LRUCache<string, AppError>({ max: config.authCacheMaxEntries, ttl });
  const failures = createFailureLimit({
    maxFailures: config.authFailureLimit,
    windowMs: 60_000,
    maxAddresses: config.authCacheMaxEntries,
  });
  const keyLookups = new Counter({
    name: 'assay_auth_key_lookups_total',
    help: 'API keys read from the database to authenticate a request (cache misses)',
    registers: registry ? [registry] : [],
  });
  const limited = new Counter({
    name: 'assay_auth_rate_limited_total',
    help: 'Requests refused (429) because their address failed to authenticate too often',
    registers: registry ? [registry] : [],
  });
  const verifyJwt: JwtVerifier | undefined = config.jwt ? createJwtVerifier(config.jwt) : undefined;

  async function fromApiKey(token: string): Promise<Principal> {
    const parsed = parseToken(token);
    if (!parsed) throw unauthorized('malformed API key');
    if (parsed.kind === 'exchange')
      throw unauthorized(
        'an exchange token is no API key: it only buys a worker key, at POST /worker-keys/exchange',
      );
    keyLookups.inc();
    const key = await findKeyForAuth(db, parsed.id, config.workerKeyGraceMs);
    if (!key || key.kind !== parsed.kind || !secretMatches(parsed.secret, key.secret_hash))
      throw unauthorized('invalid API key');
    if (key.revoked) throw unauthorized('API key revoked');
    if (key.expired) throw unauthorized('API key expired');
    if (key.run_ended_long_ago) throw unauthorized('worker key expired: its run ended');
    touchKey(db, key.id).catch((err: unknown) => log.warn({ err }, 'could not record key use'));
    const held = new Set(scopesOfUser(key.user_id, key.is_admin));
    return {
      userId: key.user_id,
      via: key.kind,
      keyId: key.id,
      scopes: new Set(key.scopes.filter((s): s is Scope => held.has(s as Scope))),
      isAdmin: key.is_admin && key.scopes.includes('admin'),
      runId: key.run_id,
    };
  }

  async function fromJwt(token: string): Promise<{ principal: Principal; expiresAtMs: number }> {
    if (!verifyJwt) throw unauthorized('identity-provider tokens are not enabled on this server');
    let claims;
    try {
      claims = await verifyJwt(token);
    } catch {
      throw unauthorized('invalid access token');
    }
    const user = await userForSubject(db, {
      issuer: String(claims.iss),
      subject: claims.sub,
      email: typeof claims.email === 'string' ? claims.email : undefined,
      emailVerified: claims.email_verified === true,
      name: typeof claims.name === 'string' ? claims.name : undefined,
    });
    const principal: Principal = {
      userId: user.id,
      via: 'jwt',
      keyId: null,
      scopes: new Set(scopesOfUser(user.id, user.is_admin)),
      isAdmin: user.is_admin,
      runId: null,
    };
    return { principal, expiresAtMs: typeof claims.exp === 'number' ? claims.exp * 1000 : Date.now() };
  }

  async function verify(token: string, cacheKey: string): Promise<Principal> {
    if (looksLikeApiKey(token)) {
      const known = refused.get(cacheKey);
      if (known) throw known;
      try {
        const principal = await fromApiKey(token);
        if (principal.keyId && revoked.has(principal.keyId)) throw unauthorized('API key revoked');
        cache.set(cacheKey, principal);
        return principal;
      } catch (err) {
        // A refusal is final (unknown, revoked and expired keys stay so); a database error is not cached.
        if (err instanceof AppError && err.statusCode === 401) refused.set(cacheKey, err);
        throw err;
      }
    }
    const { principal, expiresAtMs } = await fromJwt(token);
    const jwtTtl = Math.min(config.authCacheTtlMs, expiresAtMs - Date.now());
    if (jwtTtl > 0) cache.set(cacheKey, principal, { ttl: jwtTtl });
    return principal;
  }

  return {
    async authenticate(token, address) {
      const cacheKey = createHash('sha256').update(token).digest('base64url');
      // A token verified moments ago passes even from a limited address: behind a proxy many clients share one.
      const cached = cache.get(cacheKey);
      if (cached) return cached;
      const wait = failures.retryAfterSeconds(address);
      if (wait !== undefined) {
        limited.inc();
        throw tooManyRequests(
          'too_many_auth_failures',
          `too many failed authentications from this address; retry in ${wait} s`,
          wait,
        );
      }
      try {
        return await verify(token, cacheKey);
      } catch (err) {
        if (err instanceof AppError && err.statusCode === 401) failures.recordFailure(address);
        throw err;
      }
    },
    forgetKey(keyId) {
      revoked.set(keyId, true);
      // A refused entry never names a key that works, so revocations leave that cache alone.
      for (const [k, p] of cache.entries()) if (p.keyId === keyId) cache.delete(k);
    },
  };
}
