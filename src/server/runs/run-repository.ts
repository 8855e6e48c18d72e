import type { Principal } from '../auth/principal.ts';
import type { Queryable } from '../db/database.ts';
import { RUN_MOVES, type RunMove } from '@assay/contract';
import { experimentVisible } from '../organizations/organization-repository.ts';

export interface RunRow {
  id: string;
  experiment_id: string;
  n: number;
  r: number;
  state: string;
  failure_reason: string | null;
  failure_message: string | null;
  environment: Record<string, unknown> | null;
  config_read_at: Date | null;
  started_at: Date | null;
  last_heartbeat_at: Date | null;
  ended_at: Date | null;
  managed: boolean;
  instance: Record<string, unknown> | null;
  workflow_id: string | null;
  cancel_requested: boolean;
  created_at: Date;
  provisioned_by: string | null;
  recovers_run_id: string | null;
  sweep_id: string | null;
  cancel_reason: string | null;
  seed: string | null;
  retries_run_id: string | null;
  priority: number;
  name: string | null;
  tags: string[];
  notes: string;
  archived_at: Date | null;
  resumes_from_run_id: string | null;
}

export interface RunKey {
  experimentId: string;
  n: number;
  r: number;
}

/** The run a route's path names (`…/experiments/:id/variations/:n/runs/:r`). */
export const runKeyOf = (p: { id: string; n: number; r: number }): RunKey => ({
  experimentId: p.id,
  n: p.n,
  r: p.r,
});

/** Every column of RunRow, for a `runs` row aliased `r`. */
export const RUN_COLUMNS = `r.id, r.experiment_id, r.n, r.r, r.state, r.failure_reason, r.failure_message, r.environment, r.config_read_at,
  r.started_at, r.last_heartbeat_at, r.ended_at, r.managed, r.instance, r.workflow_id, r.cancel_requested, r.created_at,
  r.provisioned_by, r.recovers_run_id, r.sweep_id, r.cancel_reason, r.seed, r.retries_run_id, r.priority,
  r.name, r.tags, r.notes, r.archived_at, r.resumes_from_run_id`;
const COLUMNS = RUN_COLUMNS;

/**
 * The run addressed by (experiment, n, r), visible to the caller: $1 user, $2 experiment, $3 n, $4 r, and $5
 * the worker key's run (NULL for other keys), so a worker key reaches its own run and nothing else.
 */
export const RUN_ADDRESSED = `e.id = r.experiment_id AND r.experiment_id = $2 AND r.n = $3 AND r.r = $4
  AND ($5::uuid IS NULL OR r.id = $5::uuid) AND ${experimentVisible('e', '$1')}`;

export function runAddress(principal: Principal, key: RunKey): unknown[] {
  return [principal.userId, key.experimentId, key.n, key.r, principal.runId];
}

/** How a new run is labelled, and the run whose checkpoints it resumes from. */
export interface RunLabels {
  name?: string | null;
  tags?: string[];
  notes?: string;
  resumesFromRunId?: string | null;
}

/**
 * Takes the next run number from the variation's counter and inserts the run, in one statement (one round
 * trip, one commit): the UPDATE locks the variation row, so concurrent creations queue up, and a failed
 * insert rolls the number back with it (no gaps, no duplicates). Undefined when the variation is missing,
 * invisible, or its experiment is not committed.
 */
export async function insertRun(
  db: Queryable,
  userId: string,
  experimentId: string,
  n: number,
  labels: RunLabels = {},
): Promise<RunRow | undefined> {
  const rows = await db.query<RunRow>(
    `WITH counter AS (
       UPDATE variations v SET next_run_r = v.next_run_r + 1 FROM experiments e
        WHERE e.id = v.experiment_id AND v.experiment_id = $2 AND v.n = $3 AND e.state = 'committed' AND ${experimentVisible('e', '$1')}
        RETURNING v.experiment_id, v.n, v.next_run_r - 1 AS r)
     INSERT INTO runs AS r (experiment_id, n, r, name, tags, notes, resumes_from_run_id)
     SELECT experiment_id, n, r, $4, $5::text[], $6, $7 FROM counter RETURNING ${COLUMNS}`,
    [
      userId,
      experimentId,
      n,
      labels.name ?? null,
      labels.tags ?? [],
      labels.notes ?? '',
      labels.resumesFromRunId ?? null,
    ],
  );
  return rows[0];
}

export async function findRun(db: Queryable, principal: Principal, key: RunKey): Promise<RunRow | undefined> {
  const rows = await db.query<RunRow>(
    `SELECT ${COLUMNS} FROM runs r JOIN experiments e ON ${RUN_ADDRESSED}`,
    runAddress(principal, key),
  );
  return rows[0];
}

