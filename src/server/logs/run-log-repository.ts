import type { Principal } from '../auth/principal.ts';
import type { Queryable, Tx } from '../db/database.ts';
import { RUN_ADDRESSED, runAddress, type RunKey } from '../runs/run-repository.ts';

/**
 * Where a run whose log got a chunk (announceStored) or whose state changed (migration 019's trigger) is
 * announced (payload: run ids, comma-separated); the log follows waiting on it answer then.
 */
export const RUN_LOG_CHANNEL = 'assay_run_log';

/** One notice naming these runs, in a statement of its own (a transaction that writes nothing: no flush). */
export async function announceStored(db: Queryable, runIds: readonly string[]): Promise<void> {
  await db.query(`SELECT pg_notify($1, $2)`, [RUN_LOG_CHANNEL, runIds.join(',')]);
}

/** A run's log summary (migration 019's `run_logs`); all zeros for a run that has logged nothing. */
export interface LogSummary {
  last_seq: number;
  lines: number;
  bytes: number;
  head_bytes: number;
  head_last_seq: number | null;
  dropped_through: number;
  dropped_lines: number;
  dropped_bytes: number;
}

const EMPTY: LogSummary = {
  last_seq: 0,
  lines: 0,
  bytes: 0,
  head_bytes: 0,
  head_last_seq: null,
  dropped_through: 0,
  dropped_lines: 0,
  dropped_bytes: 0,
};

const SUMMARY_COLUMNS = `l.last_seq, l.lines, l.bytes, l.head_bytes, l.head_last_seq, l.dropped_through,
  l.dropped_lines, l.dropped_bytes`;

/** bigint columns arrive as strings from node-postgres: numbers here (seqs stay below 2^53). */
function toSummary(row: Record<string, unknown> | undefined): LogSummary {
  if (!row || row.last_seq === null || row.last_seq === undefined) return { ...EMPTY };
  const n = (v: unknown) => Number(v);
  return {
    last_seq: n(row.last_seq),
    lines: n(row.lines),
    bytes: n(row.bytes),
    head_bytes: n(row.head_bytes),
    head_last_seq: row.head_last_seq === null ? null : n(row.head_last_seq),
    dropped_through: n(row.dropped_through),
    dropped_lines: n(row.dropped_lines),
    dropped_bytes: n(row.dropped_bytes),
  };
}

/** The run a log call addresses, whether it takes lines now, and its log's summary. */
export interface RunLogState {
  run_id: string;
  state: string;
  ended_at: Date | null;
  /** Started, and not ended longer ago than the grace. */
  accepting: boolean;
  summary: LogSummary;
}

export interface ChunkToStore {
  firstSeq: number;
  lastSeq: number;
  rawBytes: number;
  body: Buffer;
}

export interface FastAppend {
  run: Omit<RunLogState, 'summary'> | undefined;
  /** Set when the chunk was stored by the fast path: the summary after it. */
  stored: LogSummary | undefined;
}

/**
 * The common append in one statement (one round trip, atomic without a transaction): finds the run as
 * RUN_ADDRESSED does (a worker key reaches only its own run), and when it takes lines, the chunk follows the
 * stored log directly (first seq = last seq + 1) and fits the cap's half it lands in without dropping,
 * stores the chunk and moves the summary. The UPDATE's condition is re-checked on the locked row, so of two
 * racing sends of one chunk only one matches; everything else (the first chunk, a resend, a gap, the cap)
 * is left to `appendSlow`.
 */
