import {
  MAX_METRIC_KEYS_PER_QUERY,
  MAX_METRIC_STEP,
  MAX_METRIC_KEY_LENGTH,
  METRIC_KEY_PATTERN,
  encodeMetricValue,
  isTerminalRunState,
  MAX_SERIES_RUNS_PER_PAGE,
  type ExperimentMetricKeys,
  type ExperimentMetricSeries,
  type ExperimentMetrics,
  type ExperimentSeriesQuery,
  type LogMetricsBody,
  type MetricSeries,
  type MetricSeriesQuery,
  type MetricSummary,
  type RunMetricFigures,
  type RunMetricList,
  type RunMetricListQuery,
  type RunState,
} from '@assay/contract';
import type { Principal } from '../auth/principal.ts';
import { retryingDeadlocks } from '../db/deadlock-retry.ts';
import type { Db, Queryable, Tx } from '../db/database.ts';
import { getVisibleExperiment } from '../experiments/experiment-service.ts';
import {
  decodeRunCursor,
  decodeStepCursor,
  decodeTextCursor,
  encodeRunCursor,
  encodeStepCursor,
  encodeTextCursor,
} from '../http/cursor.ts';
import { badRequest, conflict, notFound } from '../http/errors.ts';
import { iso } from '../http/schemas.ts';
import type { RunKey } from '../runs/run-repository.ts';
import { getRun } from '../runs/run-service.ts';
import type { CurveCache } from './curve-cache.ts';
import * as repo from './metric-repository.ts';
import type { MetricsObserver, ObserverLog } from './metrics-observer.ts';

const KEY_PATTERN = new RegExp(METRIC_KEY_PATTERN);

/**
 * Past this many points in the asked range, a downsampled read buckets the 256-step blocks' extremes, so it
 * never sorts more than this many points or two per block; up to it, the points or the 16-step blocks'
 * extremes (see repo.blocksFor).
 */
const RAW_DOWNSAMPLE_LIMIT = 50_000;

/**
 * What a run's metrics may take: points until `graceMs` after it ended, at most `keysPerRun` distinct keys.
 */
export interface MetricLimits {
  graceMs: number;
  keysPerRun: number;
}

/**
 * POST …/metrics: the run must be running, or have ended no more than `graceMs` ago (a runner's last batches
 * may land after it reported the end). The run is found through getRun, the same check that scopes heartbeats
 * and output uploads, so a worker key reaches only its own run. Once stored, the batch is told to `watch`.
 */
export async function logMetrics(
  db: Db,
  principal: Principal,
  key: RunKey,
  body: LogMetricsBody,
  limits: MetricLimits,
  watch?: { observer: MetricsObserver; log: ObserverLog },
): Promise<{ stored: number }> {
  const answer = await storeMetrics(db, principal, key, body, limits);
  if (watch) {
    try {
      await watch.observer.stored(answer.run, body.metrics, watch.log);
    } catch (err) {
      // The points are stored: what listens to them must not turn that into an error.
      watch.log.warn({ err, run_id: answer.run.id }, 'a metrics observer failed');
    }
  }
  return { stored: answer.stored };
}

async function storeMetrics(
  db: Db,
  principal: Principal,
  key: RunKey,
  body: LogMetricsBody,
  limits: MetricLimits,
) {
  const run = await getRun(db, principal, key);
  const { graceMs } = limits;
  if (run.state === 'pending')
    throw conflict('run_not_started', 'metrics are taken once the run has started', { state: run.state });
  if (run.ended_at && Date.now() - run.ended_at.getTime() > graceMs)
    throw conflict(
      'run_ended',
      `the run ended more than ${Math.round(graceMs / 1000)} s ago and takes no more metrics`,
      { state: run.state, ended_at: iso(run.ended_at) },
    );
  // A repeated (key, step) inside one batch: the last one wins (one statement cannot write a row twice).
  const byPoint = new Map<string, repo.PointRow>();
  for (const p of body.metrics) {
    byPoint.set(`${p.step} ${p.key}`, {
      key: p.key,
      step: p.step,
      value: String(p.value),
      // Sent as UTC: PostgreSQL refuses offsets past ±15:59 that RFC 3339 allows.
      ts: p.timestamp === undefined ? null : new Date(p.timestamp).toISOString(),
    });
  }
  const points = [...byPoint.values()];
  // The common batch (its keys known, its steps new) is one statement, atomic without a transaction; having
  // no new key, it needs no count of the run's keys either.
  const stored = (written: repo.StoredSeries[]) => ({
    run,
    stored: written.reduce((sum, w) => sum + w.stored, 0),
  });
  // Batches of one run sent in parallel lock its series and blocks in no fixed order: a deadlock rolls one
  // back whole, and storing it again is safe (a point is keyed by its series and step).
  return retryingDeadlocks(async () => {
    const fast = await repo.storePoints(db, run.id, points, true);
    if (fast.length > 0) {
      // Only a concurrent batch writing the same steps between the gate and the insert overwrites here.
      await recomputeOverwritten(db, points, fast);
      return stored(fast);
    }
    return db.transaction(async (tx) => {
      const keys = [...new Set(points.map((p) => p.key))];
      if ((await repo.unknownKeys(tx, run.id, keys)).length > 0) await addKeys(tx, run.id, keys, limits);
      const written = await repo.storePoints(tx, run.id, points);
      await recomputeOverwritten(tx, points, written);
      return stored(written);
    });
  });
}

