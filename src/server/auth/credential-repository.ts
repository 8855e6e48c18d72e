import type { ApiKeyKind } from '@assay/contract';
import type { Queryable } from '../db/database.ts';
import { ORCHESTRATOR_USER_ID } from './orchestrator-user.ts';

/**
 * The channel every change that stops a key from working is announced on (a trigger of migration
 * 009_api_key_change_notify.sql, which spells the same name): a key id, or `*` for every cached entry.
 */
export const KEY_CHANGES_CHANNEL = 'assay_api_key_changes';

export interface StoredKey {
  id: string;
  user_id: string;
  kind: ApiKeyKind;
  scopes: string[];
  secret_hash: Uint8Array;
  run_id: string | null;
  expired: boolean;
  revoked: boolean;
  run_ended_long_ago: boolean;
  /** Milliseconds the key has left before it expires (null: no expiry), by the database's clock. */
  expires_in_ms: number | null;
  /**
   * Worker keys of an ended run: milliseconds left of the grace after the run's end (null: the run goes on).
   */
  grace_left_ms: number | null;
  is_admin: boolean;
}

/**
 * One indexed read per cache miss: the key, its owner's admin flag and, for worker keys, whether the run is
 * long over.
 */
export async function findKeyForAuth(
  db: Queryable,
  id: string,
  workerGraceMs: number,
): Promise<StoredKey | undefined> {
  const rows = await db.query<StoredKey>(
    `SELECT k.id, k.user_id, k.kind, k.scopes, k.secret_hash, k.run_id,
            (k.expires_at IS NOT NULL AND k.expires_at <= now()) AS expired,
            (k.revoked_at IS NOT NULL) AS revoked,
            (r.ended_at IS NOT NULL AND r.ended_at < now() - make_interval(secs => $2::float8 / 1000)) AS run_ended_long_ago,
            (EXTRACT(EPOCH FROM k.expires_at - now()) * 1000)::float8 AS expires_in_ms,
            (EXTRACT(EPOCH FROM r.ended_at + make_interval(secs => $2::float8 / 1000) - now()) * 1000)::float8
              AS grace_left_ms,
            u.is_admin
       FROM api_keys k
       JOIN users u ON u.id = k.user_id
       LEFT JOIN runs r ON r.id = k.run_id
      WHERE k.id = $1`,
    [id, workerGraceMs],
  );
  return rows[0];
}

/**
 * Which of these keys still work as far as revocation and expiry go (unrevoked, unexpired, still stored): the
 * periodic re-check of a replica's cached keys, one primary-key lookup each.
 */
export async function findLiveKeyIds(db: Queryable, ids: readonly string[]): Promise<Set<string>> {
  const rows = await db.query<{ id: string }>(
    `SELECT id FROM api_keys
      WHERE id = ANY($1::uuid[]) AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
    [ids],
  );
  return new Set(rows.map((r) => r.id));
}

export async function touchKey(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE api_keys SET last_used_at = now() WHERE id = $1', [id]);
}

/**
 * Finds or creates the user behind an identity-provider subject. An existing account with the same email is
 * linked only when the provider says the email is verified; otherwise the new user gets no email.
 */
export async function userForSubject(
  db: Queryable,
  claims: { issuer: string; subject: string; email?: string; emailVerified: boolean; name?: string },
): Promise<{ id: string; is_admin: boolean }> {
  const found = await db.query<{ id: string; is_admin: boolean }>(
    'SELECT id, is_admin FROM users WHERE idp_issuer = $1 AND idp_subject = $2',
    [claims.issuer, claims.subject],
  );
  if (found[0]) return found[0];
  if (claims.email && claims.emailVerified) {
    // The orchestrator user is never linked: its scope must not be reachable through an identity provider.
    const linked = await db.query<{ id: string; is_admin: boolean }>(
      `UPDATE users SET idp_issuer = $1, idp_subject = $2 WHERE email = $3 AND idp_issuer IS NULL AND id <> $4 RETURNING id, is_admin`,
      [claims.issuer, claims.subject, claims.email, ORCHESTRATOR_USER_ID],
    );
    if (linked[0]) return linked[0];
  }
  const created = await db.query<{ id: string; is_admin: boolean }>(
    `INSERT INTO users (idp_issuer, idp_subject, email, name)
     VALUES ($1, $2, CASE WHEN EXISTS (SELECT 1 FROM users WHERE email = $3) THEN NULL ELSE $3 END, $4)
     ON CONFLICT (idp_issuer, idp_subject) DO UPDATE SET idp_subject = EXCLUDED.idp_subject
     RETURNING id, is_admin`,
    [claims.issuer, claims.subject, claims.email ?? null, claims.name ?? null],
  );
  return created[0]!;
}
