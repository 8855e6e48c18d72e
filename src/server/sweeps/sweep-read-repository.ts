// What the sweep pages read: a sweep's runs with their trial and last objective value, the experiment's
// sweeps newest first.
import type { FailureReason, RunState } from '@assay/contract';
import type { Queryable } from '../db/database.ts';
import { experimentVisible } from '../organizations/organization-repository.ts';
import type { SweepRow } from './sweep-repository.ts';

/** A sweep's run as its page shows it. */
export interface SweepRunView {
  sweep_id: string;
  id: string;
  n: number;
  r: number;
  variation_name: string;
  workflow_id: string;
  state: RunState;
  failure_reason: FailureReason | null;
  started_at: Date | null;
  recovers_run_id: string | null;
  retries_run_id: string | null;
  seed: number | null;
  trial: number | null;
  params: Record<string, unknown> | null;
  /** The last value logged under the sweep's objective metric, and its step; null before any. */
  objective: number | null;
  step: number | null;
}

/**
 * The runs of these sweeps, in (sweep, n, r) order, each with the last point of its sweep's objective
 * metric: one query whatever the number of runs (a series row holds its last point, so no point is read).
 */
export async function sweepRunViews(db: Queryable, sweepIds: string[]): Promise<SweepRunView[]> {
  return db.query<SweepRunView>(
    `SELECT r.sweep_id, r.id, r.n, r.r, v.name AS variation_name, r.workflow_id, r.state, r.failure_reason,
            r.started_at, r.recovers_run_id, r.retries_run_id, r.seed::float8 AS seed, v.sweep_trial AS trial,
            v.sweep_params AS params, m.last_value AS objective, m.last_step::float8 AS step
       FROM runs r
       JOIN sweeps sw ON sw.id = r.sweep_id
       JOIN variations v ON v.experiment_id = r.experiment_id AND v.n = r.n
       LEFT JOIN metric_series m
         ON m.run_id = r.id AND m.key = sw.spec->'objective'->>'metric' AND m.count > 0
      WHERE r.sweep_id = ANY($1::uuid[])
      ORDER BY r.sweep_id, r.n, r.r`,
    [sweepIds],
  );
}

/** The config of the variation a run belongs to (the best trial's, on the sweep page). */
export async function variationConfig(
  db: Queryable,
  runId: string,
): Promise<Record<string, unknown> | undefined> {
  const rows = await db.query<{ config_json: Record<string, unknown> }>(
    `SELECT v.config_json FROM runs r JOIN variations v ON v.experiment_id = r.experiment_id AND v.n = r.n
      WHERE r.id = $1`,
    [runId],
  );
  return rows[0]?.config_json;
}

/** Up to `limit` metric keys the sweep's runs logged, in byte order: what a missing objective might be. */
export async function sweepMetricKeys(db: Queryable, sweepId: string, limit: number): Promise<string[]> {
  const rows = await db.query<{ key: string }>(
    `SELECT DISTINCT m.key COLLATE "C" AS key FROM runs r JOIN metric_series m ON m.run_id = r.id
      WHERE r.sweep_id = $1 AND m.count > 0 ORDER BY 1 LIMIT $2`,
    [sweepId, limit],
  );
  return rows.map((row) => row.key);
}

/** The experiment's sweeps after the one `afterId`, newest first, up to `limit`; only visible ones. */
export async function listSweeps(
  db: Queryable,
  userId: string,
  experimentId: string,
  afterId: string | undefined,
  limit: number,
): Promise<SweepRow[]> {
  return db.query<SweepRow>(
    `SELECT s.id, s.experiment_id, s.workflow_id, s.spec, s.concurrency, s.created_by, s.created_at
       FROM sweeps s JOIN experiments e ON e.id = s.experiment_id
      WHERE s.experiment_id = $2 AND ${experimentVisible('e', '$1')}
        AND ($3::uuid IS NULL OR (s.created_at, s.id) < (SELECT c.created_at, c.id FROM sweeps c WHERE c.id = $3))
      ORDER BY s.created_at DESC, s.id DESC LIMIT $4`,
    [userId, experimentId, afterId ?? null, limit],
  );
}
