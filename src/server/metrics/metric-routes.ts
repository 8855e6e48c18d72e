import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  ExperimentMetricKeys,
  ExperimentMetricKeysQuery,
  ExperimentMetricParams,
  ExperimentMetricSeries,
  ExperimentMetrics,
  ExperimentSeriesQuery,
  MAX_SERIES_RUNS_PER_PAGE,
  ExperimentMetricsQuery,
  ExperimentParams,
  LogMetricsBody,
  LogMetricsResult,
  MAX_METRIC_POINTS_PER_REQUEST,
  MetricSeries,
  MetricSeriesQuery,
  RunMetricList,
  RunMetricListQuery,
  RunMetricParams,
  RunParams,
} from '@assay/contract';
import type { ServiceConfig } from '../config.ts';
import type { Db } from '../db/database.ts';
import { withErrors } from '../http/schemas.ts';
import type { RunKey } from '../runs/run-repository.ts';
import { CurveCache } from './curve-cache.ts';
import * as service from './metric-service.ts';
import { noMetricsObserver, type MetricsObserver } from './metrics-observer.ts';

const tags = ['metrics'];

/**
 * The service's schemas coerce types (app.ts), which would store a `null` or `true` value, or a `"5"` step,
 * as a number. A metric must not turn a missing value into 0, so these points are refused before the schema
 * runs, as the schema refuses any other bad point (422 naming its path, through the one error mapper).
 */
async function refuseCoercedPoints(req: FastifyRequest): Promise<void> {
  const metrics = (req.body as { metrics?: unknown } | undefined)?.metrics;
  if (!Array.isArray(metrics)) return;
  for (const [i, point] of metrics.entries()) {
    if (typeof point !== 'object' || point === null) continue;
    const { step, value, timestamp } = point as { step?: unknown; value?: unknown; timestamp?: unknown };
    const field =
      'value' in point && typeof value !== 'number' && typeof value !== 'string'
        ? 'value'
        : 'step' in point && typeof step !== 'number'
          ? 'step'
          : typeof timestamp === 'string' && !storableTimestamp(timestamp)
            ? 'timestamp'
            : undefined;
    if (field === undefined) continue;
    const message =
      field === 'value'
        ? 'must be a number or "NaN", "Infinity", "-Infinity"'
        : field === 'step'
          ? 'must be integer'
          : 'must be a date-time whose UTC year is 1 to 9999';
    throw Object.assign(new Error(`body/metrics/${i}/${field} ${message}`), {
      statusCode: 400,
      validationContext: 'body',
      validation: [{ instancePath: `/metrics/${i}/${field}`, message }],
    });
  }
}

/**
 * RFC 3339 allows what PostgreSQL's timestamptz refuses (year 0000, an offset that carries the moment past
 * 9999); such a point would fail the whole batch's statement, so it is refused here by its index.
 */
function storableTimestamp(text: string): boolean {
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return false;
  const year = new Date(ms).getUTCFullYear();
  return year >= 1 && year <= 9999;
}

const keyOf = (p: { id: string; n: number; r: number }): RunKey => ({ experimentId: p.id, n: p.n, r: p.r });

