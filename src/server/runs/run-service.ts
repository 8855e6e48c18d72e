import type { Principal } from '../auth/principal.ts';
import type { Db } from '../db/database.ts';
import { getVisibleExperiment } from '../experiments/experiment-service.ts';
import { decodeCursor, encodeCursor } from '../http/cursor.ts';
import { AppError, conflict, forbidden, notFound } from '../http/errors.ts';
import { iso } from '../http/schemas.ts';
import { parseTagFilter } from '../http/tag-filter.ts';
import { getVariation } from '../variations/variation-service.ts';
import { queuePlaces } from './compute-queue.ts';
import type { RunEvents } from './run-events.ts';
import * as repo from './run-repository.ts';
import {
  RUN_MOVES,
  type RunQueuePlace,
  type FailureReason,
  type Run,
  type RunHeartbeat,
  type RunMove,
  type RunState,
  type CancelReason,
  type CreateRunBody,
  type ListExperimentRunsQuery,
  type ListRunsQuery,
  type UpdateRunBody,
} from '@assay/contract';

/**
 * The one Run mapper; the orchestration side, when there is one, gives the workflow's Temporal UI link, and
 * the compute queue the place of a run that waits in it (getRunAnswer, listRuns).
 */
export function toApi(row: repo.RunRow, events: RunEvents, queue: RunQueuePlace | null = null): Run {
  return {
    id: row.id,
    experiment_id: row.experiment_id,
    n: row.n,
    r: row.r,
    // The table's CHECK constraints hold these to the contract's values.
    state: row.state as RunState,
    failure_reason: row.failure_reason as FailureReason | null,
    failure_message: row.failure_message,
    environment: row.environment,
    config_read_at: iso(row.config_read_at),
    started_at: iso(row.started_at),
    last_heartbeat_at: iso(row.last_heartbeat_at),
    ended_at: iso(row.ended_at),
    managed: row.managed,
    instance: row.instance,
    workflow_id: row.workflow_id,
    workflow_url: events.workflowUrl(row.workflow_id),
    recovers_run_id: row.recovers_run_id,
    cancel_requested: row.cancel_requested,
    cancel_reason: row.cancel_reason as CancelReason | null,
    // bigint comes back as text; a seed is below 2^31.
    seed: row.seed === null ? null : Number(row.seed),
    retries_run_id: row.retries_run_id,
    priority: row.priority,
    queue,
    name: row.name,
    tags: row.tags,
    notes: row.notes,
    archived_at: iso(row.archived_at),
    resumes_from_run_id: row.resumes_from_run_id,
    created_at: iso(row.created_at)!,
  };
}

export function refuseWorkerKey(principal: Principal): void {
  if (principal.runId) throw forbidden('worker_key_restricted', 'a worker key reaches only its own run');
}

/**
 * A new pending run, labelled as asked; `resume_from` names a run of the same experiment (its variation
 * defaults to the new run's) whose checkpoint chain the new run resumes from (GET …/checkpoint): 422
 * `resume_from_not_found` when the caller cannot see such a run.
 */
export async function createRun(
  db: Db,
  principal: Principal,
  experimentId: string,
  n: number,
  body: CreateRunBody,
  events: RunEvents,
) {
  refuseWorkerKey(principal);
  let resumesFromRunId: string | null = null;
  if (body?.resume_from) {
    const from = { experimentId, n: body.resume_from.n ?? n, r: body.resume_from.r };
    const found = await repo.findRun(db, principal, from);
    if (!found) {
      // The path's own variation first: a missing one is the path's 404, not the body's 422.
      await getVariation(db, principal, experimentId, n);
      throw new AppError(
        422,
        'resume_from_not_found',
        `resume_from: experiment ${experimentId} has no run ${from.n}.${from.r} to resume from`,
        { n: from.n, r: from.r },
      );
    }
    resumesFromRunId = found.id;
  }
  const row = await repo.insertRun(db, principal.userId, experimentId, n, {
    name: body?.name ?? null,
    tags: body?.tags ?? [],
    notes: body?.notes ?? '',
    resumesFromRunId,
  });
  if (row) return toApi(row, events);
  await getVariation(db, principal, experimentId, n);
  const experiment = await getVisibleExperiment(db, principal, experimentId);
  throw conflict(
    'experiment_not_runnable',
    `runs can be created only in a committed experiment; this one is ${experiment.state}`,
    { state: experiment.state },
  );
}