/** Which runs a list answers: one state, runs holding every one of `tags`, archived runs too or not. */
export interface RunFilter {
  state?: string;
  tags?: string[];
  archived?: boolean;
}

/** The filter's conditions on `runs r`, its values pushed onto `params`. */
function filterConditions(filter: RunFilter, params: unknown[]): string[] {
  const where: string[] = [];
  if (filter.state) where.push(`r.state = $${params.push(filter.state)}`);
  // The GIN index on tags serves @>.
  if (filter.tags && filter.tags.length > 0) where.push(`r.tags @> $${params.push(filter.tags)}::text[]`);
  if (!filter.archived) where.push('r.archived_at IS NULL');
  return where;
}

export async function listRuns(
  db: Queryable,
  principal: Principal,
  experimentId: string,
  n: number,
  filter: RunFilter = {},
): Promise<RunRow[]> {
  const params: unknown[] = [principal.userId, experimentId, n, principal.runId];
  const where = [
    'r.experiment_id = $2 AND r.n = $3 AND ($4::uuid IS NULL OR r.id = $4::uuid)',
    experimentVisible('e', '$1'),
    ...filterConditions(filter, params),
  ];
  return db.query<RunRow>(
    `SELECT ${COLUMNS} FROM runs r JOIN experiments e ON e.id = r.experiment_id
      WHERE ${where.join(' AND ')} ORDER BY r.r`,
    params,
  );
}

/**
 * A page of the runs of every variation of an experiment, newest first: (created_at, n, r) descending, which
 * orders runs created in one transaction (a sweep's) too; `afterId` is the last run of the previous page.
 */
export async function listExperimentRuns(
  db: Queryable,
  principal: Principal,
  experimentId: string,
  filter: RunFilter & { afterId?: string; limit: number },
): Promise<RunRow[]> {
  const params: unknown[] = [principal.userId, experimentId, principal.runId, filter.limit];
  const where = [
    'r.experiment_id = $2 AND ($3::uuid IS NULL OR r.id = $3::uuid)',
    experimentVisible('e', '$1'),
    ...filterConditions(filter, params),
  ];
  if (filter.afterId)
    where.push(
      `(r.created_at, r.n, r.r) < (SELECT c.created_at, c.n, c.r FROM runs c WHERE c.id = $${params.push(filter.afterId)} AND c.experiment_id = $2)`,
    );
  return db.query<RunRow>(
    `SELECT ${COLUMNS} FROM runs r JOIN experiments e ON e.id = r.experiment_id
      WHERE ${where.join(' AND ')} ORDER BY r.created_at DESC, r.n DESC, r.r DESC LIMIT $4`,
    params,
  );
}

/** What PATCH …/runs/{r} changes; a field left undefined stays as it is (`name: null` clears the name). */
export interface RunLabelChanges {
  name?: string | null;
  tags?: string[];
  notes?: string;
  archived?: boolean;
}

/**
 * Relabels or (un)archives a run the caller may address; undefined when there is none. Archiving an archived
 * run keeps its first archived_at.
 */
export async function updateRunLabels(
  db: Queryable,
  principal: Principal,
  key: RunKey,
  changes: RunLabelChanges,
): Promise<RunRow | undefined> {
  const rows = await db.query<RunRow>(
    `UPDATE runs r SET name = CASE WHEN $6::boolean THEN $7 ELSE r.name END,
            tags = COALESCE($8::text[], r.tags),
            notes = COALESCE($9, r.notes),
            archived_at = CASE WHEN $10::boolean IS NULL THEN r.archived_at
                               WHEN $10::boolean THEN COALESCE(r.archived_at, now()) ELSE NULL END
       FROM experiments e
      WHERE ${RUN_ADDRESSED}
      RETURNING ${COLUMNS}`,
    [
      ...runAddress(principal, key),
      changes.name !== undefined,
      changes.name ?? null,
      changes.tags ?? null,
      changes.notes ?? null,
      changes.archived ?? null,
    ],
  );
  return rows[0];
}

/**
 * What a cancel before the runner started sets, whoever asks (a user, or the orchestrator for a managed run).
 */
export const CANCELLED_BEFORE_START = `ended_at = now(), failure_reason = 'abandoned',
  failure_message = 'cancelled before start', cancel_requested = true`;

/**
 * Applies a move in one conditional UPDATE: the WHERE clause holds the allowed source states, so two racing
 * moves cannot both win. `sets` may refer to parameters from $7 on; `guard` adds conditions. Undefined when
 * the run is missing, invisible, or not in a state the move starts from.
 */