/**
 * Creates the series of the batch's keys the run lacks, counted under the run's lock so that concurrent
 * batches cannot pass `keysPerRun` together; past it, 409 and the transaction (so the whole batch) is
 * rolled back.
 */
async function addKeys(tx: Tx, runId: string, keys: string[], { keysPerRun }: MetricLimits) {
  const count = await repo.lockKeyCount(tx, runId, keys);
  if (count.keys + count.fresh.length > keysPerRun) {
    const n = (x: number) => x.toLocaleString('en-US');
    throw conflict(
      'metric_key_limit',
      `the run has ${n(count.keys)} metric keys and this batch brings ${n(count.fresh.length)} new, past ` +
        `the limit of ${n(keysPerRun)} keys per run (ASSAY_METRIC_KEYS_PER_RUN); nothing of it was stored`,
      { keys: count.keys, new_keys: count.fresh.length, limit: keysPerRun },
    );
  }
  if (count.fresh.length > 0) await repo.createSeries(tx, runId, count.fresh);
}

/**
 * The extremes of the blocks and series where a point overwrote an earlier one, which may have been
 * an extreme.
 */
async function recomputeOverwritten(
  db: Queryable,
  points: repo.PointRow[],
  written: repo.StoredSeries[],
): Promise<void> {
  const overwritten = new Map(written.filter((w) => w.overwrote).map((w) => [w.key, w.id]));
  if (overwritten.size === 0) return;
  const touched = points.flatMap((p) => {
    const seriesId = overwritten.get(p.key);
    return seriesId === undefined ? [] : [{ seriesId, step: p.step }];
  });
  await repo.recomputeExtremes(db, touched);
}

const value = (v: number | null) => (v === null ? null : encodeMetricValue(v));

function toSummary(row: repo.SeriesRow): MetricSummary {
  return {
    key: row.key,
    count: Number(row.count),
    last: { step: row.last_step!, value: encodeMetricValue(row.last_value!), timestamp: iso(row.last_ts)! },
    min: value(row.min_value),
    max: value(row.max_value),
  };
}

/** `GET …/runs/{r}/metrics`: a page of the run's keys, the cursor holding the last key served. */
export async function listRunMetrics(
  db: Db,
  principal: Principal,
  key: RunKey,
  query: RunMetricListQuery,
): Promise<RunMetricList> {
  const run = await getRun(db, principal, key);
  const limit = query.limit ?? 1000;
  const after = decodeKeyCursor(query.cursor);
  const rows = await repo.listSeries(db, run.id, { after, limit: limit + 1, contains: query.contains });
  const items = rows.slice(0, limit).map(toSummary);
  const last = items[items.length - 1];
  return { items, next_cursor: rows.length > limit && last ? encodeTextCursor(last.key) : null };
}

/** A key cursor: the last key served, so anything that is not a key was not handed out here. */
function decodeKeyCursor(cursor: string | undefined): string | undefined {
  const after = decodeTextCursor(cursor);
  // A NUL would not reach SQL either.
  if (after !== undefined && !KEY_PATTERN.test(after))
    throw badRequest('invalid_cursor', 'cursor is not one this server handed out');
  return after;
}

