import type { Queryable, Tx } from '../db/database.ts';

/**
 * The blocks of a series: its steps cut into blocks of `steps` (block = step / steps), each with its point
 * count and its lowest and highest point, so a downsampled read reads one row per block instead of up to
 * `steps` points. Two levels: 256-step blocks (006_metrics.sql) for series of up to millions of points,
 * 16-step blocks (011_metric_fine_blocks.sql) for those of tens of thousands. Every write keeps both.
 */
export interface BlockLevel {
  table: 'metric_blocks' | 'metric_fine_blocks';
  steps: number;
}

export const COARSE_BLOCKS: BlockLevel = { table: 'metric_blocks', steps: 256 };
export const FINE_BLOCKS: BlockLevel = { table: 'metric_fine_blocks', steps: 16 };
const LEVELS = [COARSE_BLOCKS, FINE_BLOCKS];
const BLOCK_STEPS = COARSE_BLOCKS.steps;

/**
 * One point to store: `value` as PostgreSQL reads float8 text ('NaN', 'Infinity' included), `ts` null
 * for now().
 */
export interface PointRow {
  key: string;
  step: number;
  value: string;
  ts: string | null;
}

export interface SeriesRow {
  id: string;
  key: string;
  count: string;
  last_step: number | null;
  last_value: number | null;
  last_ts: Date | null;
  min_value: number | null;
  max_value: number | null;
}

/** A point as read; `ts` is null when it was read without its time (a compared curve draws none). */
export interface StoredPoint {
  step: number;
  value: number;
  ts: Date | null;
}

// Reading no time spares the driver a date parse per point, which on a 100-run comparison was most of
// the read.
const tsOf = (withTime: boolean, table: string) => (withTime ? `${table}.ts` : 'NULL::timestamptz AS ts');

// float8 keeps every integer step exactly up to 2^53 (MAX_METRIC_STEP), and both drivers read it as a number.
const SERIES_COLUMNS = `s.id, s.key, s.count, s.last_step::float8 AS last_step, s.last_value, s.last_ts, s.min_value,
  s.max_value`;

// The lowest and the highest non-NaN point of each group, and how many of its points are new; NaN = NaN in
// PostgreSQL's float order, so `<> 'NaN'` leaves out exactly the NaN values.
const EXTREMES = `(array_agg(step ORDER BY value, step) FILTER (WHERE value <> 'NaN'))[1] AS min_step,
  min(value) FILTER (WHERE value <> 'NaN') AS min_value,
  (array_agg(step ORDER BY value DESC, step) FILTER (WHERE value <> 'NaN'))[1] AS max_step,
  max(value) FILTER (WHERE value <> 'NaN') AS max_value`;

/** The first and the last step of series $1 in [$2, $3], by two probes of the primary key. */
const FIRST_AND_LAST = `SELECT
  (SELECT step FROM metric_points WHERE series_id = $1 AND step >= $2 AND step <= $3 ORDER BY step LIMIT 1) AS first,
  (SELECT step FROM metric_points WHERE series_id = $1 AND step >= $2 AND step <= $3 ORDER BY step DESC LIMIT 1) AS last`;

/** What storePoints wrote to one series: its points, and whether any of them overwrote an earlier one. */
export interface StoredSeries {
  key: string;
  id: string;
  stored: number;
  overwrote: boolean;
}

// storePoints' gate for `onlyNew`: every key of the batch has a series, and every step is past its series'
// last one (an append, the common batch; any other goes the transaction path). It reads only the series rows
// the statement reads anyway. A concurrent batch may still store one of these steps between this snapshot and
// the insert: ON CONFLICT then overwrites, and the answer says so.
const ONLY_NEW = `
        WHERE (SELECT count(*) FROM series) = (SELECT count(DISTINCT key) FROM input)
          AND NOT EXISTS (SELECT 1 FROM input i2 JOIN series s2 ON s2.key = i2.key WHERE i2.step <= s2.last_step)`;