/** PATCH …/runs/{r}: relabel or (un)archive; the route refuses worker keys. */
export async function updateRun(
  db: Db,
  principal: Principal,
  key: repo.RunKey,
  body: UpdateRunBody,
  events: RunEvents,
) {
  refuseWorkerKey(principal);
  const row = await repo.updateRunLabels(db, principal, key, body);
  if (!row) throw notFound('run');
  const places = await queuePlaces(db, [row]);
  return toApi(row, events, places.get(row.id) ?? null);
}

export async function getRun(db: Db, principal: Principal, key: repo.RunKey) {
  const row = await repo.findRun(db, principal, key);
  if (!row) throw notFound('run');
  return row;
}

/** The run as GET answers it: with its place in the compute queue while it waits there. */
export async function getRunAnswer(db: Db, principal: Principal, key: repo.RunKey, events: RunEvents) {
  const row = await getRun(db, principal, key);
  const places = await queuePlaces(db, [row]);
  return toApi(row, events, places.get(row.id) ?? null);
}

const filterOf = (query: ListRunsQuery): repo.RunFilter => ({
  state: query.state,
  tags: parseTagFilter(query.tag),
  archived: query.archived ?? false,
});

export async function listRuns(
  db: Db,
  principal: Principal,
  experimentId: string,
  n: number,
  query: ListRunsQuery,
  events: RunEvents,
) {
  const filter = filterOf(query);
  if (!principal.runId) await getVariation(db, principal, experimentId, n);
  const rows = await repo.listRuns(db, principal, experimentId, n, filter);
  const places = await queuePlaces(db, rows);
  return { items: rows.map((row) => toApi(row, events, places.get(row.id) ?? null)) };
}

/** GET /experiments/{id}/runs: a page of the runs of every variation, newest first. */
export async function listExperimentRuns(
  db: Db,
  principal: Principal,
  experimentId: string,
  query: ListExperimentRunsQuery,
  events: RunEvents,
) {
  const filter = filterOf(query);
  const afterId = decodeCursor(query.cursor);
  await getVisibleExperiment(db, principal, experimentId);
  const limit = query.limit ?? 50;
  const rows = await repo.listExperimentRuns(db, principal, experimentId, {
    ...filter,
    ...(afterId ? { afterId } : {}),
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  const places = await queuePlaces(db, page);
  return {
    items: page.map((row) => toApi(row, events, places.get(row.id) ?? null)),
    next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]!.id) : null,
  };
}

export async function readRunConfig(db: Db, principal: Principal, key: repo.RunKey) {
  const found = await repo.readConfig(db, principal, key);
  if (!found) throw notFound('run');
  const { seed, ...config } = found;
  return {
    experiment_id: key.experimentId,
    n: key.n,
    r: key.r,
    ...config,
    // A repeat sweep's run reads its own seed at the config's top level (bigint comes back as text).
    config_json: seed === null ? config.config_json : { ...config.config_json, seed: Number(seed) },
    config_read_at: iso(config.config_read_at)!,
  };
}

/**
 * Explains why a move did not apply: 404 when the caller cannot see the run, 409 naming the state otherwise.
 */
async function refuse(
  db: Db,
  principal: Principal,
  key: repo.RunKey,
  move: RunMove,
  verb: string,
): Promise<never> {
  const run = await getRun(db, principal, key);
  if (move === 'start' && run.state === 'pending' && !run.config_read_at) {
    throw conflict(
      'config_not_read',
      'the runner must read its config (GET …/config) before it starts the run',
    );
  }
  throw conflict('invalid_state_transition', `cannot ${verb} a run that is ${run.state}`, {
    state: run.state,
    failure_reason: run.failure_reason,
    allowed_from: RUN_MOVES[move].from,
  });
}

