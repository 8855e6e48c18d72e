import { Type, type Static } from 'typebox';
import { OneOf, Timestamp } from './common.ts';

/**
 * A run's console log: the lines its program printed on stdout and stderr, as `assay run` captured them.
 * Every line has a sequence number `seq` (1, 2, 3, … in the order the runner read them, over both
 * streams); the runner sends them in chunks that name their first line's seq, so a resent chunk stores
 * nothing twice.
 */
export const LOG_STREAMS = ['stdout', 'stderr'] as const;
export type LogStream = (typeof LOG_STREAMS)[number];

import { MAX_LOG_LINE_BYTES, MAX_LOG_LINES_PER_CHUNK, MAX_LOG_PAGE } from './log-limits.ts';

export { MAX_LOG_LINE_BYTES, MAX_LOG_LINES_PER_CHUNK, MAX_LOG_PAGE } from './log-limits.ts';

export const LogSeq = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });

/** One line as the runner sends it: its stream, when it was read, its text without the line break. */
export const LogLineInput = Type.Object(
  {
    stream: OneOf(LOG_STREAMS),
    time: Timestamp,
    text: Type.String({ maxLength: MAX_LOG_LINE_BYTES }),
  },
  { additionalProperties: false },
);
export type LogLineInput = Static<typeof LogLineInput>;

/** POST …/runs/{r}/logs: lines `first_seq`, `first_seq + 1`, … in order. */
export const AppendLogBody = Type.Object(
  {
    first_seq: LogSeq,
    lines: Type.Array(LogLineInput, { minItems: 1, maxItems: MAX_LOG_LINES_PER_CHUNK }),
  },
  { additionalProperties: false },
);
export type AppendLogBody = Static<typeof AppendLogBody>;

/** What the log has dropped to stay within the service's per-run cap: it keeps the head and the tail. */
export const LogDropped = Type.Object({
  lines: Type.Integer({ minimum: 0 }),
  bytes: Type.Integer({ minimum: 0 }),
  /** When lines were dropped: the last seq kept before them (the head's end); the tail starts past them. */
  after_seq: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type LogDropped = Static<typeof LogDropped>;

/** What a stored chunk answers: the highest seq the service holds for the run, and what the cap dropped. */
export const AppendLogResult = Type.Object({
  last_seq: Type.Integer({ minimum: 0 }),
  dropped: LogDropped,
});
export type AppendLogResult = Static<typeof AppendLogResult>;

/** One line as the service answers it. */
export const LogLine = Type.Object({
  seq: LogSeq,
  stream: OneOf(LOG_STREAMS),
  time: Timestamp,
  text: Type.String(),
});
export type LogLine = Static<typeof LogLine>;

/**
 * GET …/runs/{r}/logs: the lines after `after` (0: from the start), at most `limit`, of one stream or both.
 * With `wait_s`, an answer that would be empty waits up to that long for new lines (a follow).
 */
export const LogQuery = Type.Object(
  {
    after: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LOG_PAGE, default: 1_000 })),
    stream: Type.Optional(OneOf(LOG_STREAMS)),
    wait_s: Type.Optional(Type.Integer({ minimum: 0, maximum: 60, default: 0 })),
  },
  { additionalProperties: false },
);
export type LogQuery = Static<typeof LogQuery>;

/**
 * A page of a run's log. `next_after` is the `after` of the next read (the last seq looked at, filtered
 * out or not); `complete` is true once the run has ended and every line it sent has been answered (a
 * follow stops there); `dropped` is what the size cap removed from the middle (seq numbers skip over it).
 */
export const LogPage = Type.Object(
  {
    lines: Type.Array(LogLine),
    next_after: Type.Integer({ minimum: 0 }),
    complete: Type.Boolean(),
    dropped: LogDropped,
  },
  { $id: 'LogPage' },
);
export type LogPage = Static<typeof LogPage>;
