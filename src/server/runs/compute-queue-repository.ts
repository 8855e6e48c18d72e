import type { Queryable, Tx } from '../db/database.ts';
import type { QueueState, WaitingRun } from './queue-order.ts';

// The `local` compute queue's rows (migration 017): managed runs waiting for capacity, and those holding it.

/** Every replica grants under this lock, so two grants never hand out the same slot or GPU. */
const QUEUE_LOCK_CLASS = 23_0002;

export async function lockQueue(tx: Tx): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1, 0)', [QUEUE_LOCK_CLASS]);
}

export interface QueueRow {
  run_id: string;
  user_id: string | null;
  priority: number;
  gpus: number;
  enqueued_at: Date;
  granted_at: Date | null;
  gpu_ids: number[];
}

/** The GPUs the run's launch block asks for (0 when it names none), or undefined for no managed run. */
export async function gpusAsked(db: Queryable, runId: string): Promise<number | undefined> {
  const rows = await db.query<{ gpus: number }>(
    `SELECT COALESCE((v.launch_config->>'gpus')::int, 0) AS gpus
       FROM runs r JOIN variations v ON v.experiment_id = r.experiment_id AND v.n = r.n
      WHERE r.id = $1 AND r.managed`,
    [runId],
  );
  return rows[0]?.gpus;
}

/**
 * Adds a pending managed run to the queue with its user, priority and GPU ask; a run already in it (waiting
 * or holding) is left as it is. Answers the run's row, or undefined when the run is not pending and not in
 * the queue.
 */
export async function enqueue(tx: Tx, runId: string): Promise<QueueRow | undefined> {
  await tx.query(
    `INSERT INTO compute_queue (run_id, user_id, priority, gpus)
     SELECT r.id, r.provisioned_by, r.priority, COALESCE((v.launch_config->>'gpus')::int, 0)
       FROM runs r JOIN variations v ON v.experiment_id = r.experiment_id AND v.n = r.n
      WHERE r.id = $1 AND r.managed AND r.state = 'pending'
     ON CONFLICT (run_id) DO NOTHING`,
    [runId],
  );
  const rows = await tx.query<QueueRow>('SELECT * FROM compute_queue WHERE run_id = $1', [runId]);
  return rows[0];
}

/**
 * Drops what no longer waits or holds: a waiting run that ended (cancelled while it waited), and a run that
 * ended `staleMs` ago while holding (its saga, which releases at once, is gone: terminated by an operator).
 */
export async function dropEnded(tx: Tx, staleMs: number): Promise<void> {
  await tx.query(
    `DELETE FROM compute_queue q USING runs r
      WHERE r.id = q.run_id AND r.state IN ('succeeded', 'failed')
        AND (q.granted_at IS NULL OR r.ended_at < now() - make_interval(secs => $1::double precision / 1000))`,
    [staleMs],
  );
}

/** Waiting runs (their run still pending) and held slots, with each user's last grant. */
export async function readQueue(db: Queryable): Promise<QueueState> {
  const rows = await db.query<QueueRow>(
    `SELECT q.* FROM compute_queue q JOIN runs r ON r.id = q.run_id
      WHERE q.granted_at IS NOT NULL OR r.state = 'pending'`,
  );
  const turns = await db.query<{ user_id: string; last_granted_at: Date }>(
    'SELECT user_id, last_granted_at FROM compute_queue_turns',
  );
  return {
    waiting: rows.filter((r) => r.granted_at === null).map(waitingRun),
    held: rows.filter((r) => r.granted_at !== null).map((r) => ({ userId: r.user_id, gpuIds: r.gpu_ids })),
    lastGrant: new Map(turns.map((t) => [t.user_id, t.last_granted_at.getTime()])),
  };
}

/** The queue read only when one of `runIds` waits in it (a run answer's fast path: one cheap query). */
export async function readQueueIfWaiting(db: Queryable, runIds: string[]): Promise<QueueState | undefined> {
  const rows = await db.query(
    'SELECT 1 FROM compute_queue WHERE run_id = ANY($1::uuid[]) AND granted_at IS NULL LIMIT 1',
    [runIds],
  );
  return rows.length === 0 ? undefined : readQueue(db);
}

function waitingRun(row: QueueRow): WaitingRun {
  return {
    runId: row.run_id,
    userId: row.user_id,
    priority: row.priority,
    gpus: row.gpus,
    enqueuedAt: row.enqueued_at.getTime(),
  };
}

/** Grants the run its slot and GPUs, and makes it its user's newest grant. */
export async function grant(tx: Tx, runId: string, gpuIds: number[]): Promise<void> {
  const rows = await tx.query<{ user_id: string | null }>(
    `UPDATE compute_queue SET granted_at = clock_timestamp(), gpu_ids = $2::int[]
      WHERE run_id = $1 AND granted_at IS NULL RETURNING user_id`,
    [runId, gpuIds],
  );
  const userId = rows[0]?.user_id;
  if (userId)
    await tx.query(
      `INSERT INTO compute_queue_turns (user_id, last_granted_at) VALUES ($1, clock_timestamp())
       ON CONFLICT (user_id) DO UPDATE SET last_granted_at = EXCLUDED.last_granted_at`,
      [userId],
    );
}

export async function findQueued(db: Queryable, runId: string): Promise<QueueRow | undefined> {
  const rows = await db.query<QueueRow>('SELECT * FROM compute_queue WHERE run_id = $1', [runId]);
  return rows[0];
}

/** Takes the run out of the queue (waiting or holding); answers whether it was in it. */
export async function leave(tx: Tx, runId: string): Promise<boolean> {
  const rows = await tx.query('DELETE FROM compute_queue WHERE run_id = $1 RETURNING run_id', [runId]);
  return rows.length > 0;
}