async function applyRunMove(
  db: Queryable,
  principal: Principal,
  key: RunKey,
  move: RunMove,
  sets: string,
  extra: unknown[] = [],
  guard = '',
): Promise<RunRow | undefined> {
  const { from, to } = RUN_MOVES[move];
  const rows = await db.query<RunRow>(
    `UPDATE runs r SET state = $6, ${sets} FROM experiments e
      WHERE ${RUN_ADDRESSED} AND r.state = ANY($${7 + extra.length}::text[]) ${guard}
      RETURNING ${COLUMNS}`,
    [...runAddress(principal, key), to, ...extra, from],
  );
  return rows[0];
}

// One function per move; each is undefined when the move does not apply (see applyRunMove).

/** pending → running, only once the runner has read its config. */
export const startRun = (db: Queryable, p: Principal, key: RunKey, environment: Record<string, unknown>) =>
  applyRunMove(
    db,
    p,
    key,
    'start',
    'started_at = now(), last_heartbeat_at = now(), environment = $7',
    [environment],
    'AND r.config_read_at IS NOT NULL',
  );

export const heartbeatRun = (db: Queryable, p: Principal, key: RunKey) =>
  applyRunMove(db, p, key, 'heartbeat', 'last_heartbeat_at = now()');

export interface HeartbeatAsk {
  principal: Principal;
  key: RunKey;
}

export interface HeartbeatRow {
  state: string;
  cancel_requested: boolean;
  cancel_reason: string | null;
  last_heartbeat_at: Date | null;
}

/**
 * The heartbeats of many runs in one statement, one commit: per ask (same index), the run's state, cancel
 * flag and heartbeat time, or undefined where the move does not apply (run missing, invisible to that caller,
 * or not running), each ask checked with its own principal as RUN_ADDRESSED does. A run asked twice is
 * updated once and both asks get its row. The rows are locked in id order, as the watchdog locks them
 * (failSilentRuns), so two batches sharing runs, or a batch and the watchdog, wait for each other instead of
 * deadlocking; a run the watchdog failed first is skipped by the UPDATE's re-check of its state, and answers
 * 409 like any late beat. Each lookup is a LATERAL … LIMIT 1 on the (experiment, n, r) key and the lock goes
 * by primary key, so the plan stays a handful of index probes per ask even on tables the planner has no
 * statistics for yet.
 */
export async function heartbeatRuns(
  db: Queryable,
  asks: readonly HeartbeatAsk[],
): Promise<(HeartbeatRow | undefined)[]> {
  const { from, to } = RUN_MOVES.heartbeat;
  const rows = await db.query<HeartbeatRow & { i: number }>(
    `WITH ask AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::int[], $4::int[], $5::uuid[]) WITH ORDINALITY
         AS a(user_id, experiment_id, n, r, run_id, i)),
     target AS (
       SELECT a.i, x.id FROM ask a
         CROSS JOIN LATERAL (
           SELECT r.id FROM runs r
            WHERE r.experiment_id = a.experiment_id AND r.n = a.n AND r.r = a.r AND (a.run_id IS NULL OR r.id = a.run_id)
            LIMIT 1) x
         JOIN experiments e ON e.id = a.experiment_id AND ${experimentVisible('e', 'a.user_id')}),
     locked AS (
       SELECT r.id FROM runs r WHERE r.id = ANY(ARRAY(SELECT id FROM target)) ORDER BY r.id FOR UPDATE),
     beat AS (
       UPDATE runs r SET state = $6, last_heartbeat_at = now() FROM locked l
        WHERE r.id = l.id AND r.state = ANY($7::text[])
       RETURNING r.id, r.state, r.cancel_requested, r.cancel_reason, r.last_heartbeat_at)
     SELECT t.i::int AS i, b.state, b.cancel_requested, b.cancel_reason, b.last_heartbeat_at
       FROM target t JOIN beat b ON b.id = t.id`,
    [
      asks.map((a) => a.principal.userId),
      asks.map((a) => a.key.experimentId),
      asks.map((a) => a.key.n),
      asks.map((a) => a.key.r),
      asks.map((a) => a.principal.runId),
      to,
      from,
    ],
  );
  const answers = new Array<HeartbeatRow | undefined>(asks.length);
  for (const { i, ...row } of rows) answers[i - 1] = row;
  return answers;
}

/** running → succeeded, unless the run was asked to stop (then undefined, as for a run not running). */
export const succeedRun = (db: Queryable, p: Principal, key: RunKey) =>
  applyRunMove(db, p, key, 'succeed', 'ended_at = now()', [], 'AND NOT r.cancel_requested');

