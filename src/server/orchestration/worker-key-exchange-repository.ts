import { mintToken } from '../auth/api-key-token.ts';
import type { Queryable, Tx } from '../db/database.ts';

/** A stored exchange token with what its exchange needs to decide: never the secret, only its hash. */
export interface ExchangeRow {
  id: string;
  run_id: string;
  secret_hash: Uint8Array;
  minted_by_key_id: string | null;
  spent: boolean;
  expired: boolean;
  minter_revoked: boolean;
  run_state: string;
  provisioned_by: string | null;
  workflow_id: string | null;
}

/** Stores a fresh exchange token for the run; the clear token is returned once and never stored. */
export async function insertExchangeToken(
  db: Queryable,
  exchange: { runId: string; mintedByKeyId: string | null; ttlMs: number },
): Promise<{ id: string; token: string; expires_at: Date }> {
  const { id, token, secretHash } = mintToken('exchange');
  const rows = await db.query<{ expires_at: Date }>(
    `INSERT INTO worker_key_exchanges (id, run_id, secret_hash, minted_by_key_id, expires_at)
     VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5::float8 / 1000))
     RETURNING expires_at`,
    [id, exchange.runId, secretHash, exchange.mintedByKeyId, exchange.ttlMs],
  );
  return { id, token, expires_at: rows[0]!.expires_at };
}

/**
 * Locks the token and its run for the rest of the transaction: two exchanges for one run (even with two
 * tokens) queue up, and the second sees what the first did.
 */
export async function lockExchange(tx: Tx, id: string): Promise<ExchangeRow | undefined> {
  const rows = await tx.query<ExchangeRow>(
    `SELECT e.id, e.run_id, e.secret_hash, e.minted_by_key_id,
            (e.spent_at IS NOT NULL) AS spent,
            (e.expires_at <= now()) AS expired,
            (m.revoked_at IS NOT NULL) AS minter_revoked,
            r.state AS run_state, r.provisioned_by, r.workflow_id
       FROM worker_key_exchanges e
       JOIN runs r ON r.id = e.run_id
       LEFT JOIN api_keys m ON m.id = e.minted_by_key_id
      WHERE e.id = $1
        FOR UPDATE OF e, r`,
    [id],
  );
  return rows[0];
}

/**
 * Whether a token of the run already bought its worker key (read after lockExchange, so it sees the latest).
 */
export async function runWorkerKeyIssued(tx: Tx, runId: string): Promise<boolean> {
  const rows = await tx.query(
    'SELECT 1 FROM worker_key_exchanges WHERE run_id = $1 AND worker_key_id IS NOT NULL LIMIT 1',
    [runId],
  );
  return rows.length > 0;
}

/**
 * Marks the token spent on the worker key it bought, and voids the run's other unused tokens: one runner
 * per run.
 */
export async function spendRunExchanges(
  tx: Tx,
  exchange: { id: string; runId: string; workerKeyId: string },
): Promise<void> {
  await tx.query(
    `UPDATE worker_key_exchanges
        SET spent_at = now(), worker_key_id = CASE WHEN id = $2 THEN $3::uuid END
      WHERE run_id = $1 AND spent_at IS NULL`,
    [exchange.runId, exchange.id, exchange.workerKeyId],
  );
}

/** Voids every unused exchange token of a run (its keys are being revoked); answers how many. */
export async function voidRunExchanges(db: Queryable, runId: string): Promise<number> {
  const rows = await db.query<{ id: string }>(
    'UPDATE worker_key_exchanges SET spent_at = now() WHERE run_id = $1 AND spent_at IS NULL RETURNING id',
    [runId],
  );
  return rows.length;
}
