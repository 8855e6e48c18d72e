import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { ServiceConfig } from '../config.ts';
import type { Db } from '../db/database.ts';
import { unauthorized } from '../http/errors.ts';
import { looksLikeApiKey, parseToken, secretMatches } from './api-key-token.ts';
import { findKeyForAuth, touchKey, userForSubject } from './credential-repository.ts';
import { createJwtVerifier, type JwtVerifier } from './jwt-verifier.ts';
import type { Principal } from './principal.ts';
import { scopesOfUser, type Scope } from './scopes.ts';

export interface Authenticator {
  authenticate(token: string): Promise<Principal>;
  /** Drops a revoked key from this replica's cache at once; other replicas see it when their entry expires. */
  forgetKey(keyId: string): void;
}

/**
 * Resolves bearer tokens to principals. Verified tokens are cached (LRU, short TTL) so the hot paths
 * (heartbeats) skip the database; the TTL bounds how late another replica notices a revocation.
 */
export function createAuthenticator(
  config: ServiceConfig,
  db: Db,
  log: { warn(o: object, m: string): void },
): Authenticator {
  const cache = new LRUCache<string, Principal>({
    max: config.authCacheMaxEntries,
    ttl: Math.max(config.authCacheTtlMs, 1),
  });
  // Keys revoked here lately: a check that read the key before the revocation must not cache it (or pass) afterwards.
  const revoked = new LRUCache<string, true>({
    max: config.authCacheMaxEntries,
    ttl: Math.max(config.authCacheTtlMs, 1),
  });
  const verifyJwt: JwtVerifier | undefined = config.jwt ? createJwtVerifier(config.jwt) : undefined;

  async function fromApiKey(token: string): Promise<Principal> {
    const parsed = parseToken(token);
    if (!parsed) throw unauthorized('malformed API key');
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

  return {
    async authenticate(token) {
      const cacheKey = createHash('sha256').update(token).digest('base64url');
      const cached = cache.get(cacheKey);
      if (cached) return cached;
      if (looksLikeApiKey(token)) {
        const principal = await fromApiKey(token);
        if (principal.keyId && revoked.has(principal.keyId)) throw unauthorized('API key revoked');
        cache.set(cacheKey, principal);
        return principal;
      }
      const { principal, expiresAtMs } = await fromJwt(token);
      const ttl = Math.min(config.authCacheTtlMs, expiresAtMs - Date.now());
      if (ttl > 0) cache.set(cacheKey, principal, { ttl });
      return principal;
    },
    forgetKey(keyId) {
      revoked.set(keyId, true);
      for (const [k, p] of cache.entries()) if (p.keyId === keyId) cache.delete(k);
    },
  };
}