export async function appendFast(
  db: Queryable,
  principal: Principal,
  key: RunKey,
  graceMs: number,
  halfCap: number,
  chunk: ChunkToStore,
): Promise<FastAppend> {
  const rows = await db.query<Record<string, unknown>>(
    `WITH run AS (
       SELECT r.id, r.state, r.ended_at,
              r.state <> 'pending' AND (r.ended_at IS NULL OR r.ended_at >= now() - make_interval(secs => $6::float8 / 1000)) AS accepting
         FROM runs r JOIN experiments e ON ${RUN_ADDRESSED}),
     s AS (
       UPDATE run_logs l SET last_seq = $8::bigint, lines = l.lines + ($8::bigint - $7::bigint + 1),
              bytes = l.bytes + $9::bigint,
              head_bytes = CASE WHEN l.head_last_seq IS NULL THEN l.head_bytes + $9::bigint ELSE l.head_bytes END
         FROM run
        WHERE run.accepting AND l.run_id = run.id AND l.last_seq = $7::bigint - 1
          AND CASE WHEN l.head_last_seq IS NULL THEN l.head_bytes + $9::bigint <= $11::bigint
                   ELSE l.bytes - l.head_bytes + $9::bigint <= $11::bigint END
        RETURNING ${SUMMARY_COLUMNS}, l.run_id AS log_run_id),
     c AS (
       INSERT INTO run_log_chunks (run_id, first_seq, last_seq, raw_bytes, body)
       SELECT s.log_run_id, $7::bigint, $8::bigint, $9::bigint, $10::bytea FROM s)
     SELECT run.id AS run_id, run.state, run.ended_at, run.accepting, s.*
       FROM run LEFT JOIN s ON true`,
    [
      ...runAddress(principal, key),
      graceMs,
      chunk.firstSeq,
      chunk.lastSeq,
      chunk.rawBytes,
      chunk.body,
      halfCap,
    ],
  );
  const row = rows[0];
  if (!row) return { run: undefined, stored: undefined };
  const run = {
    run_id: row.run_id as string,
    state: row.state as string,
    ended_at: row.ended_at as Date | null,
    accepting: row.accepting as boolean,
  };
  return { run, stored: row.last_seq === null ? undefined : toSummary(row) };
}

/** Creates the run's summary row if missing and locks it: appends to one run's log go one at a time here. */
export async function lockSummary(tx: Tx, runId: string): Promise<LogSummary> {
  await tx.query(`INSERT INTO run_logs (run_id) VALUES ($1) ON CONFLICT (run_id) DO NOTHING`, [runId]);
  const rows = await tx.query<Record<string, unknown>>(
    `SELECT ${SUMMARY_COLUMNS} FROM run_logs l WHERE l.run_id = $1 FOR UPDATE`,
    [runId],
  );
  return toSummary(rows[0]);
}

/** The seq ranges stored chunks hold within first…last, in order. */
export async function storedRanges(
  db: Queryable,
  runId: string,
  first: number,
  last: number,
): Promise<{ first: number; last: number }[]> {
  const rows = await db.query<{ first_seq: string | number; last_seq: string | number }>(
    `SELECT first_seq, last_seq FROM run_log_chunks
      WHERE run_id = $1 AND first_seq <= $3::bigint AND last_seq >= $2::bigint ORDER BY first_seq`,
    [runId, first, last],
  );
  return rows.map((r) => ({ first: Number(r.first_seq), last: Number(r.last_seq) }));
}

export async function insertChunk(tx: Tx, runId: string, chunk: ChunkToStore): Promise<void> {
  await tx.query(
    `INSERT INTO run_log_chunks (run_id, first_seq, last_seq, raw_bytes, body) VALUES ($1, $2, $3, $4, $5)`,
    [runId, chunk.firstSeq, chunk.lastSeq, chunk.rawBytes, chunk.body],
  );
}

/**
 * Drops the oldest tail chunks (first seq past `headLastSeq`) until the tail holds at most `halfCap` bytes,
 * never the newest chunk; answers what went.
 */
