// The console log's limits as plain values, apart from the TypeBox schemas of logs.ts: `assay run` imports
// this entry (`@assay/contract/log-limits`) so that a runner's start-up does not load TypeBox and every schema.

/** A line's text is at most 64 KiB of UTF-8; the runner splits a longer line into several. */
export const MAX_LOG_LINE_BYTES = 64 * 1024;
/** Lines in one chunk a runner sends. */
export const MAX_LOG_LINES_PER_CHUNK = 5_000;
/** Lines one read answers at most. */
export const MAX_LOG_PAGE = 5_000;
