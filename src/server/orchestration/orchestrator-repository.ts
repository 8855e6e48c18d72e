import type { Queryable, Tx } from '../db/database.ts';
import { RUN_MOVES, type LaunchAuthor, type RunMove } from '@assay/contract';
import { CANCELLED_BEFORE_START, failureReasonOf, RUN_COLUMNS, type RunRow } from '../runs/run-repository.ts';

// The orchestrator addresses runs by id and reaches managed runs only; tenancy is not its concern (it has
// no tenant).

export type ManagedRunRow = RunRow & {
  launch_config: Record<string, unknown>;
  provisioned_by_admin: boolean;
  launch_author: LaunchAuthor | null;
};

export async function findManagedRun(db: Queryable, runId: string): Promise<ManagedRunRow | undefined> {
  const rows = await db.query<ManagedRunRow>(
    `SELECT ${RUN_COLUMNS}, v.launch_config, COALESCE(u.is_admin, false) AS provisioned_by_admin,
            CASE WHEN a.id IS NULL THEN NULL
                 ELSE json_build_object('id', a.id, 'email', a.email, 'is_admin', a.is_admin)
            END AS launch_author
       FROM runs r JOIN variations v ON v.experiment_id = r.experiment_id AND v.n = r.n
       LEFT JOIN users u ON u.id = r.provisioned_by
       LEFT JOIN users a ON a.id = v.launch_author
      WHERE r.id = $1 AND r.managed`,
    [runId],
  );
  return rows[0];
}

/** Locks a managed run for the rest of the transaction, so key minting and recovery of one run queue up. */
export async function lockManagedRun(tx: Tx, runId: string): Promise<RunRow | undefined> {
  const rows = await tx.query<RunRow>(
    `SELECT ${RUN_COLUMNS} FROM runs r WHERE r.id = $1 AND r.managed FOR UPDATE`,
    [runId],
  );
  return rows[0];
}

/**
 * A run move in one conditional UPDATE, as the run repository's moves for callers addressed by (experiment,
 * n, r).
 */
async function applyManagedRunMove(
  db: Queryable,
  runId: string,
  move: RunMove,
  sets: string,
  extra: unknown[] = [],
): Promise<RunRow | undefined> {
  const { from, to } = RUN_MOVES[move];
  const rows = await db.query<RunRow>(
    `UPDATE runs r SET state = $2, ${sets} WHERE r.id = $1 AND r.managed AND r.state = ANY($${3 + extra.length}::text[]) RETURNING ${RUN_COLUMNS}`,
    [runId, to, ...extra, from],
  );
  return rows[0];
}

/** Fails a pending or running managed run; undefined when it has ended (or is no managed run). */
export const failManagedRun = (db: Queryable, runId: string, reason: string, message: string | null) =>
  applyManagedRunMove(
    db,
    runId,
    'conclude_failed',
    `ended_at = now(), failure_reason = ${failureReasonOf('$3')}, failure_message = $4`,
    [reason, message],
  );

export const cancelPendingManagedRun = (db: Queryable, runId: string) =>
  applyManagedRunMove(db, runId, 'cancel_pending', CANCELLED_BEFORE_START);

export const requestManagedRunCancel = (db: Queryable, runId: string) =>
  applyManagedRunMove(db, runId, 'request_cancel', 'cancel_requested = true');

export async function recordInstance(
  db: Queryable,
  runId: string,
  instance: { provider: string; instance_id: string; state: string },
): Promise<RunRow | undefined> {
  const rows = await db.query<RunRow>(
    `UPDATE runs r SET instance = $2 WHERE r.id = $1 AND r.managed RETURNING ${RUN_COLUMNS}`,
    [runId, instance],
  );
  return rows[0];
}

export async function findRecoveryOf(db: Queryable, runId: string): Promise<RunRow | undefined> {
  const rows = await db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs r WHERE r.recovers_run_id = $1`, [
    runId,
  ]);
  return rows[0];
}

export async function findRetryOf(db: Queryable, runId: string): Promise<RunRow | undefined> {
  const rows = await db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs r WHERE r.retries_run_id = $1`, [
    runId,
  ]);
  return rows[0];
}

export async function listRunAssets(db: Queryable, runId: string) {
  return db.query<{ id: string; kind: string; name: string; state: string }>(
    'SELECT id, kind, name, state FROM assets WHERE run_id = $1 ORDER BY created_at, id',
    [runId],
  );
}

/**
 * Managed runs still pending with no instance recorded, whose workflow the service starts itself: neither a
 * sweep's run (its sweep workflow starts it, within the sweep's concurrency) nor a recovery (its
 * parent does).
 */
export async function listUnstartedManagedRuns(db: Queryable, limit: number): Promise<RunRow[]> {
  return db.query<RunRow>(
    `SELECT ${RUN_COLUMNS} FROM runs r
      WHERE r.managed AND r.state = 'pending' AND r.instance IS NULL AND r.workflow_id IS NOT NULL
        AND r.sweep_id IS NULL AND r.recovers_run_id IS NULL
      ORDER BY r.created_at LIMIT $1`,
    [limit],
  );
}

/** Fails a managed run whose workflow never started; a run that got an instance meanwhile is left alone. */
export async function failUnstartedManagedRun(
  db: Queryable,
  runId: string,
  message: string,
): Promise<RunRow | undefined> {
  const rows = await db.query<RunRow>(
    `UPDATE runs r SET state = 'failed', ended_at = now(), failure_reason = 'provision_failed', failure_message = $2
      WHERE r.id = $1 AND r.managed AND r.state = 'pending' AND r.instance IS NULL RETURNING ${RUN_COLUMNS}`,
    [runId, message],
  );
  return rows[0];
}

/** What a workflow is labelled with in the Temporal UI: its experiment's name and owner. */
export async function findWorkflowLabels(
  db: Queryable,
  experimentId: string,
): Promise<{ experimentName: string; owner: string } | undefined> {
  const rows = await db.query<{ experimentName: string; owner: string }>(
    `SELECT e.name AS "experimentName", e.owner_user_id AS owner FROM experiments e WHERE e.id = $1`,
    [experimentId],
  );
  return rows[0];
}

/** Live managed runs with a workflow id, a page at a time in id order (the caller keeps the cursor). */
export async function listLiveManagedRuns(db: Queryable, afterId: string, limit: number): Promise<RunRow[]> {
  return db.query<RunRow>(
    `SELECT ${RUN_COLUMNS} FROM runs r
      WHERE r.managed AND r.state IN ('pending', 'running') AND r.workflow_id IS NOT NULL AND r.id > $1
      ORDER BY r.id LIMIT $2`,
    [afterId, limit],
  );
}