/**
 * Stores the points of keys whose series exist, in one statement: the points (a repeated (series, step)
 * overwrites), their blocks' counts and extremes at both levels, and their series' summaries. Answers one row
 * per series written, with whether any of its points overwrote an earlier one (the summary's min and max, and
 * the touched blocks', are then recomputed by `recomputeExtremes`, since an overwritten extreme may be gone).
 * Keys without a series are left out of the answer: the caller creates them and stores their points again.
 *
 * `xmax <> 0` on a row that ON CONFLICT DO UPDATE returns tells an overwrite from an insert (the update
 * leaves its row locked by the writing transaction). The summary UPDATE locks the series row, so concurrent
 * batches of one series add up; the last point is the one with the highest step (on a tie, the newest write).
 *
 * `onlyNew` stores the batch only when every key has its series and every step comes after its series' last
 * one, and otherwise stores nothing and answers no row: the common batch then needs no transaction (one
 * statement is atomic by itself), and the caller takes the transaction path for the rest.
 */
export async function storePoints(
  db: Queryable,
  runId: string,
  points: PointRow[],
  onlyNew = false,
): Promise<StoredSeries[]> {
  return db.query(
    `WITH input AS (
       SELECT i.key, i.step, i.value::float8 AS value, COALESCE(i.ts, now()) AS ts
         FROM unnest($2::text[], $3::bigint[], $4::text[], $5::timestamptz[]) AS i (key, step, value, ts)
     ), series AS (
       SELECT s.id, s.key, s.last_step FROM metric_series s WHERE s.run_id = $1 AND s.key IN (SELECT DISTINCT key FROM input)
     ), stored AS (
       INSERT INTO metric_points AS p (series_id, step, value, ts)
       SELECT s.id, i.step, i.value, i.ts FROM input i JOIN series s ON s.key = i.key${onlyNew ? ONLY_NEW : ''}
       ON CONFLICT (series_id, step) DO UPDATE SET value = EXCLUDED.value, ts = EXCLUDED.ts
       RETURNING p.series_id, p.step, p.value, p.ts, p.xmax::text <> '0' AS overwritten
     )${LEVELS.map(
       (level, i) => `, blocks${i} AS (
       INSERT INTO ${level.table} AS b (series_id, block, count, min_step, min_value, max_step, max_value)
       SELECT series_id, step / ${level.steps}, count(*) FILTER (WHERE NOT overwritten), ${EXTREMES}
         FROM stored GROUP BY series_id, step / ${level.steps}
       ON CONFLICT (series_id, block) DO UPDATE SET
         count = b.count + EXCLUDED.count,
         min_step = CASE WHEN b.min_value IS NULL OR EXCLUDED.min_value < b.min_value THEN EXCLUDED.min_step ELSE b.min_step END,
         min_value = LEAST(b.min_value, EXCLUDED.min_value),
         max_step = CASE WHEN b.max_value IS NULL OR EXCLUDED.max_value > b.max_value THEN EXCLUDED.max_step ELSE b.max_step END,
         max_value = GREATEST(b.max_value, EXCLUDED.max_value)
     )`,
     ).join('')}, batch AS (
       SELECT series_id, count(*) AS stored, count(*) FILTER (WHERE NOT overwritten) AS added,
              bool_or(overwritten) AS overwrote, max(step) AS last_step,
              (array_agg(value ORDER BY step DESC))[1] AS last_value, (array_agg(ts ORDER BY step DESC))[1] AS last_ts,
              min(value) FILTER (WHERE value <> 'NaN') AS min_value, max(value) FILTER (WHERE value <> 'NaN') AS max_value
         FROM stored GROUP BY series_id
     )
     UPDATE metric_series m SET
       count = m.count + a.added,
       last_value = CASE WHEN m.last_step IS NULL OR a.last_step >= m.last_step THEN a.last_value ELSE m.last_value END,
       last_ts = CASE WHEN m.last_step IS NULL OR a.last_step >= m.last_step THEN a.last_ts ELSE m.last_ts END,
       last_step = GREATEST(m.last_step, a.last_step),
       min_value = LEAST(m.min_value, a.min_value),
       max_value = GREATEST(m.max_value, a.max_value)
       FROM batch a WHERE m.id = a.series_id
     RETURNING m.key, m.id::text AS id, a.stored::int AS stored, a.overwrote`,
    [
      runId,
      points.map((p) => p.key),
      points.map((p) => p.step),
      points.map((p) => p.value),
      points.map((p) => p.ts),
    ],
  );
}

