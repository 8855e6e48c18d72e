import {
  isTerminalRunState,
  MAX_LOG_LINE_BYTES,
  type AppendLogBody,
  type AppendLogResult,
  type LogDropped,
  type LogLine,
  type LogPage,
  type LogQuery,
} from '@assay/contract';
import type { Principal } from '../auth/principal.ts';
import type { Db, Tx } from '../db/database.ts';
import { badRequest, conflict, notFound } from '../http/errors.ts';
import { iso } from '../http/schemas.ts';
import type { RunKey } from '../runs/run-repository.ts';
import type { RunControlWaits } from '../runs/run-control-waits.ts';
import type { LogNotices } from './log-notices.ts';
import { decodeChunk, encodeChunk } from './run-log-codec.ts';
import * as repo from './run-log-repository.ts';

/** What a run's log may take: lines until `graceMs` after the run ended, `maxBytes` of text kept. */
export interface LogLimits {
  graceMs: number;
  maxBytes: number;
}

/**
 * POST …/logs: stores the chunk's lines whose seqs the log does not hold yet (a resend, or the overlap of
 * a chunk that partly repeats one, stores nothing twice), within the cap: the head is kept whole up to half
 * the cap, then the newest chunks up to the other half, the oldest of the tail dropped whole and counted.
 */
export async function appendLog(
  db: Db,
  principal: Principal,
  key: RunKey,
  body: AppendLogBody,
  limits: LogLimits,
  notices: Pick<LogNotices, 'stored'>,
): Promise<AppendLogResult> {
  for (const [i, line] of body.lines.entries())
    if (Buffer.byteLength(line.text) > MAX_LOG_LINE_BYTES)
      throw badRequest(
        'invalid_value',
        `lines/${i}/text is longer than ${MAX_LOG_LINE_BYTES} bytes of UTF-8`,
        [
          {
            path: `/lines/${i}/text`,
            message: `must be at most ${MAX_LOG_LINE_BYTES} bytes (split the line)`,
          },
        ],
      );
  // Compared before adding: past 2^53 the sum itself would round.
  if (body.first_seq > Number.MAX_SAFE_INTEGER - (body.lines.length - 1))
    throw badRequest('invalid_value', 'first_seq + lines goes past the largest seq', [
      { path: '/first_seq', message: `the chunk's last seq must be at most ${Number.MAX_SAFE_INTEGER}` },
    ]);
  const lastSeq = body.first_seq + body.lines.length - 1;
  const halfCap = Math.floor(limits.maxBytes / 2);
  const whole = { firstSeq: body.first_seq, lastSeq, ...encodeChunk(body.lines) };
  const fast = await repo.appendFast(db, principal, key, limits.graceMs, halfCap, whole);
  const run = fast.run;
  if (!run) throw notFound('run');
  if (!run.accepting) {
    if (run.state === 'pending')
      throw conflict('run_not_started', 'log lines are taken once the run has started', { state: run.state });
    throw conflict(
      'run_ended',
      `the run ended more than ${Math.round(limits.graceMs / 1000)} s ago and takes no more log lines`,
      { state: run.state, ended_at: iso(run.ended_at) },
    );
  }
  let summary = fast.stored;
  let stored = summary !== undefined;
  if (!summary)
    [summary, stored] = await db.transaction((tx) => appendSlow(tx, run.run_id, body, whole, halfCap));
  if (stored) notices.stored(run.run_id);
  return { last_seq: summary.last_seq, dropped: droppedOf(summary) };
}

/**
 * The append the fast path left: under the summary row's lock, store the pieces no chunk holds yet. Answers
 * the summary after it, and whether anything was stored.
 */
