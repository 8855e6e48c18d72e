import { Type, type Static } from 'typebox';
import { Nullable, OneOf, PositiveInt32, Timestamp, Uuid } from './common.ts';
import { RunStateSchema } from './runs.ts';
import { VariationNumber } from './variations.ts';
import {
  MAX_METRIC_KEY_LENGTH,
  MAX_METRIC_KEYS_PER_QUERY,
  MAX_METRIC_PAGE,
  MAX_MAX_POINTS,
  MAX_METRIC_POINTS_PER_REQUEST,
  MAX_METRIC_STEP,
  METRIC_KEY_PATTERN,
  MIN_MAX_POINTS,
  NON_FINITE_METRIC_VALUES,
} from './metric-values.ts';

export * from './metric-values.ts';

/**
 * Scalar metrics of a run: time series of (key, step, value). `(run, key, step)` is unique, so a repeated
 * point overwrites the earlier one and a client may resend a batch without making duplicates.
 */

export const MetricKey = Type.String({
  minLength: 1,
  maxLength: MAX_METRIC_KEY_LENGTH,
  pattern: METRIC_KEY_PATTERN,
  description: 'letters, digits, `_ - . / :` and inner spaces; up to 250 characters',
});

export const MetricValue = Type.Union([Type.Number(), OneOf(NON_FINITE_METRIC_VALUES)], {
  description: 'a number, or "NaN", "Infinity", "-Infinity"',
});
export type MetricValue = Static<typeof MetricValue>;

export const MetricStep = Type.Integer({ minimum: 0, maximum: MAX_METRIC_STEP });

/** One point as a producer sends it; `timestamp` defaults to the moment the service receives the batch. */
export const MetricPointInput = Type.Object(
  {
    key: MetricKey,
    step: MetricStep,
    value: MetricValue,
    timestamp: Type.Optional(Timestamp),
  },
  { additionalProperties: false },
);
export type MetricPointInput = Static<typeof MetricPointInput>;

export const LogMetricsBody = Type.Object(
  { metrics: Type.Array(MetricPointInput, { minItems: 1, maxItems: MAX_METRIC_POINTS_PER_REQUEST }) },
  { additionalProperties: false },
);
export type LogMetricsBody = Static<typeof LogMetricsBody>;

/** What a stored batch answers: how many points it held (repeats of one key and step count once each). */
export const LogMetricsResult = Type.Object({ stored: Type.Integer() });
export type LogMetricsResult = Static<typeof LogMetricsResult>;

/** One point as the service answers it. */
export const MetricPoint = Type.Object({ step: MetricStep, value: MetricValue, timestamp: Timestamp });
export type MetricPoint = Static<typeof MetricPoint>;

/**
 * A key's last point (by step) and its extremes; NaN is ignored by min and max (they are null when all
 * are NaN).
 */
export const MetricSummary = Type.Object({
  key: MetricKey,
  count: Type.Integer(),
  last: MetricPoint,
  min: Nullable(MetricValue),
  max: Nullable(MetricValue),
});
export type MetricSummary = Static<typeof MetricSummary>;

/**
 * `GET …/runs/{r}/metrics`: pages of the run's keys. The default page holds as many keys as a run may log by
 * default (ASSAY_METRIC_KEYS_PER_RUN), so a reader that does not follow `next_cursor` still sees them
 * all there.
 */
export const RunMetricListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_METRIC_PAGE, default: 1000 })),
    cursor: Type.Optional(Type.String({ maxLength: 400 })),
    contains: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_METRIC_KEY_LENGTH,
        description: 'only the keys holding this text, letter case ignored',
      }),
    ),
  },
  { additionalProperties: false },
);
export type RunMetricListQuery = Static<typeof RunMetricListQuery>;

/** The run's keys in byte order, each with its summary, `limit` a page (follow `next_cursor`). */
export const RunMetricList = Type.Object(
  { items: Type.Array(MetricSummary), next_cursor: Nullable(Type.String()) },
  { $id: 'RunMetricList' },
);
export type RunMetricList = Static<typeof RunMetricList>;

export const RunMetricParams = Type.Object({
  id: Uuid,
  n: VariationNumber,
  r: PositiveInt32,
  key: MetricKey,
});