/** Which of these keys the run has no series of yet (as this statement's snapshot sees them). */
export async function unknownKeys(db: Queryable, runId: string, keys: string[]): Promise<string[]> {
  const rows = await db.query<{ key: string }>(
    `SELECT k AS key FROM unnest($2::text[]) AS k
      WHERE NOT EXISTS (SELECT 1 FROM metric_series s WHERE s.run_id = $1 AND s.key = k)`,
    [runId, keys],
  );
  return rows.map((r) => r.key);
}

/**
 * Locks the run's row until the transaction ends, then counts the run's series and which of `keys` it lacks:
 * batches bringing new keys to one run take their turn here, so their counts cannot both pass a limit. The
 * lock (NO KEY UPDATE) leaves the series' foreign-key checks and other runs alone; it is taken before any
 * series row is, so it cannot deadlock with the batches that write points of known keys only.
 */
export async function lockKeyCount(
  tx: Tx,
  runId: string,
  keys: string[],
): Promise<{ keys: number; fresh: string[] }> {
  await tx.query(`SELECT 1 FROM runs WHERE id = $1 FOR NO KEY UPDATE`, [runId]);
  const [row] = await tx.query<{ keys: number }>(
    `SELECT count(*)::int AS keys FROM metric_series WHERE run_id = $1`,
    [runId],
  );
  return { keys: row!.keys, fresh: await unknownKeys(tx, runId, keys) };
}

/** Creates the series of these keys that the run does not have yet (their summaries empty). */
export async function createSeries(tx: Tx, runId: string, keys: string[]): Promise<void> {
  await tx.query(
    `INSERT INTO metric_series (run_id, key) SELECT $1, k FROM unnest($2::text[]) AS k
     ON CONFLICT (run_id, key) DO NOTHING`,
    [runId, keys],
  );
}

/**
 * After overwrites at these (series, step) points: the blocks holding them, at both levels, get their counts
 * and extremes recomputed from their points (at most 256 per block), then the series' min and max from their
 * 256-step blocks. Exact, and it reads no more than those blocks. Two statements: one statement's parts all
 * read the snapshot it started with, so the summaries could not read the blocks it rewrites.
 */
export async function recomputeExtremes(
  db: Queryable,
  points: { seriesId: string; step: number }[],
): Promise<void> {
  const recompute = (level: BlockLevel, i: number) => `recomputed${i} AS (
       UPDATE ${level.table} b SET count = x.count, min_step = x.min_step, min_value = x.min_value,
              max_step = x.max_step, max_value = x.max_value
         FROM (SELECT p.series_id, t.block, count(*)::int AS count, ${EXTREMES}
                 FROM (SELECT DISTINCT series_id, step / ${level.steps} AS block FROM touched) t
                 JOIN metric_points p ON p.series_id = t.series_id
                  AND p.step >= t.block * ${level.steps} AND p.step < (t.block + 1) * ${level.steps}
                GROUP BY p.series_id, t.block) x
        WHERE b.series_id = x.series_id AND b.block = x.block
     )`;
  await db.query(
    `WITH touched AS (SELECT * FROM unnest($1::bigint[], $2::bigint[]) AS t (series_id, step)),
     ${LEVELS.map(recompute).join(', ')}
     SELECT 1`,
    [points.map((p) => p.seriesId), points.map((p) => p.step)],
  );
  await db.query(
    `UPDATE metric_series m SET min_value = x.min_value, max_value = x.max_value
       FROM (SELECT series_id, min(min_value) AS min_value, max(max_value) AS max_value
               FROM ${COARSE_BLOCKS.table} WHERE series_id = ANY($1::bigint[]) GROUP BY series_id) x
      WHERE m.id = x.series_id`,
    [[...new Set(points.map((p) => p.seriesId))]],
  );
}

/**
 * The series of a run after key `after`, by key (byte order, the same on both drivers), up to `limit`; with
 * `contains`, only the keys holding that text, letter case ignored (strpos: no LIKE pattern to escape).
 */
export async function listSeries(
  db: Queryable,
  runId: string,
  page: { after: string | undefined; limit: number; contains: string | undefined },
): Promise<SeriesRow[]> {
  return db.query<SeriesRow>(
    `SELECT ${SERIES_COLUMNS} FROM metric_series s
      WHERE s.run_id = $1 AND s.count > 0 AND ($2::text IS NULL OR s.key COLLATE "C" > $2::text COLLATE "C")
        AND ($3::text IS NULL OR strpos(lower(s.key), lower($3::text)) > 0)
      ORDER BY s.key COLLATE "C" LIMIT $4`,
    [runId, page.after ?? null, page.contains ?? null, page.limit],
  );
}