async function appendSlow(
  tx: Tx,
  runId: string,
  body: AppendLogBody,
  whole: repo.ChunkToStore,
  halfCap: number,
): Promise<[repo.LogSummary, boolean]> {
  const s = await repo.lockSummary(tx, runId);
  const covered = await repo.storedRanges(tx, runId, whole.firstSeq, whole.lastSeq);
  if (s.head_last_seq !== null && s.dropped_through > s.head_last_seq)
    covered.push({ first: s.head_last_seq + 1, last: s.dropped_through });
  const pieces = uncovered(whole.firstSeq, whole.lastSeq, covered);
  let tailGrew = false;
  for (const piece of pieces) {
    const chunk =
      piece.first === whole.firstSeq && piece.last === whole.lastSeq
        ? whole
        : {
            firstSeq: piece.first,
            lastSeq: piece.last,
            ...encodeChunk(body.lines.slice(piece.first - whole.firstSeq, piece.last - whole.firstSeq + 1)),
          };
    await repo.insertChunk(tx, runId, chunk);
    s.lines += chunk.lastSeq - chunk.firstSeq + 1;
    s.bytes += chunk.rawBytes;
    const inHead =
      s.head_last_seq === null
        ? chunk.firstSeq <= s.last_seq || s.head_bytes + chunk.rawBytes <= halfCap
        : chunk.lastSeq <= s.head_last_seq;
    if (inHead) s.head_bytes += chunk.rawBytes;
    else {
      // The first chunk that does not fit the head's half closes it: what follows is the tail.
      if (s.head_last_seq === null) s.head_last_seq = s.last_seq;
      tailGrew = true;
    }
    s.last_seq = Math.max(s.last_seq, chunk.lastSeq);
  }
  if (tailGrew && s.head_last_seq !== null && s.bytes - s.head_bytes > halfCap) {
    const gone = await repo.dropOldestTail(tx, runId, s.head_last_seq, halfCap);
    s.lines -= gone.lines;
    s.bytes -= gone.bytes;
    s.dropped_lines += gone.lines;
    s.dropped_bytes += gone.bytes;
    s.dropped_through = Math.max(s.dropped_through, gone.through);
  }
  if (pieces.length > 0) await repo.writeSummary(tx, runId, s);
  return [s, pieces.length > 0];
}

/** The ranges of first…last that no range of `covered` holds, in order. */
function uncovered(first: number, last: number, covered: { first: number; last: number }[]) {
  const pieces: { first: number; last: number }[] = [];
  let next = first;
  for (const c of [...covered].sort((a, b) => a.first - b.first)) {
    if (c.last < next) continue;
    if (c.first > last) break;
    if (c.first > next) pieces.push({ first: next, last: c.first - 1 });
    next = c.last + 1;
    if (next > last) break;
  }
  if (next <= last) pieces.push({ first: next, last });
  return pieces;
}

function droppedOf(s: repo.LogSummary): LogDropped {
  return s.dropped_lines > 0 && s.head_last_seq !== null
    ? { lines: s.dropped_lines, bytes: s.dropped_bytes, after_seq: s.head_last_seq }
    : { lines: s.dropped_lines, bytes: s.dropped_bytes };
}

/** Chunks a read fetches at a time. */
const CHUNKS_PER_FETCH = 16;
/**
 * Deflated bytes one read decodes at most (~10 MB of text): a stream filter over a long log answers with
 * what it found so far and a `next_after` to go on from, instead of holding the event loop.
 */
const MAX_SCAN_BYTES = 2 * 1024 * 1024;

async function readPage(
  db: Db,
  state: repo.RunLogState,
  query: { after: number; limit: number; stream: LogQuery['stream'] },
): Promise<LogPage> {
  const lines: LogLine[] = [];
  let lookedAt = query.after;
  let scanned = 0;
  fetching: while (
    lines.length < query.limit &&
    lookedAt < state.summary.last_seq &&
    scanned < MAX_SCAN_BYTES
  ) {
    const chunks = await repo.chunksAfter(db, state.run_id, lookedAt, CHUNKS_PER_FETCH);
    if (chunks.length === 0) break;
    for (const chunk of chunks) {
      scanned += chunk.body.byteLength;
      for (const line of decodeChunk(chunk.first_seq, chunk.body)) {
        if (line.seq <= lookedAt) continue;
        if (lines.length >= query.limit) break fetching;
        lookedAt = line.seq;
        if (query.stream === undefined || line.stream === query.stream) lines.push(line);
      }
    }
  }
  // Nothing stored past this point: the reader is caught up to the log's end (a cap's gap included).
  if (lookedAt < state.summary.last_seq && lines.length < query.limit && scanned < MAX_SCAN_BYTES)
    lookedAt = Math.max(lookedAt, state.summary.last_seq);
  const caughtUp = lookedAt >= state.summary.last_seq;
  return {
    lines,
    next_after: lookedAt,
    complete: caughtUp && isTerminalRunState(state.state),
    dropped: droppedOf(state.summary),
  };
}