export const MetricSeriesQuery = Type.Object(
  {
    max_points: Type.Optional(
      Type.Integer({
        minimum: MIN_MAX_POINTS,
        maximum: MAX_MAX_POINTS,
        description: 'downsample on the server to about this many points (each bucket keeps its extremes)',
      }),
    ),
    min_step: Type.Optional(MetricStep),
    max_step: Type.Optional(MetricStep),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_METRIC_PAGE, default: 1000 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type MetricSeriesQuery = Static<typeof MetricSeriesQuery>;

/**
 * One key's series in step order. With `max_points` the whole step range in one answer, downsampled when it
 * holds more points than that (`downsampled: true`, `next_cursor` null); without, every point, paged
 * by `limit`.
 */
export const MetricSeries = Type.Object(
  {
    key: MetricKey,
    count: Type.Integer({ description: 'points stored in the asked step range' }),
    downsampled: Type.Boolean(),
    points: Type.Array(MetricPoint),
    next_cursor: Nullable(Type.String()),
  },
  { $id: 'MetricSeries' },
);
export type MetricSeries = Static<typeof MetricSeries>;

/** The experiment-wide reads leave archived runs out of a comparison unless asked. */
const IncludeArchived = {
  archived: Type.Optional(Type.Boolean({ default: false, description: 'include archived runs' })),
};

export const ExperimentMetricsQuery = Type.Object(
  {
    keys: Type.String({
      minLength: 1,
      maxLength: 4000,
      description: `comma-separated metric keys, at most ${MAX_METRIC_KEYS_PER_QUERY}`,
    }),
    ...IncludeArchived,
  },
  { additionalProperties: false },
);

/** A key's figures in one run, for comparisons: the last point's step and value and the extremes. */
export const RunMetricFigures = Type.Object({
  last_step: MetricStep,
  last: MetricValue,
  min: Nullable(MetricValue),
  max: Nullable(MetricValue),
  count: Type.Integer(),
});
export type RunMetricFigures = Static<typeof RunMetricFigures>;

/** Which run an item of an experiment-wide answer is about. */
const ComparedRun = { run_id: Uuid, n: Type.Integer(), r: Type.Integer(), state: RunStateSchema };

/**
 * `GET /experiments/{id}/metrics?keys=`: every run of the experiment that logged at least one of the keys,
 * with those keys' figures (a key the run never logged is absent from its `metrics`).
 */
export const ExperimentMetrics = Type.Object(
  {
    keys: Type.Array(MetricKey),
    items: Type.Array(Type.Object({ ...ComparedRun, metrics: Type.Record(Type.String(), RunMetricFigures) })),
  },
  { $id: 'ExperimentMetrics' },
);
export type ExperimentMetrics = Static<typeof ExperimentMetrics>;

/** `GET /experiments/{id}/metric-keys`: pages of keys, `limit` at a time. */
export const ExperimentMetricKeysQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_METRIC_PAGE, default: 1000 })),
    cursor: Type.Optional(Type.String({ maxLength: 400 })),
    ...IncludeArchived,
  },
  { additionalProperties: false },
);

/**
 * Every key logged by a run of the experiment (byte order), with how many runs logged it: what a comparison
 * offers to chart, without a request per run.
 */
export const ExperimentMetricKeys = Type.Object(
  {
    items: Type.Array(Type.Object({ key: MetricKey, runs: Type.Integer({ minimum: 1 }) })),
    next_cursor: Nullable(Type.String()),
  },
  { $id: 'ExperimentMetricKeys' },
);
export type ExperimentMetricKeys = Static<typeof ExperimentMetricKeys>;

export const ExperimentMetricParams = Type.Object({ id: Uuid, key: MetricKey });

/**
 * Runs per page of `GET /experiments/{id}/metrics/{key}`: with `max_points` at most 10,000, an answer
 * is bounded.
 */
export const MAX_SERIES_RUNS_PER_PAGE = 100;

export const ExperimentSeriesQuery = Type.Object(
  {
    max_points: Type.Optional(
      Type.Integer({
        minimum: MIN_MAX_POINTS,
        maximum: MAX_MAX_POINTS,
        default: 1000,
        description:
          "each run's series downsampled on the server to about this many points, as one run's read",
      }),
    ),
    min_step: Type.Optional(MetricStep),
    max_step: Type.Optional(MetricStep),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_SERIES_RUNS_PER_PAGE, default: MAX_SERIES_RUNS_PER_PAGE }),
    ),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
    ...IncludeArchived,
  },
  { additionalProperties: false },
);
export type ExperimentSeriesQuery = Static<typeof ExperimentSeriesQuery>;

/** A point of a compared curve: what a chart draws (a run's own series read has the timestamps too). */
export const CurvePoint = Type.Object({ step: MetricStep, value: MetricValue });
export type CurvePoint = Static<typeof CurvePoint>;

/**
 * `GET /experiments/{id}/metrics/{key}`: one key's series of every run of the experiment that logged it, in
 * (n, r) order, `limit` runs a page, each downsampled like `GET …/runs/{r}/metrics/{key}?max_points=`: the
 * curves of a comparison in one request instead of one per run.
 */
export const ExperimentMetricSeries = Type.Object(
  {
    key: MetricKey,
    items: Type.Array(
      Type.Object({
        ...ComparedRun,
        count: Type.Integer({ description: 'points stored in the asked step range' }),
        downsampled: Type.Boolean(),
        points: Type.Array(CurvePoint),
      }),
    ),
    next_cursor: Nullable(Type.String()),
  },
  { $id: 'ExperimentMetricSeries' },
);
export type ExperimentMetricSeries = Static<typeof ExperimentMetricSeries>;
