import { RUN_MOVES, type EarlyStopping, type Objective } from '@assay/contract';
import type { Queryable, Tx } from '../../db/database.ts';

/**
 * Each run of a sweep with its trial number (Optuna's trial.number, 0-based): its variation's sweep trial less
 * one when the sweep made the variation (a search sweep; a retry is a run of the same trial), else its position
 * among the sweep's runs in creation order (grid, list and repeat sweeps; a recovery or retry, created later,
 * comes after every run created before it, so no number ever moves). `$1` is the sweep.
 */
const SWEEP_TRIALS = `SELECT r.id, COALESCE(v.sweep_trial - 1, row_number() OVER (ORDER BY r.created_at, r.n, r.r) - 1)::int AS number
  FROM runs r JOIN variations v ON v.experiment_id = r.experiment_id AND v.n = r.n WHERE r.sweep_id = $1`;

/** Decisions of one sweep take this lock class with the sweep's hash: they run one at a time, as Optuna's do. */
const DECISION_LOCK_CLASS = 23_0001;

export interface RunStopping {
  objective: Objective | null;
  early_stopping: EarlyStopping | null;
  trial: number;
}

/** The sweep's objective and early stopping as declared (sweeps.spec), and the run's trial number. */
export async function findRunStopping(
  db: Queryable,
  sweepId: string,
  runId: string,
): Promise<RunStopping | undefined> {
  const rows = await db.query<RunStopping>(
    `WITH trials AS (${SWEEP_TRIALS})
     SELECT s.spec->'objective' AS objective, s.spec->'early_stopping' AS early_stopping, t.number AS trial
       FROM sweeps s JOIN trials t ON t.id = $2 WHERE s.id = $1`,
    [sweepId, runId],
  );
  return rows[0];
}

/** Until the transaction ends, no other decision about the sweep's runs is taken (on any replica). */
export async function lockSweepDecisions(tx: Tx, sweepId: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [DECISION_LOCK_CLASS, sweepId]);
}

export interface ObjectiveFacts {
  /** The newest step and its value. */
  step: number;
  value: number;
  /** The step before it, −1 when none. */
  previous_step: number;
  /** The lowest and highest value, NaN ignored; null when every value is NaN. */
  min_value: number | null;
  max_value: number | null;
  /** How many rungs the run recorded (always 0 … k − 1). */
  completed_rungs: number;
}

/** The run's objective series as it stands, from its summary row and one step back through its points. */
export async function findObjectiveFacts(
  db: Queryable,
  runId: string,
  metric: string,
): Promise<ObjectiveFacts | undefined> {
  const rows = await db.query<ObjectiveFacts>(
    `SELECT s.last_step::float8 AS step, s.last_value AS value, s.min_value, s.max_value,
            COALESCE((SELECT max(p.step) FROM metric_points p WHERE p.series_id = s.id AND p.step < s.last_step), -1)::float8
              AS previous_step,
            (SELECT count(*) FROM sweep_rungs sr WHERE sr.run_id = s.run_id)::int AS completed_rungs
       FROM metric_series s WHERE s.run_id = $1 AND s.key = $2 AND s.last_step IS NOT NULL`,
    [runId, metric],
  );
  return rows[0];
}

/** The rung values the sweep's other runs recorded at `fromRung` or above, with their trial numbers. */
export async function listRungsFrom(
  db: Queryable,
  sweepId: string,
  runId: string,
  fromRung: number,
): Promise<{ trial: number; rung: number; value: number }[]> {
  return db.query(
    `WITH trials AS (${SWEEP_TRIALS})
     SELECT t.number AS trial, sr.rung, sr.value FROM sweep_rungs sr JOIN trials t ON t.id = sr.run_id
      WHERE sr.sweep_id = $1 AND sr.rung >= $3 AND sr.run_id <> $2`,
    [sweepId, runId, fromRung],
  );
}

/** How many of the sweep's runs succeeded (Optuna's COMPLETE trials). */
export async function countSucceededRuns(db: Queryable, sweepId: string): Promise<number> {
  const rows = await db.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM runs r WHERE r.sweep_id = $1 AND r.state = 'succeeded'`,
    [sweepId],
  );
  return rows[0]!.count;
}

/** The objective's values at `step` of the sweep's succeeded runs that logged it (NaN included). */
export async function listSucceededValuesAt(
  db: Queryable,
  sweepId: string,
  metric: string,
  step: number,
): Promise<number[]> {
  const rows = await db.query<{ value: number }>(
    `SELECT p.value FROM runs r
       JOIN metric_series s ON s.run_id = r.id AND s.key = $2
       JOIN metric_points p ON p.series_id = s.id AND p.step = $3
      WHERE r.sweep_id = $1 AND r.state = 'succeeded'`,
    [sweepId, metric, step],
  );
  return rows.map((r) => r.value);
}

/** Records the run's rung values (a rung once: a repeated decision keeps the first). */
export async function insertRungs(
  db: Queryable,
  sweepId: string,
  runId: string,
  rungs: readonly { rung: number; value: number }[],
): Promise<void> {
  await db.query(
    `INSERT INTO sweep_rungs (sweep_id, run_id, rung, value)
     SELECT $1, $2, x.rung, x.value FROM unnest($3::int[], $4::float8[]) AS x(rung, value)
     ON CONFLICT (run_id, rung) DO NOTHING`,
    [sweepId, runId, rungs.map((r) => r.rung), rungs.map((r) => String(r.value))],
  );
}

/**
 * Asks a running run to stop because its sweep's early stopping pruned it, as a cancel asks (its runner learns
 * it from the cancel flag); undefined when the run ended or was asked to cancel already.
 */
export async function requestEarlyStop(
  db: Queryable,
  runId: string,
): Promise<{ workflow_id: string | null } | undefined> {
  const { from } = RUN_MOVES.request_cancel;
  const rows = await db.query<{ workflow_id: string | null }>(
    `UPDATE runs r SET cancel_requested = true, cancel_reason = 'stopped_early'
      WHERE r.id = $1 AND r.state = ANY($2::text[]) AND NOT r.cancel_requested
      RETURNING r.workflow_id`,
    [runId, from],
  );
  return rows[0];
}
