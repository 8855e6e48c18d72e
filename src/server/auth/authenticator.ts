import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ServiceConfig } from '../config.ts';
import type { Db } from '../db/database.ts';
import { AppError, tooManyRequests, unauthorized } from '../http/errors.ts';
import { looksLikeApiKey, parseToken, secretMatches } from './api-key-token.ts';
import { createFailureLimit } from './auth-failure-limit.ts';
import { sharedAcrossWorkers } from './shared-failure-limit.ts';
import {
  findKeyForAuth,
  findLiveKeyIds,
  KEY_CHANGES_CHANNEL,
  touchKey,
  userForSubject,
} from './credential-repository.ts';
import { createJwtVerifier, type JwtVerifier } from './jwt-verifier.ts';
import type { Principal } from './principal.ts';
import type { Scope } from '@assay/contract';
import { scopesOfUser } from './scopes.ts';

export interface Authenticator {
  /** `address` is the caller's IP: too many failed authentications from it answer 429 for a while. */
  authenticate(token: string, address: string): Promise<Principal>;
  /**
   * Runs a check of another credential (a one-time exchange token) under the same failure limit: a limited
   * address answers 429 before it runs, and a 401 it throws counts as a failed authentication.
   */
  guarded<T>(address: string, check: () => Promise<T>): Promise<T>;
  /** Drops a key from this replica's cache at once; every replica also hears of it through the database. */
  forgetKey(keyId: string): void;
  /** Stops listening for key changes and re-checking the cache (before the database closes). */
  close(): Promise<void>;
}

/**
 * Refusals are cached this long at most: a pre-shared key one replica stores may reach another replica first.
 */
const REFUSAL_TTL_MS = 30_000;

/**
 * Resolves bearer tokens to principals. Verified tokens are cached (LRU) for minutes, so the hot paths (a
 * runner's heartbeat every 30 s) skip the database. That is safe because nothing that stops a key from
 * working goes unheard: a database trigger announces every revocation, expiry change, deletion or admin-flag
 * change on a LISTEN/NOTIFY channel when it commits, and each replica drops the entries it names. An entry
 * never outlives its key's expiry, nor a worker key's grace after its run ended. While the LISTEN session is
 * down nothing is cached (every request reads its key), and the cache is emptied when it comes back, since
 * notices sent in between are lost. Every ASSAY_AUTH_RECHECK_S the cached keys are re-read in one query,
 * bounding how long an entry could outlive its key should a notice go missing without the session noticing.
 * Refused API keys are cached briefly, so a client retrying a bad key costs one database read, not one
 * per attempt.
 */
