import type { CurvePoint } from '@assay/contract';
import { decodeMetricValue, MAX_MAX_POINTS, type MetricValue } from '@assay/contract/metric-values';

// Metric points as the charts draw them: decoded, smoothed, and joined on one step axis.

/** uPlot's data: the x values, then one array per line (null: a gap; undefined: no point at that x). */
export type AlignedSeries = [number[], ...Array<Array<number | null | undefined>>];

/**
 * Each series on its own steps (uPlot's faceted mode): for many runs whose downsampled points fall on
 * different steps, where one shared x array would hold the union of them all (100 runs × 500 points of a
 * 10,000-step range: every step, and a line drawn across 10,000 slots per run).
 */
export type Curves = Array<[number[], Array<number | null>]>;

/** A range of steps (a zoom), both ends included. */
export interface StepRange {
  min: number;
  max: number;
}

/** A series in step order; NaN and ±Infinity stay in `values` as they are (a chart shows them as gaps). */
export interface Series {
  steps: number[];
  values: number[];
}

export function decodeSeries(points: readonly CurvePoint[]): Series {
  const steps = new Array<number>(points.length);
  const values = new Array<number>(points.length);
  for (let i = 0; i < points.length; i++) {
    steps[i] = points[i]!.step;
    values[i] = decodeMetricValue(points[i]!.value);
  }
  return { steps, values };
}

/**
 * TensorBoard's smoothing: an exponential moving average, debiased so the first points are not pulled toward
 * 0 (divided by 1 − weight^count). A NaN or infinite value is left as it is and does not enter the average.
 */
export function smooth(values: readonly number[], weight: number): number[] {
  if (weight <= 0) return [...values];
  let last = 0;
  let count = 0;
  return values.map((value) => {
    if (!Number.isFinite(value)) return value;
    last = last * weight + (1 - weight) * value;
    count += 1;
    return last / (1 - weight ** count);
  });
}

/**
 * What a chart plots for a value: null (a gap in the line) for NaN and ±Infinity, and for a value a log scale
 * cannot place (≤ 0).
 */
export function plotted(value: number, log: boolean): number | null {
  return Number.isFinite(value) && (!log || value > 0) ? value : null;
}

/**
 * Several series on the union of their steps, the shape uPlot draws: one x array and one y array per series.
 * A step a series does not have is `undefined`, which uPlot joins across; a value it cannot plot is `null`,
 * which breaks the line. So two runs logged at different steps still draw as lines, and a NaN still shows.
 */
export function align(series: readonly Series[], log: boolean): AlignedSeries {
  const first = series[0]?.steps ?? [];
  // One step array for all (a series and its smoothed curve): nothing to join.
  if (series.every((s) => s.steps === first))
    return [first, ...series.map((s) => s.values.map((v) => plotted(v, log)))];
  const all = new Set<number>();
  for (const s of series) for (const step of s.steps) all.add(step);
  const xs = [...all].sort((a, b) => a - b);
  const index = new Map<number, number>();
  xs.forEach((x, i) => index.set(x, i));
  const ys = series.map((s) => {
    const y = new Array<number | null | undefined>(xs.length).fill(undefined);
    s.steps.forEach((step, i) => (y[index.get(step)!] = plotted(s.values[i]!, log)));
    return y;
  });
  return [xs, ...ys];
}

/** Each series on its own steps, its values as uPlot plots them (`plotted`). */
export function curvesOf(series: readonly Series[], log: boolean): Curves {
  return series.map((s) => [s.steps, s.values.map((v) => plotted(v, log))]);
}

/** A figure for a readout: up to 6 significant digits; NaN and the infinities by name. */
export function formatMetric(value: number | MetricValue | null | undefined): string {
  if (value === null || value === undefined) return '—';
  const n = typeof value === 'number' ? value : decodeMetricValue(value);
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? '∞' : '−∞';
  if (Number.isInteger(n) && Math.abs(n) < 1e9) return String(n);
  return Number(n.toPrecision(6)).toString();
}

const PALETTE = [
  '#1f77b4',
  '#ff7f0e',
  '#2ca02c',
  '#d62728',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#17becf',
];

/** The i-th line's colour: ten distinct ones, then hues a golden angle apart so neighbours still differ. */
export function lineColor(i: number): string {
  return i < PALETTE.length ? PALETTE[i]! : `hsl(${Math.round((i * 137.508) % 360)} 65% 42%)`;
}

/** The number of points to ask the server for: about one per pixel of the plot, rounded so resizes reuse. */
export function pointsFor(widthPx: number): number {
  return Math.min(MAX_MAX_POINTS, Math.max(100, Math.round(widthPx / 100) * 100));
}
