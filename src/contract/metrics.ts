import { Type, type Static } from 'typebox';
import { Nullable, OneOf, PositiveInt32, Timestamp, Uuid } from './common.ts';
import { RunStateSchema } from './runs.ts';
import { VariationNumber } from './variations.ts';

/**
 * Scalar metrics of a run: time series of (key, step, value). `(run, key, step)` is unique, so a repeated point
 * overwrites the earlier one and a client may resend a batch without making duplicates.
 */

/** The most points one `POST …/metrics` may carry (MLflow's `log-batch` allows the same 1,000). */
export const MAX_METRIC_POINTS_PER_REQUEST = 1000;
/** The longest key; keys are letters, digits and `_ - . / :` plus spaces inside (`train/loss`, `val acc`). */
export const MAX_METRIC_KEY_LENGTH = 250;
export const METRIC_KEY_PATTERN = '^[A-Za-z0-9_./:-]([A-Za-z0-9_./: -]*[A-Za-z0-9_./:-])?$';
/** Steps are non-negative integers that JSON carries exactly. */
export const MAX_METRIC_STEP = Number.MAX_SAFE_INTEGER;
/** The most keys one `GET /experiments/{id}/metrics?keys=` may ask for. */
export const MAX_METRIC_KEYS_PER_QUERY = 50;
/** Bounds of `max_points` (the server's downsampling target) and of one page of a raw series. */
export const MIN_MAX_POINTS = 2;
export const MAX_MAX_POINTS = 10_000;
export const MAX_METRIC_PAGE = 10_000;

export const MetricKey = Type.String({
  minLength: 1,
  maxLength: MAX_METRIC_KEY_LENGTH,
  pattern: METRIC_KEY_PATTERN,
  description: 'letters, digits, `_ - . / :` and inner spaces; up to 250 characters',
});

/**
 * JSON has no literal for NaN or ±Infinity, so they travel as these three strings, in both directions; every
 * other value is a JSON number.
 */
export const NON_FINITE_METRIC_VALUES = ['NaN', 'Infinity', '-Infinity'] as const;
export type NonFiniteMetricValue = (typeof NON_FINITE_METRIC_VALUES)[number];
export const MetricValue = Type.Union([Type.Number(), OneOf(NON_FINITE_METRIC_VALUES)], {
  description: 'a number, or "NaN", "Infinity", "-Infinity"',
});
export type MetricValue = Static<typeof MetricValue>;

/** A JS number as it travels on the wire. */
export const encodeMetricValue = (value: number): MetricValue =>
  Number.isFinite(value) ? value : Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
/** The wire form back to a JS number. */
export const decodeMetricValue = (value: MetricValue): number =>
  typeof value === 'number'
    ? value
    : value === 'NaN'
      ? Number.NaN
      : value === 'Infinity'
        ? Infinity
        : -Infinity;

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

/** A key's last point (by step) and its extremes; NaN is ignored by min and max (they are null when all are NaN). */
export const MetricSummary = Type.Object({
  key: MetricKey,
  count: Type.Integer(),
  last: MetricPoint,
  min: Nullable(MetricValue),
  max: Nullable(MetricValue),
});
export type MetricSummary = Static<typeof MetricSummary>;

/** `GET …/runs/{r}/metrics`: every key of the run, by key. */
export const RunMetricList = Type.Object({ items: Type.Array(MetricSummary) }, { $id: 'RunMetricList' });
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
 * holds more points than that (`downsampled: true`, `next_cursor` null); without, every point, paged by `limit`.
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

export const ExperimentMetricsQuery = Type.Object(
  {
    keys: Type.String({
      minLength: 1,
      maxLength: 4000,
      description: `comma-separated metric keys, at most ${MAX_METRIC_KEYS_PER_QUERY}`,
    }),
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

/**
 * `GET /experiments/{id}/metrics?keys=`: every run of the experiment that logged at least one of the keys, with
 * those keys' figures (a key the run never logged is absent from its `metrics`).
 */
export const ExperimentMetrics = Type.Object(
  {
    keys: Type.Array(MetricKey),
    items: Type.Array(
      Type.Object({
        run_id: Uuid,
        n: Type.Integer(),
        r: Type.Integer(),
        state: RunStateSchema,
        metrics: Type.Record(Type.String(), RunMetricFigures),
      }),
    ),
  },
  { $id: 'ExperimentMetrics' },
);
export type ExperimentMetrics = Static<typeof ExperimentMetrics>;
