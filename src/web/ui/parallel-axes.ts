// The axes of a sweep's parallel-coordinates plot: one per dimension of its space, then the objective. Each
// axis maps a value to a height in [0, 1] (0 the bottom), from the declared space where there is one, so a
// trial's line is placed the same way however many trials have ended.
import type { Distribution, SweepRun } from '@assay/contract';
import { categoryName } from './param-format.ts';
import { formatMetric } from './metric-series.ts';

export interface Tick {
  at: number;
  label: string;
}

export interface Axis {
  key: string;
  label: string;
  /** The objective's axis (the others are the space's). */
  objective: boolean;
  /** The run's value on this axis. */
  read: (run: SweepRun) => unknown;
  kind: 'linear' | 'log' | 'category';
  /** The value's height in [0, 1]; null when the axis cannot place it (not a number, ≤ 0 on a log axis). */
  position: (value: unknown) => number | null;
  ticks: Tick[];
}

const paramAxis = (key: string) => ({
  key,
  label: key,
  objective: false,
  read: (run: SweepRun) => run.params[key],
});

function linearAxis(key: string, low: number, high: number, label = key): Axis {
  const span = high - low;
  const position = (v: unknown) =>
    typeof v === 'number' && Number.isFinite(v) ? (span === 0 ? 0.5 : (v - low) / span) : null;
  const values = span === 0 ? [low] : [low, low + span / 2, high];
  const ticks = values.map((v) => ({ at: position(v)!, label: formatMetric(v) }));
  return { ...paramAxis(key), label, kind: 'linear', position, ticks };
}

/** A linear axis whose ticks are whole numbers: every one up to 6 of them, else the ends and the middle. */
function intAxis(key: string, low: number, high: number): Axis {
  const axis = linearAxis(key, low, high);
  const values =
    high - low < 6
      ? Array.from({ length: high - low + 1 }, (_, i) => low + i)
      : [low, Math.round((low + high) / 2), high];
  return { ...axis, ticks: values.map((v) => ({ at: axis.position(v)!, label: String(v) })) };
}

function logAxis(key: string, low: number, high: number): Axis {
  const [a, b] = [Math.log10(low), Math.log10(high)];
  const position = (v: unknown) =>
    typeof v === 'number' && v > 0 ? (b === a ? 0.5 : (Math.log10(v) - a) / (b - a)) : null;
  // The powers of ten inside the range, and its ends.
  const values = [low, high];
  for (let e = Math.ceil(a); e <= Math.floor(b); e++) values.push(10 ** e);
  const ticks = [...new Set(values)]
    .sort((x, y) => x - y)
    .map((v) => ({ at: position(v)!, label: formatMetric(v) }))
    .filter((t, i, all) => i === 0 || t.at - all[i - 1]!.at > 0.06);
  return { ...paramAxis(key), kind: 'log', position, ticks };
}

function categoryAxis(key: string, values: readonly unknown[]): Axis {
  const names = [...new Set(values.map(categoryName))];
  const at = (i: number) => (names.length === 1 ? 0.5 : i / (names.length - 1));
  const index = new Map(names.map((name, i) => [name, i]));
  const position = (v: unknown) => {
    const i = index.get(categoryName(v));
    return i === undefined ? null : at(i);
  };
  const ticks = names.map((label, i) => ({ at: at(i), label }));
  return { ...paramAxis(key), kind: 'category', position, ticks };
}

function axisOfDistribution(key: string, d: Distribution): Axis {
  switch (d.distribution) {
    case 'uniform':
      return linearAxis(key, d.low, d.high);
    case 'log_uniform':
      return logAxis(key, d.low, d.high);
    case 'int':
      return d.log && d.low > 0 ? logAxis(key, d.low, d.high) : intAxis(key, d.low, d.high);
    case 'choice':
      return categoryAxis(key, d.values);
  }
}

/**
 * Without a declared space (a grid or a list): numbers over the range seen, on a log axis when they are
 * positive and span two orders of magnitude or more (learning rates), else linear (whole-number ticks for
 * whole numbers, such as seeds); anything else categories.
 */
function axisOfValues(key: string, values: readonly unknown[]): Axis {
  const numbers = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  if (numbers.length === 0 || numbers.length !== values.length) return categoryAxis(key, values);
  const [low, high] = [Math.min(...numbers), Math.max(...numbers)];
  if (low > 0 && high / low >= 100) return logAxis(key, low, high);
  return numbers.every(Number.isInteger) ? intAxis(key, low, high) : linearAxis(key, low, high);
}

/**
 * The plot's axes: the declared space's keys in order (or every key the runs' params set), then the
 * objective over the values seen, when any run logged one.
 */
export function sweepAxes(
  space: Record<string, Distribution> | undefined,
  runs: readonly SweepRun[],
  objective: string | undefined,
): Axis[] {
  const keys = space ? Object.keys(space) : [...new Set(runs.flatMap((r) => Object.keys(r.params)))];
  const axes = keys.map((key) =>
    space?.[key]
      ? axisOfDistribution(key, space[key])
      : axisOfValues(
          key,
          runs.map((r) => r.params[key]).filter((v) => v !== undefined),
        ),
  );
  const values = runs.map((r) => r.objective).filter((v): v is number => v !== null && Number.isFinite(v));
  if (values.length > 0) {
    const axis = linearAxis('objective', Math.min(...values), Math.max(...values), objective ?? 'objective');
    axes.push({ ...axis, objective: true, read: (run) => run.objective });
  }
  return axes;
}

// Viridis at five stops: ordered in lightness, readable by those who do not tell red from green.
const STOPS = [
  [68, 1, 84],
  [59, 82, 139],
  [33, 145, 140],
  [94, 201, 98],
  [253, 231, 37],
] as const;

/** A colour for t in [0, 1] on the viridis scale (0 dark purple, 1 yellow). */
export function viridis(t: number): string {
  const x = Math.min(1, Math.max(0, t)) * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(x));
  const f = x - i;
  const [a, b] = [STOPS[i]!, STOPS[i + 1]!];
  const mix = (k: 0 | 1 | 2) => Math.round(a[k] + (b[k] - a[k]) * f);
  return `rgb(${mix(0)}, ${mix(1)}, ${mix(2)})`;
}