const toPoint = (p: repo.StoredPoint) => ({
  step: p.step,
  value: encodeMetricValue(p.value),
  timestamp: iso(p.ts)!,
});

/**
 * One key's series. With `max_points`: the whole range in one answer, downsampled to at most `max_points`
 * points when it holds more (each of max_points / 2 equal step buckets keeps its lowest and highest point).
 * Without: every point, `limit` at a time, the cursor holding the last step served. A key the run never
 * logged is 404, like any other name that names nothing.
 */
export async function getRunMetricSeries(
  db: Db,
  principal: Principal,
  key: RunKey,
  metric: string,
  query: MetricSeriesQuery,
): Promise<MetricSeries> {
  const run = await getRun(db, principal, key);
  const lo = query.min_step ?? 0;
  const hi = query.max_step ?? MAX_METRIC_STEP;
  const after = decodeStepCursor(query.cursor);
  const empty = { key: metric, count: 0, downsampled: false, points: [], next_cursor: null };
  const series = await repo.findSeries(db, run.id, metric);
  if (!series || Number(series.count) === 0) throw notFound(`metric '${metric}' of this run`);
  if (query.max_points !== undefined) {
    const read = await readDownsampled(db, series, lo, hi, query.max_points);
    return { key: metric, ...read, points: read.points.map(toPoint), next_cursor: null };
  }
  if (lo > hi) return empty;
  const facts = await repo.rangeFacts(db, series.id, lo, hi);
  if (facts.count === 0) return empty;
  const count = facts.count;
  const limit = query.limit ?? 1000;
  const page = await repo.pagePoints(db, series.id, lo, hi, after, limit + 1);
  const more = page.length > limit;
  const points = more ? page.slice(0, limit) : page;
  return {
    key: metric,
    count,
    downsampled: false,
    points: points.map(toPoint),
    next_cursor: more ? encodeStepCursor(points[points.length - 1]!.step) : null,
  };
}

/**
 * A series' points in [lo, hi] in one answer: all of them when they are at most `maxPoints`, else each of
 * maxPoints / 2 equal step buckets keeps its lowest and highest point. `whole`: the range is the whole
 * series, whose count its summary holds, so no count is read.
 */
async function readDownsampled(
  db: Db,
  series: { id: string; count: string; last_step: number | null },
  lo: number,
  hi: number,
  maxPoints: number,
  withTime = true,
): Promise<{ count: number; downsampled: boolean; points: repo.StoredPoint[] }> {
  if (lo > hi) return { count: 0, downsampled: false, points: [] };
  const whole = lo === 0 && hi === MAX_METRIC_STEP;
  const facts = whole ? undefined : await repo.rangeFacts(db, series.id, lo, hi);
  const count = facts ? facts.count : Number(series.count);
  if (count === 0) return { count: 0, downsampled: false, points: [] };
  if (count <= maxPoints) {
    const points = await repo.pagePoints(db, series.id, lo, hi, undefined, maxPoints, withTime);
    return { count, downsampled: false, points };
  }
  const buckets = Math.floor(maxPoints / 2);
  // The steps the points span: from the range's first point to its last, or, for a whole series, from step 0
  // to its last (too wide for a series that starts late, which at worst picks block extremes where the points
  // would have been read: the curve keeps its spikes either way).
  const span = whole ? (series.last_step ?? 0) + 1 : facts!.last! - facts!.first! + 1;
  const blocks = repo.blocksFor(count, span, buckets, RAW_DOWNSAMPLE_LIMIT);
  const points = await repo.downsample(db, series.id, lo, hi, buckets, blocks, withTime);
  return { count, downsampled: true, points };
}

/** `keys=a,b`: each a valid key, at most MAX_METRIC_KEYS_PER_QUERY distinct ones, in the order asked. */
function parseKeys(raw: string): string[] {
  const keys = [...new Set(raw.split(','))];
  if (keys.length > MAX_METRIC_KEYS_PER_QUERY)
    throw badRequest('invalid_parameter', `keys names at most ${MAX_METRIC_KEYS_PER_QUERY} metric keys`, {
      count: keys.length,
    });
  const bad = keys.find((k) => k.length > MAX_METRIC_KEY_LENGTH || !KEY_PATTERN.test(k));
  if (bad !== undefined)
    throw badRequest('invalid_parameter', `keys: ${JSON.stringify(bad)} is not a metric key`, { key: bad });
  return keys;
}