/** A move that did not apply is explained by `refuse`. */
async function moved(
  db: Db,
  principal: Principal,
  key: repo.RunKey,
  m: RunMove,
  verb: string,
  row: repo.RunRow | undefined,
) {
  return row ?? refuse(db, principal, key, m, verb);
}

export const startRun = async (
  db: Db,
  p: Principal,
  key: repo.RunKey,
  environment: Record<string, unknown>,
) => moved(db, p, key, 'start', 'start', await repo.startRun(db, p, key, environment));

/** How long a heartbeat waits for others to share its statement, and how many make a statement go at once. */
const HEARTBEAT_WINDOW_MS = 2;
const HEARTBEAT_BATCH_MAX = 256;

export type Heartbeat = (p: Principal, key: repo.RunKey) => Promise<RunHeartbeat>;

/**
 * The heartbeat, coalesced: heartbeats that arrive within a few milliseconds share one UPDATE and one commit
 * (heartbeatRuns), which is what a heartbeat costs the database, instead of one commit each; each request
 * still waits for that commit, so an answered heartbeat is a stored one, and gets its own run's answer. A
 * heartbeat the batch does not move is explained on its own by `refuse` (404, or 409 for an ended run), as
 * before. Alone in its window, a heartbeat takes the one-run statement. PGlite has one connection: fewer
 * statements help there too.
 */
export function heartbeats(db: Db): Heartbeat {
  type Waiting = repo.HeartbeatAsk & {
    resolve(row: repo.HeartbeatRow | undefined): void;
    reject(error: unknown): void;
  };
  let waiting: Waiting[] = [];
  let timer: NodeJS.Timeout | undefined;
  const send = async (batch: Waiting[]) => {
    try {
      const rows =
        batch.length === 1
          ? [await repo.heartbeatRun(db, batch[0]!.principal, batch[0]!.key)]
          : await repo.heartbeatRuns(db, batch);
      batch.forEach((w, i) => w.resolve(rows[i]));
    } catch (error) {
      for (const w of batch) w.reject(error);
    }
  };
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const batch = waiting;
    waiting = [];
    void send(batch);
  };
  return async (principal, key) => {
    const row = await new Promise<repo.HeartbeatRow | undefined>((resolve, reject) => {
      waiting.push({ principal, key, resolve, reject });
      if (waiting.length >= HEARTBEAT_BATCH_MAX) flush();
      else timer ??= setTimeout(flush, HEARTBEAT_WINDOW_MS);
    });
    const run = row ?? (await refuse(db, principal, key, 'heartbeat', 'heartbeat'));
    return {
      state: run.state,
      cancel_requested: run.cancel_requested,
      cancel_reason: run.cancel_reason as CancelReason | null,
      last_heartbeat_at: iso(run.last_heartbeat_at),
    };
  };
}

/**
 * running → succeeded; but a run asked to stop (a cancel, an early stop) before its success is reported
 * fails instead (`abandoned`, or `stopped_early` by the fail move's rule): a stop that reached the program
 * late must not turn into a success.
 */
export async function succeedRun(db: Db, p: Principal, key: repo.RunKey) {
  const run =
    (await repo.succeedRun(db, p, key)) ??
    (await repo.failStoppedRun(db, p, key, 'the command exited 0 after the run was asked to stop'));
  return moved(db, p, key, 'succeed', 'succeed', run);
}

export const failRun = async (
  db: Db,
  p: Principal,
  key: repo.RunKey,
  reason: string,
  message: string | undefined,
) => moved(db, p, key, 'fail', 'fail', await repo.failRun(db, p, key, reason, message ?? null));

/**
 * Cancel: a pending run fails `abandoned` at once; a running one is asked to stop (its runner hears it on the
 * control long-poll, or in its heartbeat answer).
 */
export async function cancelRun(db: Db, p: Principal, key: repo.RunKey) {
  const pending = await repo.cancelPendingRun(db, p, key);
  return pending ?? moved(db, p, key, 'request_cancel', 'cancel', await repo.requestRunCancel(db, p, key));
}