export async function findSeries(db: Queryable, runId: string, key: string): Promise<SeriesRow | undefined> {
  const rows = await db.query<SeriesRow>(
    `SELECT ${SERIES_COLUMNS} FROM metric_series s WHERE s.run_id = $1 AND s.key = $2`,
    [runId, key],
  );
  return rows[0];
}

/**
 * Points of a series in [lo, hi]: counted from the blocks wholly inside the range plus the points of the (at
 * most two) blocks its ends cut, so a count never reads more than 2 × BLOCK_STEPS points. Also the first and
 * last step in the range (index lookups).
 */
export async function rangeFacts(
  db: Queryable,
  seriesId: string,
  lo: number,
  hi: number,
): Promise<{ count: number; first: number | null; last: number | null }> {
  const [row] = await db.query<{ count: number; first: number | null; last: number | null }>(
    `SELECT
       (SELECT COALESCE(sum(count), 0) FROM metric_blocks
         WHERE series_id = $1 AND block > $2::bigint / ${BLOCK_STEPS} AND block < $3::bigint / ${BLOCK_STEPS})::float8
       + (SELECT count(*) FROM metric_points WHERE series_id = $1 AND step >= $2
            AND step <= LEAST($3, ($2::bigint / ${BLOCK_STEPS} + 1) * ${BLOCK_STEPS} - 1))
       + (SELECT count(*) FROM metric_points WHERE series_id = $1 AND $3::bigint / ${BLOCK_STEPS} > $2::bigint / ${BLOCK_STEPS}
            AND step >= ($3::bigint / ${BLOCK_STEPS}) * ${BLOCK_STEPS} AND step <= $3) AS count,
       (SELECT p.step::float8 FROM metric_points p WHERE p.series_id = $1 AND p.step >= $2 AND p.step <= $3
         ORDER BY p.step LIMIT 1) AS first,
       (SELECT p.step::float8 FROM metric_points p WHERE p.series_id = $1 AND p.step >= $2 AND p.step <= $3
         ORDER BY p.step DESC LIMIT 1) AS last`,
    [seriesId, lo, hi],
  );
  return { count: Number(row!.count), first: row!.first, last: row!.last };
}

/** Every point in [lo, hi] after `after`, in step order, up to `limit`. */
export async function pagePoints(
  db: Queryable,
  seriesId: string,
  lo: number,
  hi: number,
  after: number | undefined,
  limit: number,
  withTime = true,
): Promise<StoredPoint[]> {
  return db.query<StoredPoint>(
    // ORDER BY the table's column (p.step), not the float8 output column of the same name: only the first
    // walks the primary key in order and stops at the limit.
    `SELECT p.step::float8 AS step, p.value, ${tsOf(withTime, 'p')} FROM metric_points p
      WHERE p.series_id = $1 AND p.step >= $2 AND p.step <= $3 AND ($4::bigint IS NULL OR p.step > $4)
      ORDER BY p.step LIMIT $5`,
    [seriesId, lo, hi, after ?? null, limit],
  );
}

/**
 * Which candidates a downsampled read of `count` points spanning `span` steps into `buckets` buckets
 * takes (see
 * `downsample`): past `pointLimit` points, the 256-step blocks, so no read sorts more than that many points
 * or two per block; else the 16-step blocks where they are no wider than a bucket and hold four points or
 * more on average (fewer, and they would be about as many rows as the points); else the points themselves.
 */
export function blocksFor(
  count: number,
  span: number,
  buckets: number,
  pointLimit: number,
): BlockLevel | undefined {
  if (count > pointLimit) return COARSE_BLOCKS;
  const fine = FINE_BLOCKS.steps;
  if (span >= fine * buckets && count >= (4 * span) / fine) return FINE_BLOCKS;
  return undefined;
}