async function readState(db: Db, principal: Principal, key: RunKey): Promise<repo.RunLogState> {
  const state = await repo.findLogState(db, principal, key);
  if (!state) throw notFound('run');
  return state;
}

/**
 * GET …/logs: the lines past `after`; with `wait_s`, an answer that would bring nothing new (no line, no
 * step forward, not complete) waits until a chunk is stored or the run ends (notices on RUN_LOG_CHANNEL, from
 * any replica), else until `wait_s` runs out. Answers at once when this replica holds its cap of waiting
 * reads or is shutting down, and lets go of its place when `gone` fires (the reader left).
 */
export async function readLog(
  db: Db,
  waits: RunControlWaits,
  principal: Principal,
  key: RunKey,
  query: LogQuery,
  gone: AbortSignal,
): Promise<LogPage> {
  const asked = { after: query.after ?? 0, limit: query.limit ?? 1_000, stream: query.stream };
  const deadline = Date.now() + (query.wait_s ?? 0) * 1000;
  const news = (page: LogPage) => page.lines.length > 0 || page.next_after > asked.after || page.complete;
  let state = await readState(db, principal, key);
  let page = await readPage(db, state, asked);
  for (;;) {
    const left = deadline - Date.now();
    if (news(page) || left <= 0 || gone.aborted) return page;
    const wait = waits.wait(state.run_id, left);
    if (!wait) return page;
    const leave = () => wait.cancel();
    gone.addEventListener('abort', leave);
    try {
      // Read again once the wait is registered: a chunk stored before it sent no notice it hears.
      state = await readState(db, principal, key);
      page = await readPage(db, state, asked);
      if (news(page)) return page;
      const end = await wait.ended;
      if (end === 'cancelled') return page;
      state = await readState(db, principal, key);
      page = await readPage(db, state, asked);
      if (end !== 'notified') return page;
    } finally {
      wait.cancel();
      gone.removeEventListener('abort', leave);
    }
  }
}

/** GET …/logs.txt: checks the run first (a 404 answers as JSON), then yields the text as it decodes it. */
export async function downloadLog(
  db: Db,
  principal: Principal,
  key: RunKey,
): Promise<{ runId: string; text: AsyncGenerator<string> }> {
  const state = await readState(db, principal, key);
  return { runId: state.run_id, text: logText(db, state) };
}

async function* logText(db: Db, state: repo.RunLogState): AsyncGenerator<string> {
  const { summary } = state;
  const gapAfter = summary.dropped_lines > 0 ? summary.head_last_seq : null;
  let after = 0;
  for (;;) {
    const chunks = await repo.chunksAfter(db, state.run_id, after, CHUNKS_PER_FETCH);
    if (chunks.length === 0) return;
    for (const chunk of chunks) {
      let out = '';
      if (gapAfter !== null && after <= gapAfter && chunk.first_seq > gapAfter)
        out += `[… ${summary.dropped_lines} lines (${megabytes(summary.dropped_bytes)}) dropped …]\n`;
      for (const line of decodeChunk(chunk.first_seq, chunk.body)) {
        if (line.seq <= after) continue;
        out += `${line.time} ${line.stream} | ${line.text}\n`;
      }
      after = Math.max(after, chunk.last_seq);
      yield out;
    }
  }
}

/** 5.6 MB: the size the cap's marker line gives, in MB of 10^6 bytes. */
export function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}
