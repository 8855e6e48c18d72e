import { useEffect, useMemo, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatMetric, type AlignedSeries, type Curves, type StepRange } from '../metric-series.ts';
import { useLatest, useStableValue } from '../stable-value.ts';

// uPlot draws on a canvas and sets its elements' sizes through element.style (CSSOM), which the UI's CSP
// (style-src 'self') allows; it writes no style attributes or markup. This module is loaded on demand, so
// pages without charts do not carry it.

export interface ChartLine {
  label: string;
  color: string;
  /** Stroke width in CSS pixels; 1.5 when absent. */
  width?: number;
  /** Drawn faint, under the others (the raw curve behind a smoothed one). */
  faint?: boolean;
  /** In a scatter chart: a stepped line through the points instead of the points (a best-so-far line). */
  joined?: boolean;
}

export interface MetricChartProps {
  /** The chart's accessible name. */
  label: string;
  /**
   * The series on one shared x array; or, as `curves`, each on its own steps (then no live legend values).
   */
  data: AlignedSeries | { curves: Curves };
  lines: ChartLine[];
  width: number;
  height?: number;
  xLabel: string;
  log?: boolean;
  /**
   * Points only, no lines; `categories` names the x positions 0…n−1 (a config value that is not a number).
   */
  scatter?: { logX?: boolean; categories?: string[]; wholeX?: boolean };
  /** The shown x range; absent: the data's. */
  zoom?: StepRange | null;
  /** Dragging across the plot chooses a range; a double click resets it (null). */
  onZoom?: (range: StepRange | null) => void;
}

const STEP_INCREMENTS = Array.from({ length: 16 }, (_, e) => [1, 2, 5].map((m) => m * 10 ** e)).flat();

/** A linear range around [min, max] with a margin, so the extreme points are not cut by the plot's edge. */
function padded(min: number, max: number): [number, number] {
  const margin = min === max ? Math.abs(min) * 0.1 || 1 : (max - min) * 0.05;
  return [min - margin, max + margin];
}

/** The steps the chart's data spans: the shared x array's ends, or the outermost ends of its curves. */
function stepRange(u: uPlot, faceted: boolean): StepRange | null {
  if (!faceted) {
    const xs = u.data[0];
    return xs.length > 0 ? { min: xs[0]!, max: xs[xs.length - 1]! } : null;
  }
  let min = Infinity;
  let max = -Infinity;
  for (let s = 1; s < u.data.length; s++) {
    const xs = (u.data[s] as unknown as Curves[number])[0];
    if (xs.length === 0) continue;
    min = Math.min(min, xs[0]!);
    max = Math.max(max, xs[xs.length - 1]!);
  }
  return min <= max ? { min, max } : null;
}

/**
 * One uPlot chart. It is rebuilt when its lines, size or scales change, and only redrawn when its data does.
 */