export async function dropOldestTail(
  tx: Tx,
  runId: string,
  headLastSeq: number,
  halfCap: number,
): Promise<{ lines: number; bytes: number; through: number }> {
  const rows = await tx.query<{ lines: string | null; bytes: string | null; through: string | null }>(
    `WITH tail AS (
       SELECT first_seq, raw_bytes, sum(raw_bytes) OVER (ORDER BY first_seq DESC) AS newer
         FROM run_log_chunks WHERE run_id = $1 AND first_seq > $2::bigint),
     gone AS (
       DELETE FROM run_log_chunks c USING tail t
        WHERE c.run_id = $1 AND c.first_seq = t.first_seq AND t.newer > $3::bigint AND t.newer > t.raw_bytes
        RETURNING c.first_seq, c.last_seq, c.raw_bytes)
     SELECT sum(last_seq - first_seq + 1) AS lines, sum(raw_bytes) AS bytes, max(last_seq) AS through FROM gone`,
    [runId, headLastSeq, halfCap],
  );
  const row = rows[0];
  return {
    lines: Number(row?.lines ?? 0),
    bytes: Number(row?.bytes ?? 0),
    through: Number(row?.through ?? 0),
  };
}

export async function writeSummary(tx: Tx, runId: string, s: LogSummary): Promise<void> {
  await tx.query(
    `UPDATE run_logs SET last_seq = $2, lines = $3, bytes = $4, head_bytes = $5, head_last_seq = $6,
            dropped_through = $7, dropped_lines = $8, dropped_bytes = $9
      WHERE run_id = $1`,
    [
      runId,
      s.last_seq,
      s.lines,
      s.bytes,
      s.head_bytes,
      s.head_last_seq,
      s.dropped_through,
      s.dropped_lines,
      s.dropped_bytes,
    ],
  );
}

/** The run a read addresses (visible to the caller), with its log's summary; undefined: no such run. */
export async function findLogState(
  db: Queryable,
  principal: Principal,
  key: RunKey,
): Promise<RunLogState | undefined> {
  const rows = await db.query<Record<string, unknown>>(
    `SELECT r.id AS run_id, r.state, r.ended_at, ${SUMMARY_COLUMNS}
       FROM runs r JOIN experiments e ON ${RUN_ADDRESSED} LEFT JOIN run_logs l ON l.run_id = r.id`,
    runAddress(principal, key),
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    run_id: row.run_id as string,
    state: row.state as string,
    ended_at: row.ended_at as Date | null,
    accepting: false,
    summary: toSummary(row),
  };
}

export interface StoredChunk {
  first_seq: number;
  last_seq: number;
  body: Uint8Array;
}

/**
 * Up to `limit` chunks holding seqs past `after`, in order: from the chunk holding `after + 1` (or the
 * next one), found by the primary key, so a read deep into a long log does not scan its start.
 */
export async function chunksAfter(
  db: Queryable,
  runId: string,
  after: number,
  limit: number,
): Promise<StoredChunk[]> {
  const rows = await db.query<{ first_seq: string | number; last_seq: string | number; body: Uint8Array }>(
    `SELECT first_seq, last_seq, body FROM run_log_chunks
      WHERE run_id = $1 AND last_seq > $2::bigint
        AND first_seq >= COALESCE((SELECT max(first_seq) FROM run_log_chunks
                                    WHERE run_id = $1 AND first_seq <= $2::bigint), 0)
      ORDER BY first_seq LIMIT $3`,
    [runId, after, limit],
  );
  return rows.map((r) => ({ first_seq: Number(r.first_seq), last_seq: Number(r.last_seq), body: r.body }));
}

/** What a run's log takes at rest: its chunks, their text's size and their stored (compressed) size. */
export async function storedSize(
  db: Queryable,
  runId: string,
): Promise<{ chunks: number; raw_bytes: number; stored_bytes: number }> {
  const rows = await db.query<Record<string, unknown>>(
    `SELECT count(*) AS chunks, COALESCE(sum(raw_bytes), 0) AS raw_bytes,
            COALESCE(sum(octet_length(body)), 0) AS stored_bytes
       FROM run_log_chunks WHERE run_id = $1`,
    [runId],
  );
  const row = rows[0] ?? {};
  return {
    chunks: Number(row.chunks),
    raw_bytes: Number(row.raw_bytes),
    stored_bytes: Number(row.stored_bytes),
  };
}
