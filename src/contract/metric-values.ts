// The metric limits and the NaN/Infinity wire encoding as plain values, apart from the TypeBox schemas of
// metrics.ts: the client's metric buffer and `assay run`'s metrics-file tail import this entry
// (`@assay/contract/metric-values`) so that a runner's start-up does not load TypeBox and every schema.

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

/**
 * JSON has no literal for NaN or ±Infinity, so they travel as these three strings, in both directions; every
 * other value is a JSON number.
 */
export const NON_FINITE_METRIC_VALUES = ['NaN', 'Infinity', '-Infinity'] as const;
export type NonFiniteMetricValue = (typeof NON_FINITE_METRIC_VALUES)[number];
/**
 * A value as it travels: a JSON number or one of the three strings (the `MetricValue` schema of metrics.ts).
 */
export type MetricValue = number | NonFiniteMetricValue;

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
