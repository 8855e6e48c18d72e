import type { Queryable, Tx } from '../db/database.ts';
import { experimentVisible } from '../organizations/organization-repository.ts';

export interface SweepRow {
  id: string;
  experiment_id: string;
  workflow_id: string;
  spec: Record<string, unknown>;
  concurrency: number;
  created_by: string | null;
  created_at: Date;
}

const COLUMNS = 's.id, s.experiment_id, s.workflow_id, s.spec, s.concurrency, s.created_by, s.created_at';

/**
 * The experiment's state, its row locked for the transaction: variations, commit and runs then follow without
 * a race.
 */
export async function lockVisibleExperiment(
  tx: Tx,
  userId: string,
  experimentId: string,
): Promise<{ state: string } | undefined> {
  const rows = await tx.query<{ state: string }>(
    `SELECT e.state FROM experiments e WHERE e.id = $2 AND ${experimentVisible('e', '$1')} FOR UPDATE OF e`,
    [userId, experimentId],
  );
  return rows[0];
}

export async function insertSweep(
  tx: Tx,
  sweep: {
    id: string;
    experimentId: string;
    workflowId: string;
    spec: object;
    concurrency: number;
    createdBy: string;
  },
): Promise<SweepRow> {
  const rows = await tx.query<SweepRow>(
    `INSERT INTO sweeps AS s (id, experiment_id, workflow_id, spec, concurrency, created_by) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
    [sweep.id, sweep.experimentId, sweep.workflowId, sweep.spec, sweep.concurrency, sweep.createdBy],
  );
  return rows[0]!;
}

export async function findSweep(
  db: Queryable,
  userId: string,
  experimentId: string,
  sweepId: string,
): Promise<SweepRow | undefined> {
  const rows = await db.query<SweepRow>(
    `SELECT ${COLUMNS} FROM sweeps s JOIN experiments e ON e.id = s.experiment_id
      WHERE s.id = $3 AND s.experiment_id = $2 AND ${experimentVisible('e', '$1')}`,
    [userId, experimentId, sweepId],
  );
  return rows[0];
}

/** A sweep of the experiment made from exactly this spec: what a repeated request (after a 503) finds. */
export async function findSameSweep(
  db: Queryable,
  userId: string,
  experimentId: string,
  spec: object,
  concurrency: number,
  opts: { ignoreSeed?: boolean } = {},
): Promise<SweepRow | undefined> {
  // A seed the service chose is not in the request: the stored spec is compared without it.
  const stored = opts.ignoreSeed ? "(s.spec - 'seed')" : 's.spec';
  const rows = await db.query<SweepRow>(
    `SELECT ${COLUMNS} FROM sweeps s JOIN experiments e ON e.id = s.experiment_id
      WHERE s.experiment_id = $2 AND ${stored} = $3::jsonb AND s.concurrency = $4 AND ${experimentVisible('e', '$1')}
      ORDER BY s.created_at LIMIT 1`,
    [userId, experimentId, spec, concurrency],
  );
  return rows[0];
}

/** The runs the sweep made at its creation (grid, list, repeat), in order: neither recoveries nor retries. */
export async function firstRuns(
  db: Queryable,
  sweepId: string,
): Promise<{ id: string; n: number; r: number; workflow_id: string }[]> {
  return db.query(
    `SELECT r.id, r.n, r.r, r.workflow_id FROM runs r
      WHERE r.sweep_id = $1 AND r.recovers_run_id IS NULL AND r.retries_run_id IS NULL
        AND NOT EXISTS (SELECT 1 FROM variations v WHERE v.experiment_id = r.experiment_id AND v.n = r.n AND v.sweep_id = $1)
      ORDER BY r.n, r.r`,
    [sweepId],
  );
}

/** The experiment's variation numbers, in order. */
export async function variationNumbers(db: Queryable, experimentId: string): Promise<number[]> {
  const rows = await db.query<{ n: number }>('SELECT n FROM variations WHERE experiment_id = $1 ORDER BY n', [
    experimentId,
  ]);
  return rows.map((r) => r.n);
}