export function metricRoutes(db: Db, config: ServiceConfig, observer: MetricsObserver = noMetricsObserver) {
  const curves = config.curveCachePoints > 0 ? new CurveCache(config.curveCachePoints) : undefined;
  const limits = { graceMs: config.metricsGraceMs, keysPerRun: config.metricKeysPerRun };
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    // The same scopes as the run's own endpoints: a runner logs with what moves its run, a reader reads
    // with runs:read.
    const read = { scope: 'runs:read' as const, workerKeys: true };
    const write = { scope: 'runs:write' as const, workerKeys: true };
    const path = '/experiments/:id/variations/:n/runs/:r/metrics';

    app.post(
      path,
      {
        config: write,
        preValidation: refuseCoercedPoints,
        schema: {
          tags,
          operationId: 'logRunMetrics',
          summary: `Log up to ${MAX_METRIC_POINTS_PER_REQUEST} metric points of a running run`,
          description:
            'Stores the batch whole or not at all. A point repeating an earlier (key, step) overwrites it, so a ' +
            'batch may be resent; inside one batch the last repeat wins. Taken while the run is running and for ' +
            '`ASSAY_METRICS_GRACE_S` after it ended (409 `run_ended` later, `run_not_started` before it started). ' +
            'NaN and ±Infinity travel as the strings "NaN", "Infinity", "-Infinity"; a point without a timestamp ' +
            'gets the time the service received it. A refused point is named by its path in `error.details` ' +
            '(`/metrics/3/value`). A batch that would bring the run past `ASSAY_METRIC_KEYS_PER_RUN` distinct keys ' +
            '(default 1,000) is 409 `metric_key_limit`, and none of its points is stored.',
          params: RunParams,
          body: LogMetricsBody,
          response: withErrors({ 200: LogMetricsResult }, 409),
        },
      },
      (req) =>
        service.logMetrics(db, req.principal, keyOf(req.params), req.body, limits, {
          observer,
          log: req.log,
        }),
    );
    app.get(
      path,
      {
        config: read,
        schema: {
          tags,
          operationId: 'listRunMetrics',
          summary: "The run's metric keys, each with its count, last point and extremes (NaN ignored)",
          description:
            'In byte order, `limit` a page (default 1,000, the default number of keys a run may log; follow ' +
            '`next_cursor`). `contains` keeps the keys holding that text, letter case ignored.',
          params: RunParams,
          querystring: RunMetricListQuery,
          response: withErrors({ 200: RunMetricList }),
        },
      },
      (req) => service.listRunMetrics(db, req.principal, keyOf(req.params), req.query),
    );
    app.get(
      `${path}/:key`,
      {
        config: read,
        schema: {
          tags,
          operationId: 'getRunMetricSeries',
          summary: 'One metric key of a run as a series in step order (the key URL-encoded: train%2Floss)',
          description:
            'Without `max_points`: every point in the step range, `limit` at a time (follow `next_cursor`). ' +
            'With `max_points`: the whole range in one answer; when it holds more points, the server cuts the ' +
            'range into max_points / 2 equal step buckets and keeps each bucket’s extremes, its lowest and its ' +
            'highest point (NaN ignored), so spikes survive and the answer has at most `max_points` points. On ' +
            'long ranges the extremes come from per-block extremes of 256 steps kept at ingest. A key the run ' +
            'never logged is 404.',
          params: RunMetricParams,
          querystring: MetricSeriesQuery,
          response: withErrors({ 200: MetricSeries }),
        },
      },
      (req) => service.getRunMetricSeries(db, req.principal, keyOf(req.params), req.params.key, req.query),
    );
    app.get(
      '/experiments/:id/metrics',
      {
        config: { scope: 'runs:read' as const },
        schema: {
          tags,
          operationId: 'getExperimentMetrics',
          summary: "Compare runs: each run's last value, min, max and count of the asked metric keys",
          description: 'Archived runs are left out unless `archived=true`.',
          params: ExperimentParams,
          querystring: ExperimentMetricsQuery,
          response: withErrors({ 200: ExperimentMetrics }),
        },
      },
      (req) =>
        service.getExperimentMetrics(db, req.principal, req.params.id, req.query.keys, req.query.archived),
    );
    app.get(
      '/experiments/:id/metrics/:key',
      {
        config: { scope: 'runs:read' as const },
        schema: {
          tags,
          operationId: 'getExperimentMetricSeries',
          summary:
            "Compare curves: one metric key's series of every run that logged it, downsampled, in one answer",
          description:
            `Runs in (n, r) order, \`limit\` (at most ${MAX_SERIES_RUNS_PER_PAGE}) a page (follow \`next_cursor\`); ` +
            "each run's series over the step range downsampled as `GET …/runs/{r}/metrics/{key}?max_points=` " +
            'does (default 1,000 points). A key no run of the experiment logged is 404. Archived runs are left ' +
            'out unless `archived=true`.',
          params: ExperimentMetricParams,
          querystring: ExperimentSeriesQuery,
          response: withErrors({ 200: ExperimentMetricSeries }),
        },
      },
      (req) =>
        service.getExperimentMetricSeries(
          db,
          req.principal,
          req.params.id,
          req.params.key,
          req.query,
          curves,
        ),
    );
    app.get(
      '/experiments/:id/metric-keys',
      {
        config: { scope: 'runs:read' as const },
        schema: {
          tags,
          operationId: 'listExperimentMetricKeys',
          summary: 'Every metric key logged by a run of the experiment, with how many runs logged it',
          description: 'Archived runs are left out unless `archived=true`.',
          params: ExperimentParams,
          querystring: ExperimentMetricKeysQuery,
          response: withErrors({ 200: ExperimentMetricKeys }),
        },
      },
      (req) => service.listExperimentMetricKeys(db, req.principal, req.params.id, req.query),
    );
  };
}