/**
 * The series in [lo, hi] cut into `buckets` equal step ranges, keeping each bucket's lowest and highest point
 * (NaN only where a bucket holds nothing else), in step order: at most 2 × buckets points. The candidates are
 * every point (no `blocks`), or the extremes of each block of that level wholly inside the range plus every
 * point of the blocks its ends cut (and the first of a block holding only NaN): a bucket keeps the lowest of
 * the blocks' lows and those points in it, and the highest of their highs, so a spike, being its block's
 * extreme, survives just the same. The buckets cut the range from its first to its last point, so `lo` and
 * `hi` may be wider than the points (0 and MAX_METRIC_STEP for a whole series) without changing the answer.
 */
export async function downsample(
  db: Queryable,
  seriesId: string,
  lo: number,
  hi: number,
  buckets: number,
  blocks: BlockLevel | undefined,
  withTime = true,
): Promise<StoredPoint[]> {
  if (!blocks) return downsamplePoints(db, seriesId, lo, hi, buckets, withTime);
  const { table, steps } = blocks;
  const bucket = `floor((step - r.first)::float8 * $4 / (r.last - r.first + 1)::float8)`;
  // Each block row read once, its low and its high both taken from it.
  const pick = (step: string, value: string, order: string) => `SELECT DISTINCT ON (bucket) step, value FROM (
         SELECT step, value, ${bucket} AS bucket
           FROM (SELECT ${step} AS step, ${value} AS value FROM b WHERE min_step IS NOT NULL
                 UNION ALL SELECT step, value FROM raw) x, r
       ) y ORDER BY bucket, value = 'NaN', value ${order}, step`;
  return db.query<StoredPoint>(
    `WITH r AS (${FIRST_AND_LAST}), b AS MATERIALIZED (
       SELECT block, min_step, min_value, max_step, max_value FROM ${table}
        WHERE series_id = $1 AND block > $2::bigint / ${steps} AND block < $3::bigint / ${steps}
     ), raw AS MATERIALIZED (
       SELECT step, value FROM metric_points WHERE series_id = $1 AND step >= $2
          AND step <= LEAST($3, ($2::bigint / ${steps} + 1) * ${steps} - 1)
       UNION ALL
       SELECT step, value FROM metric_points WHERE series_id = $1 AND $3::bigint / ${steps} > $2::bigint / ${steps}
          AND step >= ($3::bigint / ${steps}) * ${steps} AND step <= $3
       UNION ALL
       -- A block of NaN alone has no extremes: its first point stands for it, so a bucket of nothing but NaN
       -- keeps a NaN, as it does when the points are read.
       SELECT f.step, f.value FROM b, LATERAL (
         SELECT step, value FROM metric_points WHERE series_id = $1 AND step >= b.block * ${steps}
            AND step < (b.block + 1) * ${steps} ORDER BY step LIMIT 1) f
        WHERE b.min_step IS NULL
     ), kept AS (
       (${pick('min_step', 'min_value', 'ASC')})
       UNION
       (${pick('max_step', 'max_value', 'DESC')})
     )
     ${
       withTime
         ? `SELECT p.step::float8 AS step, p.value, p.ts
              FROM kept JOIN metric_points p ON p.series_id = $1 AND p.step = kept.step ORDER BY p.step`
         : // A compared curve draws no time: the kept points are the answer, with no lookup of each.
           `SELECT step::float8 AS step, value, NULL::timestamptz AS ts FROM kept ORDER BY kept.step`
     }`,
    [seriesId, lo, hi, buckets],
  );
}

/**
 * `downsample` over every point of the range, in one pass: each point gets its bucket's extremes by a window
 * aggregate, then the points holding them are kept; the same points as sorting each bucket by value would
 * keep (on a tie the lowest step; NaN only where a bucket holds nothing else), at four fifths of its cost on
 * 10,000 points. A join of the points to their buckets' extremes costs a little less, but on a young table
 * whose statistics say it is empty the planner runs it as a nested loop: 150 ms for 2,000 points instead
 * of 4.
 */