export async function getExperimentMetrics(
  db: Db,
  principal: Principal,
  experimentId: string,
  rawKeys: string,
  archived = false,
): Promise<ExperimentMetrics> {
  const keys = parseKeys(rawKeys);
  await getVisibleExperiment(db, principal, experimentId);
  const runs = new Map<string, ExperimentMetrics['items'][number]>();
  for (const row of await repo.experimentSummaries(db, experimentId, keys, archived)) {
    let item = runs.get(row.run_id);
    if (!item) {
      item = { run_id: row.run_id, n: row.n, r: row.r, state: row.state as RunState, metrics: {} };
      runs.set(row.run_id, item);
    }
    const figures: RunMetricFigures = {
      last_step: row.last_step,
      last: encodeMetricValue(row.last_value),
      min: value(row.min_value),
      max: value(row.max_value),
      count: Number(row.count),
    };
    item.metrics[row.key] = figures;
  }
  return { keys, items: [...runs.values()] };
}

/**
 * `GET /experiments/{id}/metrics/{key}`: the key's series of each run that logged it, a page of runs at a
 * time, each downsampled as one run's read is. The runs' reads go out together, so on PostgreSQL they share
 * the pool. An ended run's curve comes from `curves` once read, for as long as its series keeps the version
 * it was read at (a late batch, within the metrics grace, makes a new one); a running run's changes with
 * every batch, so it is read each time and not kept. The series row is read before its points, so a batch
 * committing between the two can only leave newer points under an older version, which no later read
 * asks for.
 */
export async function getExperimentMetricSeries(
  db: Db,
  principal: Principal,
  experimentId: string,
  metric: string,
  query: ExperimentSeriesQuery,
  curves?: CurveCache,
): Promise<ExperimentMetricSeries> {
  await getVisibleExperiment(db, principal, experimentId);
  const limit = query.limit ?? MAX_SERIES_RUNS_PER_PAGE;
  const lo = query.min_step ?? 0;
  const hi = query.max_step ?? MAX_METRIC_STEP;
  const after = decodeRunCursor(query.cursor);
  const rows = await repo.experimentSeries(
    db,
    experimentId,
    metric,
    after,
    limit + 1,
    query.archived ?? false,
  );
  // Like a run's key it never logged: a name that names nothing (a cursor past the last run is an
  // empty page).
  if (rows.length === 0 && after === undefined) throw notFound(`metric '${metric}' in this experiment`);
  const page = rows.slice(0, limit);
  const maxPoints = query.max_points ?? 1000;
  const items = await Promise.all(
    page.map(async (row) => {
      const cacheKey =
        curves && isTerminalRunState(row.state)
          ? `${row.id} ${row.version} ${lo} ${hi} ${maxPoints}`
          : undefined;
      let series = cacheKey === undefined ? undefined : curves!.get(cacheKey);
      if (!series) {
        series = await readDownsampled(db, row, lo, hi, maxPoints, false);
        if (cacheKey !== undefined) curves!.set(cacheKey, series);
      }
      return {
        run_id: row.run_id,
        n: row.n,
        r: row.r,
        state: row.state as RunState,
        count: series.count,
        downsampled: series.downsampled,
        points: series.points.map(({ step, value }) => ({ step, value: encodeMetricValue(value) })),
      };
    }),
  );
  const last = page[page.length - 1];
  return {
    key: metric,
    items,
    next_cursor: rows.length > limit && last ? encodeRunCursor(last.n, last.r) : null,
  };
}

/** `GET /experiments/{id}/metric-keys`: the keys logged in the experiment, with how many runs logged each. */
export async function listExperimentMetricKeys(
  db: Db,
  principal: Principal,
  experimentId: string,
  query: { limit?: number; cursor?: string; archived?: boolean },
): Promise<ExperimentMetricKeys> {
  await getVisibleExperiment(db, principal, experimentId);
  const limit = query.limit ?? 1000;
  const after = decodeKeyCursor(query.cursor);
  const rows = await repo.experimentKeys(db, experimentId, after, limit + 1, query.archived ?? false);
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, next_cursor: rows.length > limit && last ? encodeTextCursor(last.key) : null };
}