export default function MetricChart(props: MetricChartProps) {
  const { label, data, lines, width, height = 240, xLabel, log = false, scatter, zoom, onZoom } = props;
  const faceted = !Array.isArray(data);
  const plotData = useMemo(
    () => (Array.isArray(data) ? data : [null, ...data.curves]) as uPlot.AlignedData,
    [data],
  );
  const target = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const zoomRef = useLatest(zoom);
  const onZoomRef = useLatest(onZoom);
  const dataRef = useLatest(plotData);

  // Every value the options read, kept while its text is the same (`lines` is a new array on every render).
  const shape = useStableValue(
    { lines, width, height, xLabel, log, scatter, faceted },
    JSON.stringify([lines, width, height, xLabel, log, scatter, faceted]),
  );
  const options = useMemo((): uPlot.Options => {
    const { lines, width, height, xLabel, log, scatter, faceted } = shape;
    const categories = scatter?.categories;
    return {
      ...(faceted ? { mode: 2 as const } : {}),
      width,
      height,
      // Only a line chart zooms: the selection becomes a step range the page refetches in full detail.
      cursor: scatter
        ? { drag: { x: false, y: false } }
        : {
            drag: { x: true, y: false, setScale: false },
            bind: {
              dblclick: () => () => {
                onZoomRef.current?.(null);
                return null;
              },
            },
          },
      scales: {
        x: scatter
          ? categories
            ? { time: false, range: () => [-0.5, categories.length - 0.5] }
            : scatter.logX
              ? { time: false, distr: 3, range: (_u, min, max) => [min / 1.5, max * 1.5] }
              : { time: false, range: (_u, min, max) => padded(min, max) }
          : {
              time: false,
              range: (_u, min, max) => {
                const z = zoomRef.current;
                return z ? [z.min, z.max] : min === max ? [min - 1, max + 1] : [min, max];
              },
            },
        y: log ? { distr: 3, log: 10 } : {},
      },
      axes: [
        {
          label: xLabel,
          // Steps (and trial numbers) are whole numbers: no tick between two of them.
          ...(!scatter || scatter.wholeX ? { incrs: STEP_INCREMENTS } : {}),
          ...(categories
            ? {
                splits: () => categories.map((_, i) => i),
                values: (_u: uPlot, splits: number[]) => splits.map((s) => categories[s] ?? ''),
              }
            : {}),
        },
        { values: (_u, splits) => splits.map((s) => formatMetric(s)), size: 60 },
      ],
      legend: { show: true, live: true },
      series: [
        { label: xLabel, value: (_u, v) => (categories ? (categories[v] ?? '—') : formatMetric(v)) },
        ...lines.map((line): uPlot.Series => ({
          ...(faceted
            ? {
                facets: [
                  { scale: 'x', auto: true },
                  { scale: 'y', auto: true },
                ],
              }
            : {}),
          label: line.label,
          stroke: line.faint ? `${line.color}55` : line.color,
          width: line.width ?? 1.5,
          value: (_u, v) => formatMetric(v),
          ...(scatter && !line.joined
            ? { paths: () => null, points: { show: true, size: 8, fill: line.color, stroke: line.color } }
            : scatter
              ? { paths: uPlot.paths.stepped!({ align: 1 }), points: { show: false }, spanGaps: true }
              : { points: { show: false } }),
        })),
      ],
      hooks: {
        setSelect: [
          (u) => {
            if (u.select.width > 3) {
              const min = u.posToVal(u.select.left, 'x');
              const max = u.posToVal(u.select.left + u.select.width, 'x');
              onZoomRef.current?.({ min: Math.max(0, Math.floor(min)), max: Math.ceil(max) });
            }
            u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
          },
        ],
        // What was drawn, for a reader of the page (the tests and the benchmark): lines with a point, points.
        draw: [
          (u) => {
            let drawnLines = 0;
            let points = 0;
            for (let s = 1; s < u.data.length; s++) {
              let n = 0;
              const ys = (faceted ? (u.data[s] as unknown as Curves[number])[1] : u.data[s]!) as unknown[];
              for (const v of ys) if (v !== null && v !== undefined) n += 1;
              if (n > 0) drawnLines += 1;
              points += n;
            }
            const root = target.current;
            if (!root) return;
            root.dataset.drawnLines = String(drawnLines);
            root.dataset.drawnPoints = String(points);
            root.dataset.xMin = String(u.scales.x!.min);
            root.dataset.xMax = String(u.scales.x!.max);
          },
        ],
      },
    };
  }, [shape, zoomRef, onZoomRef]);

  useEffect(() => {
    // The data as it is now; the data effect below redraws the same chart when it changes.
    const u = new uPlot(options, dataRef.current, target.current!);
    plot.current = u;
    return () => {
      u.destroy();
      plot.current = null;
    };
  }, [options, dataRef]);

  useEffect(() => {
    const u = plot.current;
    if (u && u.data !== plotData) u.setData(plotData);
  }, [plotData]);

  useEffect(() => {
    const u = plot.current;
    if (!u || scatter) return;
    const range = zoom ?? stepRange(u, faceted);
    if (range) u.setScale('x', range);
  }, [zoom, scatter, faceted]);

  return (
    <div
      ref={target}
      className="chart"
      role="figure"
      aria-label={label}
      data-scale={log ? 'log' : 'linear'}
      data-lines={lines.length}
    />
  );
}