async function downsamplePoints(
  db: Queryable,
  seriesId: string,
  lo: number,
  hi: number,
  buckets: number,
  withTime: boolean,
): Promise<StoredPoint[]> {
  return db.query<StoredPoint>(
    `WITH r AS (${FIRST_AND_LAST}), c AS (
       SELECT p.step, p.value, ${tsOf(withTime, 'p')}, floor((p.step - r.first)::float8 * $4 / (r.last - r.first + 1)::float8) AS bucket
         FROM metric_points p, r WHERE p.series_id = $1 AND p.step >= $2 AND p.step <= $3
     ), e AS (
       SELECT bucket, step, value, ts, min(value) FILTER (WHERE value <> 'NaN') OVER b AS low,
              max(value) FILTER (WHERE value <> 'NaN') OVER b AS high
         FROM c WINDOW b AS (PARTITION BY bucket)
     ), m AS MATERIALIZED (
       SELECT bucket, step, value, ts, low IS NULL OR value = low AS is_low, low IS NULL OR value = high AS is_high
         FROM e WHERE low IS NULL OR value = low OR value = high
     )
     SELECT step::float8 AS step, value, ts FROM (
       (SELECT DISTINCT ON (bucket) step, value, ts FROM m WHERE is_low ORDER BY bucket, step)
       UNION
       (SELECT DISTINCT ON (bucket) step, value, ts FROM m WHERE is_high ORDER BY bucket, step)
     ) kept ORDER BY step`,
    [seriesId, lo, hi, buckets],
  );
}

export interface ExperimentMetricRow {
  run_id: string;
  n: number;
  r: number;
  state: string;
  key: string;
  count: string;
  last_step: number;
  last_value: number;
  min_value: number | null;
  max_value: number | null;
}

/** The summaries of these keys in every run of the experiment, from metric_series alone. */
/** A comparison leaves archived runs out unless the boolean parameter `param` asks for them. */
const UNARCHIVED = (param: string) => `(${param}::boolean OR r.archived_at IS NULL)`;

export async function experimentSummaries(
  db: Queryable,
  experimentId: string,
  keys: string[],
  archived = false,
): Promise<ExperimentMetricRow[]> {
  return db.query<ExperimentMetricRow>(
    `SELECT r.id AS run_id, r.n, r.r, r.state, s.key, s.count, s.last_step::float8 AS last_step, s.last_value,
            s.min_value, s.max_value
       FROM runs r JOIN metric_series s ON s.run_id = r.id
      WHERE r.experiment_id = $1 AND s.key = ANY($2::text[]) AND s.count > 0 AND ${UNARCHIVED('$3')}
      ORDER BY r.n, r.r, s.key COLLATE "C"`,
    [experimentId, keys, archived],
  );
}

export interface ExperimentSeriesRow extends SeriesRow {
  run_id: string;
  n: number;
  r: number;
  state: string;
  /**
   * The series row's version (its `xmin`): every statement that stores points of a series also updates its
   * row, in the same transaction, so a new version means changed points and an unchanged one the same points.
   */
  version: string;
}

/** One key's series in the runs of an experiment after run (n, r) `after`, in (n, r) order, up to `limit`. */
export async function experimentSeries(
  db: Queryable,
  experimentId: string,
  key: string,
  after: { n: number; r: number } | undefined,
  limit: number,
  archived = false,
): Promise<ExperimentSeriesRow[]> {
  return db.query<ExperimentSeriesRow>(
    `SELECT ${SERIES_COLUMNS}, r.id AS run_id, r.n, r.r, r.state, s.xmin::text AS version
       FROM runs r JOIN metric_series s ON s.run_id = r.id
      WHERE r.experiment_id = $1 AND s.key = $2 AND s.count > 0 AND ${UNARCHIVED('$6')}
        AND ($3::int IS NULL OR (r.n, r.r) > ($3::int, $4::int))
      ORDER BY r.n, r.r LIMIT $5`,
    [experimentId, key, after?.n ?? null, after?.r ?? null, limit, archived],
  );
}

/** The keys logged in an experiment's runs after `after` (byte order), each with its number of runs. */
export async function experimentKeys(
  db: Queryable,
  experimentId: string,
  after: string | undefined,
  limit: number,
  archived = false,
): Promise<{ key: string; runs: number }[]> {
  return db.query<{ key: string; runs: number }>(
    `SELECT s.key, count(*)::int AS runs
       FROM runs r JOIN metric_series s ON s.run_id = r.id
      WHERE r.experiment_id = $1 AND s.count > 0 AND ${UNARCHIVED('$4')}
        AND ($2::text IS NULL OR s.key COLLATE "C" > $2::text COLLATE "C")
      GROUP BY s.key
      ORDER BY s.key COLLATE "C" LIMIT $3`,
    [experimentId, after ?? null, limit, archived],
  );
}
