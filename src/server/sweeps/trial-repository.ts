import type { FailureReason, RunState } from '@assay/contract';
import type { Queryable, Tx } from '../db/database.ts';
import { CANCELLED_BEFORE_START, RUN_COLUMNS, type RunRow } from '../runs/run-repository.ts';
import type { SplitConfig } from '../variations/config-yaml.ts';

// A searching sweep's trials: the variations it adds to its committed experiment, one per trial.

export interface TrialSweepRow {
  id: string;
  experiment_id: string;
  spec: Record<string, unknown>;
  created_by: string | null;
  creator_is_admin: boolean;
  experiment_state: string;
}

/** The sweep, its row locked: trials of one sweep are made one at a time. */
export async function lockSweep(tx: Tx, sweepId: string): Promise<TrialSweepRow | undefined> {
  const rows = await tx.query<TrialSweepRow>(
    `SELECT s.id, s.experiment_id, s.spec, s.created_by, COALESCE(u.is_admin, false) AS creator_is_admin,
            e.state AS experiment_state
       FROM sweeps s JOIN experiments e ON e.id = s.experiment_id LEFT JOIN users u ON u.id = s.created_by
      WHERE s.id = $1 FOR UPDATE OF s`,
    [sweepId],
  );
  return rows[0];
}

export async function sweepSpec(db: Queryable, sweepId: string): Promise<object | undefined> {
  const rows = await db.query<{ spec: object }>('SELECT spec FROM sweeps WHERE id = $1', [sweepId]);
  return rows[0]?.spec;
}

/** The variation number of the sweep's trial, if it was made. */
export async function findTrialVariation(db: Queryable, sweepId: string, trial: number) {
  const rows = await db.query<{ n: number }>(
    'SELECT n FROM variations WHERE sweep_id = $1 AND sweep_trial = $2',
    [sweepId, trial],
  );
  return rows[0]?.n;
}

/**
 * The trial's variation on the committed experiment, numbered from the experiment's counter; the unique
 * (sweep_id, sweep_trial) index keeps it one per trial. Undefined unless the experiment is committed.
 */
export async function insertTrialVariation(
  tx: Tx,
  input: {
    experimentId: string;
    sweepId: string;
    trial: number;
    params: Record<string, unknown>;
    name: string;
    configYaml: string;
    config: SplitConfig;
    author: string | null;
  },
): Promise<number | undefined> {
  const rows = await tx.query<{ n: number }>(
    `WITH counter AS (
       UPDATE experiments e SET next_variation_n = e.next_variation_n + 1, updated_at = now()
        WHERE e.id = $1 AND e.state = 'committed' RETURNING e.next_variation_n - 1 AS n)
     INSERT INTO variations (experiment_id, n, name, config_yaml, config_json, accelerate_config_json,
                             launch_config, launch_author, sweep_id, sweep_trial, sweep_params)
     SELECT $1, n, $2, $3, $4, $5, $6, $7, $8, $9, $10 FROM counter RETURNING n`,
    [
      input.experimentId,
      input.name,
      input.configYaml,
      input.config.config_json,
      input.config.accelerate_config_json,
      input.config.launch_config,
      input.author,
      input.sweepId,
      input.trial,
      input.params,
    ],
  );
  return rows[0]?.n;
}

/** The first run of a sweep's variation (neither a recovery nor a retry). */
export async function firstRunOf(db: Queryable, sweepId: string, n: number): Promise<RunRow | undefined> {
  const rows = await db.query<RunRow>(
    `SELECT ${RUN_COLUMNS} FROM runs r
      WHERE r.sweep_id = $1 AND r.n = $2 AND r.recovers_run_id IS NULL AND r.retries_run_id IS NULL
      ORDER BY r.r LIMIT 1`,
    [sweepId, n],
  );
  return rows[0];
}

export interface TrialRunRow {
  trial: number;
  params: Record<string, unknown>;
  state: RunState;
  failure_reason: FailureReason | null;
  value: number | null;
  step: number | null;
}

/**
 * Each trial of the sweep with its latest run (the one that carries it now: a retry or a recovery comes
 * later) and the last value that run logged for the metric.
 */
export async function trialRuns(
  db: Queryable,
  sweepId: string,
  metric: string | null,
): Promise<TrialRunRow[]> {
  return db.query<TrialRunRow>(
    `SELECT DISTINCT ON (v.sweep_trial) v.sweep_trial AS trial, v.sweep_params AS params, r.state,
            r.failure_reason, m.last_value AS value, m.last_step::float8 AS step
       FROM variations v JOIN runs r ON r.experiment_id = v.experiment_id AND r.n = v.n
       LEFT JOIN metric_series m ON m.run_id = r.id AND m.key = $2
      WHERE v.sweep_id = $1
      ORDER BY v.sweep_trial, r.r DESC`,
    [sweepId, metric],
  );
}

/** Fails the sweep's runs still pending `abandoned` (a cancelled sweep's runs never started). */
export async function abandonPendingRuns(db: Queryable, sweepId: string): Promise<number> {
  const rows = await db.query<{ id: string }>(
    `UPDATE runs r SET state = 'failed', ${CANCELLED_BEFORE_START}
      WHERE r.sweep_id = $1 AND r.managed AND r.state = 'pending' RETURNING r.id`,
    [sweepId],
  );
  return rows.length;
}
