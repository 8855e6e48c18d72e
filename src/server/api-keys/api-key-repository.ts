import type { Queryable } from '../db/database.ts';
import { mintToken, type KeyKind } from '../auth/api-key-token.ts';

export interface ApiKeyRow {
  id: string;
  user_id: string;
  kind: KeyKind;
  description: string;
  scopes: string[];
  run_id: string | null;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const COLUMNS =
  'id, user_id, kind, description, scopes, run_id, created_at, expires_at, last_used_at, revoked_at';

/**
 * Mints and stores a key; the clear token is returned to the caller once and never stored. `ttlDays: null`:
 * no expiry. A minted key never outlives its minter (LEAST ignores a NULL side), and a key minted by one
 * revoked in the meantime (a replica's cache can still let its minter in for a moment) is born revoked.
 */
export async function insertKey(
  db: Queryable,
  key: {
    userId: string;
    kind: KeyKind;
    description: string;
    scopes: readonly string[];
    runId: string | null;
    ttlDays: number | null;
    mintedByKeyId: string | null;
  },
): Promise<{ row: ApiKeyRow; token: string }> {
  const { id, token, secretHash } = mintToken(key.kind);
  const rows = await db.query<ApiKeyRow>(
    `INSERT INTO api_keys (id, user_id, kind, description, scopes, secret_hash, run_id, minted_by_key_id, expires_at, revoked_at)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8::uuid,
            LEAST(now() + make_interval(days => $9::int), minter.expires_at), minter.revoked_at
       FROM (SELECT NULL) AS one
       LEFT JOIN api_keys minter ON minter.id = $8::uuid
     RETURNING ${COLUMNS}`,
    [
      id,
      key.userId,
      key.kind,
      key.description,
      key.scopes,
      secretHash,
      key.runId,
      key.mintedByKeyId,
      key.ttlDays,
    ],
  );
  return { row: rows[0]!, token };
}

export async function listKeys(db: Queryable, userId: string): Promise<ApiKeyRow[]> {
  return db.query<ApiKeyRow>(
    `SELECT ${COLUMNS} FROM api_keys WHERE user_id = $1 ORDER BY created_at DESC, id`,
    [userId],
  );
}

/**
 * What a caller's key may do to the user's key `id`: whether the user owns it, whether the caller's key was
 * minted by no other key (the user's first key, or one minted with an access token), and whether the caller's
 * key is `id` itself or one of its minters, transitively.
 */
export async function revocationReach(
  db: Queryable,
  caller: { userId: string; keyId: string },
  id: string,
): Promise<{ owned: boolean; callerIsRoot: boolean; inLineage: boolean }> {
  const rows = await db.query<{ owned: boolean; caller_is_root: boolean; in_lineage: boolean }>(
    `WITH RECURSIVE ancestry (id, minted_by) AS (
       SELECT id, minted_by_key_id FROM api_keys WHERE id = $1 AND user_id = $2
       UNION
       SELECT k.id, k.minted_by_key_id FROM api_keys k JOIN ancestry a ON k.id = a.minted_by
     )
     SELECT EXISTS (SELECT 1 FROM ancestry WHERE id = $1) AS owned,
            COALESCE((SELECT minted_by_key_id IS NULL FROM api_keys WHERE id = $3), false) AS caller_is_root,
            EXISTS (SELECT 1 FROM ancestry WHERE id = $3) AS in_lineage`,
    [id, caller.userId, caller.keyId],
  );
  const row = rows[0]!;
  return { owned: row.owned, callerIsRoot: row.caller_is_root, inLineage: row.in_lineage };
}

/**
 * Revokes a key and every key minted from it, transitively (revoking twice keeps the first moment). `userId`
 * null: any owner (an admin revoking an orchestrator key). Answers the named key first, then its descendants;
 * empty when there is no such key.
 */
export async function revokeKeyLineage(
  db: Queryable,
  userId: string | null,
  id: string,
): Promise<ApiKeyRow[]> {
  const rows = await db.query<ApiKeyRow & { root: boolean }>(
    `WITH RECURSIVE lineage (id) AS (
       SELECT id FROM api_keys WHERE id = $1 AND ($2::uuid IS NULL OR user_id = $2::uuid)
       UNION
       SELECT k.id FROM api_keys k JOIN lineage l ON k.minted_by_key_id = l.id
     )
     UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
      WHERE id IN (SELECT id FROM lineage)
      RETURNING ${COLUMNS}, id = $1 AS root`,
    [id, userId],
  );
  return rows.sort((a, b) => Number(b.root) - Number(a.root)).map(({ root: _root, ...row }) => row);
}

/**
 * Revokes every unrevoked key of the user but one (`keepId` null: all); answers the ids it revoked. The keys
 * they minted stay: rotating the orchestrator key must not cut off the worker keys of runs in flight.
 */
export async function revokeUserKeysExcept(
  db: Queryable,
  userId: string,
  keepId: string | null,
): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `UPDATE api_keys SET revoked_at = now()
      WHERE user_id = $1 AND revoked_at IS NULL AND ($2::uuid IS NULL OR id <> $2::uuid) RETURNING id`,
    [userId, keepId],
  );
  return rows.map((r) => r.id);
}

/** Revokes every unrevoked worker key of a run; answers the ids it revoked (none on a repeat). */
export async function revokeRunWorkerKeys(db: Queryable, runId: string): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `UPDATE api_keys SET revoked_at = now() WHERE run_id = $1 AND kind = 'worker' AND revoked_at IS NULL RETURNING id`,
    [runId],
  );
  return rows.map((r) => r.id);
}

/** Stores a pre-shared key's hash under its id for a user, unless that id is stored already. */
export async function insertPresharedKey(
  db: Queryable,
  key: { id: string; userId: string; description: string; scopes: readonly string[]; secretHash: Buffer },
): Promise<void> {
  await db.query(
    `INSERT INTO api_keys (id, user_id, kind, description, scopes, secret_hash)
     VALUES ($1, $2, 'agent', $3, $4, $5) ON CONFLICT (id) DO NOTHING`,
    [key.id, key.userId, key.description, key.scopes, key.secretHash],
  );
}

/**
 * The stored key with this id: its owner, kind, and whether its hash is this one (compared in the database).
 */
export async function findKeyWithHash(
  db: Queryable,
  id: string,
  secretHash: Buffer,
): Promise<{ user_id: string; kind: string; same_secret: boolean } | undefined> {
  const [stored] = await db.query<{ user_id: string; kind: string; same_secret: boolean }>(
    'SELECT user_id, kind, secret_hash = $2 AS same_secret FROM api_keys WHERE id = $1',
    [id, secretHash],
  );
  return stored;
}

/** Revokes one key whoever owns it (the service's own keys, e.g. the embedded worker's). */
export async function revokeKeyById(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1', [id]);
}