export function createAuthenticator(
  config: ServiceConfig,
  db: Db,
  log: { warn(o: object, m: string): void; info(o: object, m: string): void },
  registry?: Registry,
): Authenticator {
  const ttl = Math.max(config.authCacheTtlMs, 1);
  const max = config.authCacheMaxEntries;
  // The cache entry of each cached key (a key has one secret, so one token), to drop it by key id.
  const entryOfKey = new Map<string, string>();
  const cache = new LRUCache<string, Principal>({
    max,
    ttl,
    dispose: (principal, cacheKey) => {
      if (principal.keyId && entryOfKey.get(principal.keyId) === cacheKey) entryOfKey.delete(principal.keyId);
    },
  });
  // Keyed by the whole token's hash, so an entry only ever refuses that exact string: a newly minted key
  // carries a fresh 256-bit secret no one can have presented before, and so is never refused by an entry
  // made earlier.
  const refused = new LRUCache<string, AppError>({ max, ttl: Math.min(ttl, REFUSAL_TTL_MS) });
  // Every key change and cache flush gets the next number; a check that began before the change to its key
  // (or a flush) read the key before it, so it answers but caches nothing.
  let changes = 0;
  let flushedAt = 0;
  const changedAt = new LRUCache<string, number>({ max });
  let listening = false;
  let warnedLost = false;

  const failures = sharedAcrossWorkers(
    createFailureLimit({ maxFailures: config.authFailureLimit, windowMs: 60_000, maxAddresses: max }),
  );
  const registers = registry ? [registry] : [];
  const keyLookups = new Counter({
    name: 'assay_auth_key_lookups_total',
    help: 'API keys read from the database to authenticate a request (cache misses)',
    registers,
  });
  const limited = new Counter({
    name: 'assay_auth_rate_limited_total',
    help: 'Requests refused (429) because their address failed to authenticate too often',
    registers,
  });
  const listenerUp = new Gauge({
    name: 'assay_auth_listener_up',
    help: 'Whether this replica listens for key revocations (1); while 0 it caches no verified token',
    // Across the HTTP workers of one server the lowest counts: 0 when any of them is not listening.
    aggregator: 'min',
    registers,
  });
  const verifyJwt: JwtVerifier | undefined = config.jwt ? createJwtVerifier(config.jwt) : undefined;

  function forgetKey(keyId: string): void {
    changedAt.set(keyId, ++changes);
    const entry = entryOfKey.get(keyId);
    if (entry) cache.delete(entry);
  }

  function flush(): void {
    flushedAt = ++changes;
    cache.clear();
  }

  /** Whether what a check that began at change number `seen` read may be cached. */
  function cacheable(seen: number, keyId: string | null): boolean {
    if (!listening || flushedAt > seen || changes - seen >= max) return false;
    return keyId === null || (changedAt.get(keyId) ?? 0) <= seen;
  }

  const listener = db.listen(KEY_CHANGES_CHANNEL, {
    onNotify(payload) {
      if (payload === '*') flush();
      else for (const keyId of payload.split(',')) if (keyId) forgetKey(keyId);
    },
    onListening() {
      flush();
      listening = true;
      listenerUp.set(1);
      if (warnedLost) log.info({}, 'listening for key revocations again; the auth cache was emptied');
      warnedLost = false;
    },
    onLost(err) {
      listening = false;
      flush();
      listenerUp.set(0);
      if (!warnedLost)
        log.warn(
          { err },
          'not listening for key revocations: every request reads its key until it reconnects',
        );
      warnedLost = true;
    },
  });

  let rechecking: Promise<void> | undefined;
  async function recheck(): Promise<void> {
    const ids = [...entryOfKey.keys()];
    if (ids.length === 0) return;
    try {
      const live = await findLiveKeyIds(db, ids);
      for (const id of ids) if (!live.has(id)) forgetKey(id);
    } catch (err) {
      log.warn({ err }, 'could not re-check the cached keys');
    }
  }
  const recheckTimer = setInterval(() => {
    rechecking ??= recheck().finally(() => (rechecking = undefined));
  }, config.authRecheckMs);
  recheckTimer.unref();

  async function fromApiKey(token: string): Promise<{ principal: Principal; ttlMs: number }> {
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
    const principal: Principal = {
      userId: key.user_id,
      via: key.kind,
      keyId: key.id,
      scopes: new Set(key.scopes.filter((s): s is Scope => held.has(s as Scope))),
      isAdmin: key.is_admin && key.scopes.includes('admin'),
      runId: key.run_id,
    };
    // A worker key of a run still going may see the run end right after this read: its entry must then lapse
    // within the grace, so it is cached no longer than the grace; after the end, no longer than what is left.
    const graceMs = key.kind === 'worker' ? (key.grace_left_ms ?? config.workerKeyGraceMs) : Infinity;
    return { principal, ttlMs: Math.min(ttl, key.expires_in_ms ?? Infinity, graceMs) };
  }

  async function fromJwt(token: string): Promise<{ principal: Principal; ttlMs: number }> {
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
    const expiresAtMs = typeof claims.exp === 'number' ? claims.exp * 1000 : Date.now();
    return { principal, ttlMs: Math.min(ttl, expiresAtMs - Date.now()) };
  }

  async function verify(token: string, cacheKey: string): Promise<Principal> {
    const seen = changes;
    if (looksLikeApiKey(token)) {
      const known = refused.get(cacheKey);
      if (known) throw known;
      const keyId = parseToken(token)?.id ?? null;
      try {
        const { principal, ttlMs } = await fromApiKey(token);
        if (ttlMs >= 1 && cacheable(seen, keyId)) {
          cache.set(cacheKey, principal, { ttl: ttlMs });
          entryOfKey.set(keyId!, cacheKey);
        }
        return principal;
      } catch (err) {
        // A refusal is final (unknown, revoked and expired keys stay so); a database error is not cached.
        if (err instanceof AppError && err.statusCode === 401) refused.set(cacheKey, err);
        throw err;
      }
    }
    const { principal, ttlMs } = await fromJwt(token);
    if (ttlMs >= 1 && cacheable(seen, null)) cache.set(cacheKey, principal, { ttl: ttlMs });
    return principal;
  }

  async function guarded<T>(address: string, check: () => Promise<T>): Promise<T> {
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
      return await check();
    } catch (err) {
      if (err instanceof AppError && err.statusCode === 401) failures.recordFailure(address);
      throw err;
    }
  }

  return {
    async authenticate(token, address) {
      const cacheKey = createHash('sha256').update(token).digest('base64url');
      // A token verified moments ago passes even from a limited address: behind a proxy many clients
      // share one.
      const cached = cache.get(cacheKey);
      if (cached) return cached;
      return guarded(address, () => verify(token, cacheKey));
    },
    guarded,
    forgetKey,
    async close() {
      clearInterval(recheckTimer);
      await rechecking;
      await listener.close();
      listening = false;
      cache.clear();
    },
  };
}
