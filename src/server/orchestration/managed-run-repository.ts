import type { Principal } from '../auth/principal.ts';
import type { Queryable } from '../db/database.ts';
import { managedRunWorkflowId } from '../../orchestrator/orchestrator.ts';
import { RUN_ADDRESSED, RUN_COLUMNS, runAddress, type RunKey, type RunRow } from '../runs/run-repository.ts';

// Making runs managed: their workflow id is the orchestrator's naming, so these live on its side.

/**
 * A managed run beside the variation's others, numbered from the same counter as insertRun, in one statement
 * too; no tenancy check (sweeps check it before, recovery runs belong to the orchestrator). Undefined unless
 * the experiment is committed.
 */
export async function insertManagedRun(
  db: Queryable,
  run: {
    experimentId: string;
    n: number;
    provisionedBy: string | null;
    sweepId: string | null;
    recoversRunId: string | null;
    /** The failed sweep run this one retries. */
    retriesRunId?: string | null;
    /** A repeat sweep's seed, which the run's config carries. */
    seed?: number | null;
    /** Its place in the compute queue (the sweep's, or the run it recovers or retries). */
    priority?: number;
    /** The name and tags of the run it recovers or retries: the same training, carried on. */
    name?: string | null;
    tags?: string[];
  },
): Promise<RunRow | undefined> {
  // The workflow id is made of the run's address, and r is known only inside the statement: the id is built
  // with a marker for r (16 digits, longer than any run of digits a uuid or an int4 can hold) and SQL puts
  // r in.
  const marker = String(Number.MAX_SAFE_INTEGER);
  const [head, tail, ...more] = managedRunWorkflowId(run.experimentId, run.n, Number.MAX_SAFE_INTEGER).split(
    marker,
  );
  if (tail === undefined || more.length > 0) throw new Error('managed run workflow id: r must appear once');
  const rows = await db.query<RunRow>(
    `WITH counter AS (
       UPDATE variations v SET next_run_r = v.next_run_r + 1 FROM experiments e
        WHERE e.id = v.experiment_id AND v.experiment_id = $1 AND v.n = $2 AND e.state = 'committed'
        RETURNING v.experiment_id, v.n, v.next_run_r - 1 AS r)
     INSERT INTO runs AS r (experiment_id, n, r, managed, workflow_id, provisioned_by, sweep_id, recovers_run_id,
                            retries_run_id, seed, priority, name, tags)
     SELECT experiment_id, n, r, true, $3 || r::text || $4, $5, $6, $7, $8, $9, $10, $11, $12::text[]
       FROM counter RETURNING ${RUN_COLUMNS}`,
    [
      run.experimentId,
      run.n,
      head,
      tail,
      run.provisionedBy,
      run.sweepId,
      run.recoversRunId,
      run.retriesRunId ?? null,
      run.seed ?? null,
      run.priority ?? 0,
      run.name ?? null,
      run.tags ?? [],
    ],
  );
  return rows[0];
}

/**
 * Makes the run managed in one conditional UPDATE: it must be pending, or managed already (then in any state,
 * so a repeated provision finds the same workflow). The first provisioner stays the key owner. A priority
 * given is set while the run is pending (the queue copies it when the run joins).
 */
export async function markManaged(
  db: Queryable,
  principal: Principal,
  key: RunKey,
  priority?: number,
): Promise<RunRow | undefined> {
  const rows = await db.query<RunRow>(
    `UPDATE runs r SET managed = true, workflow_id = COALESCE(r.workflow_id, $6), provisioned_by = COALESCE(r.provisioned_by, $1),
            priority = CASE WHEN $7::int IS NOT NULL AND r.state = 'pending' THEN $7::int ELSE r.priority END
       FROM experiments e
      WHERE ${RUN_ADDRESSED} AND (r.managed OR r.state = 'pending')
      RETURNING ${RUN_COLUMNS}`,
    [...runAddress(principal, key), managedRunWorkflowId(key.experimentId, key.n, key.r), priority ?? null],
  );
  return rows[0];
}