/** A running run asked to stop fails `abandoned` (or `stopped_early`); undefined for any other run. */
export const failStoppedRun = (db: Queryable, p: Principal, key: RunKey, message: string) =>
  applyRunMove(
    db,
    p,
    key,
    'fail',
    `ended_at = now(), failure_reason = ${failureReasonOf('$7')}, failure_message = $8`,
    ['abandoned', message],
    'AND r.cancel_requested',
  );

/**
 * The failure reason a fail move records, from the parameter holding the reported one: a run that the sweep's
 * early stopping asked to stop and that ends `abandoned` (its runner's report after the cancel, or the saga's
 * after the grace) failed `stopped_early`. Every fail move of a `runs r` row sets it through this.
 */
export const failureReasonOf = (param: string) =>
  `CASE WHEN ${param}::text = 'abandoned' AND r.cancel_reason = 'stopped_early' THEN 'stopped_early' ELSE ${param}::text END`;

export const failRun = (db: Queryable, p: Principal, key: RunKey, reason: string, message: string | null) =>
  applyRunMove(
    db,
    p,
    key,
    'fail',
    `ended_at = now(), failure_reason = ${failureReasonOf('$7')}, failure_message = $8`,
    [reason, message],
  );

/** A pending run fails `abandoned` at once. */
export const cancelPendingRun = (db: Queryable, p: Principal, key: RunKey) =>
  applyRunMove(db, p, key, 'cancel_pending', CANCELLED_BEFORE_START);

/**
 * A running run is asked to stop (its runner hears it through the control long-poll, or its heartbeat); a
 * reason set first (a sweep's early stop) is kept.
 */
export const requestRunCancel = (db: Queryable, p: Principal, key: RunKey) =>
  applyRunMove(
    db,
    p,
    key,
    'request_cancel',
    "cancel_requested = true, cancel_reason = COALESCE(r.cancel_reason, 'cancelled')",
  );

/**
 * Where migration 015's trigger announces a run whose state or cancel flag changed (payload: the run's id);
 * the control long-polls waiting on it answer then.
 */
export const RUN_CONTROL_CHANNEL = 'assay_run_control';

export interface RunControlRow {
  id: string;
  state: string;
  cancel_requested: boolean;
  cancel_reason: string | null;
}

/** What the runner's control long-poll answers, for a run the caller may address. */
export async function findRunControl(
  db: Queryable,
  principal: Principal,
  key: RunKey,
): Promise<RunControlRow | undefined> {
  const rows = await db.query<RunControlRow>(
    `SELECT r.id, r.state, r.cancel_requested, r.cancel_reason FROM runs r JOIN experiments e ON ${RUN_ADDRESSED}`,
    runAddress(principal, key),
  );
  return rows[0];
}

/** The run's variation config; records when the runner first read it (start requires that it did). */
export async function readConfig(db: Queryable, principal: Principal, key: RunKey) {
  const rows = await db.query<{
    config_json: object;
    accelerate_config_json: object;
    launch_config: object;
    config_read_at: Date;
    seed: string | null;
  }>(
    `UPDATE runs r SET config_read_at = COALESCE(r.config_read_at, now())
       FROM experiments e, variations v
      WHERE ${RUN_ADDRESSED} AND v.experiment_id = r.experiment_id AND v.n = r.n
      RETURNING v.config_json, v.accelerate_config_json, v.launch_config, r.config_read_at, r.seed`,
    runAddress(principal, key),
  );
  return rows[0];
}

/**
 * Fails every running run silent for longer than the timeout, in one statement: concurrent replicas both run
 * it, and Postgres re-checks `state = 'running'` and the heartbeat time on each row it locks, so each run is
 * failed exactly once, and a run whose heartbeat committed meanwhile is spared. Rows are locked in id order,
 * as heartbeatRuns locks them, so neither deadlocks the other.
 */
export async function failSilentRuns(
  db: Queryable,
  timeoutMs: number,
): Promise<{ id: string; workflow_id: string | null }[]> {
  return db.query<{ id: string; workflow_id: string | null }>(
    `WITH silent AS (
       SELECT id FROM runs
        WHERE state = 'running' AND last_heartbeat_at < now() - make_interval(secs => $1::float8 / 1000)
        ORDER BY id FOR UPDATE)
     UPDATE runs r SET state = 'failed', failure_reason = 'heartbeat_timeout', ended_at = now(),
            failure_message = 'no heartbeat for ' || $1::text || ' ms'
       FROM silent s WHERE r.id = s.id
      RETURNING r.id, r.workflow_id`,
    [timeoutMs],
  );
}
