import type { ApiClient, RunData } from '@assay/client/browser';
import type { RunMetricFigures } from '@assay/contract';
import { decodeMetricValue } from '@assay/contract/metric-values';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import type { Cell } from '../compare-rows.ts';
import {
  curvesOf,
  decodeSeries,
  lineColor,
  plotted,
  smooth,
  type AlignedSeries,
  type StepRange,
} from '../metric-series.ts';
import { allPages } from '../all-pages.ts';
import { queryKeys } from '../query-keys.ts';
import { useClient } from '../session.tsx';
import { useStableValue } from '../stable-value.ts';
import { Chart, useWidth, type ChartSettings } from './chart-frame.tsx';
import { ErrorState } from './status.tsx';

/** The compare page reads a running run's curves again this often (slower than one run's page: many runs). */
export const COMPARE_INTERVAL_MS = 10_000;

/** Points per curve of a comparison: about one per two pixels of a wide chart, half that for many curves. */
export const comparePoints = (curves: number) => (curves > 10 ? 500 : 1000);

/**
 * The read of one key's curves of every run of an experiment (all pages of it) over a step range (all steps
 * without `zoom`). Read again every `COMPARE_INTERVAL_MS` while a run is running, and once more when the last
 * has ended (`running` is in the key), so each run's final points show. The page starts this read before the
 * overlay mounts; a read younger than the interval counts as fresh, so an overlay that mounts after the
 * answer arrived draws it instead of asking for the same 100 curves again.
 */
export function curvesQuery(
  client: ApiClient,
  experimentId: string,
  key: string,
  maxPoints: number,
  zoom: StepRange | null,
  running: boolean,
) {
  return {
    queryKey: queryKeys.curves(experimentId, key, maxPoints, zoom, running),
    queryFn: () =>
      allPages((cursor) =>
        client.experiments.metricSeries(experimentId, key, {
          maxPoints,
          minStep: zoom?.min,
          maxStep: zoom?.max,
          cursor,
        }),
      ),
    refetchInterval: running ? COMPARE_INTERVAL_MS : (false as const),
    staleTime: COMPARE_INTERVAL_MS,
    placeholderData: keepPreviousData,
  };
}

/**
 * One key's curves of several runs in one chart, a legend entry per run that logged the key. Every run's
 * curve comes in one read of the experiment's series of that key (a request per run would queue behind the
 * browser's six connections to the service); zoom reads every curve's zoomed steps again in full detail.
 */
export function CompareOverlay({
  experimentId,
  runs,
  metricKey,
  maxPoints,
  settings,
  labels,
}: {
  experimentId: string;
  /** The runs to draw, of those that logged the key (a sweep's subset of the experiment's runs). */
  runs: RunData[];
  metricKey: string;
  /** Points per curve: the page starts the unzoomed read with the same number before the runs arrive. */
  maxPoints: number;
  settings: ChartSettings;
  /** The legend entries of the runs drawn, by run id (their differing config values). */
  labels?: (runIds: string[]) => ReadonlyMap<string, string>;
}) {
  const client = useClient();
  const [frame, width] = useWidth<HTMLDivElement>();
  const [zoom, setZoom] = useState<StepRange | null>(null);
  const running = runs.some((run) => run.state === 'running');
  const series = useQuery(curvesQuery(client, experimentId, metricKey, maxPoints, zoom, running));
  const chart = useMemo(() => {
    if (!series.data) return null;
    const shown = new Set(runs.map((run) => run.id));
    const items = series.data.filter((item) => shown.has(item.run_id));
    const curves = items.map((item) => {
      const s = decodeSeries(item.points);
      return settings.smoothing > 0 ? { steps: s.steps, values: smooth(s.values, settings.smoothing) } : s;
    });
    const legend = labels?.(items.map((item) => item.run_id));
    return {
      // Each run on its own steps: their downsampled points seldom share one.
      data: { curves: curvesOf(curves, settings.log) },
      lines: items.map((item, i) => ({
        label: legend?.get(item.run_id) ?? `run ${item.n}.${item.r}`,
        color: lineColor(i),
        // One-pixel lines: a canvas without a GPU strokes 100 wider noisy curves in ~280 ms, these in ~10.
        width: 1,
      })),
    };
  }, [series.data, runs, settings, labels]);
  const drawn = chart?.lines.length ?? 0;

  return (
    <figure className="metric-chart compare-overlay" data-key={metricKey}>
      <figcaption>
        {metricKey} by step, {drawn} run{drawn === 1 ? '' : 's'}
      </figcaption>
      <div ref={frame} className="chart-frame">
        {series.isError ? (
          <ErrorState error={series.error} title={`Could not load the runs’ ${metricKey}`} />
        ) : chart && chart.lines.length === 0 ? (
          <p className="muted">None of these runs has logged {metricKey}.</p>
        ) : chart && width > 0 ? (
          <Chart
            label={`${metricKey} by step, one line per run`}
            data={chart.data}
            lines={chart.lines}
            width={width}
            height={320}
            xLabel="step"
            log={settings.log}
            zoom={zoom}
            onZoom={setZoom}
          />
        ) : (
          <div className="chart chart-loading" aria-busy="true">
            <p className="muted">Loading the curves of {runs.length} runs…</p>
          </div>
        )}
      </div>
      {zoom && (
        <p className="hint chart-range">
          {`steps ${zoom.min}–${zoom.max} `}
          <button type="button" onClick={() => setZoom(null)}>
            Zoom out
          </button>
        </p>
      )}
    </figure>
  );
}

export interface ScatterRow {
  run: RunData;
  config: Record<string, Cell>;
  figures: Record<string, RunMetricFigures> | undefined;
}

/** Each config path that differs between the variations against a key's final value: a scatter per path. */
export function ConfigScatters({
  paths,
  rows,
  metricKey,
  log,
}: {
  paths: string[];
  rows: ScatterRow[];
  metricKey: string;
  log: boolean;
}) {
  return (
    <div className="charts">
      {paths.map((path) => (
        <ConfigScatter key={path} path={path} rows={rows} metricKey={metricKey} log={log} />
      ))}
    </div>
  );
}

function ConfigScatter({
  path,
  rows,
  metricKey,
  log,
}: {
  path: string;
  rows: ScatterRow[];
  metricKey: string;
  log: boolean;
}) {
  const [frame, width] = useWidth<HTMLDivElement>();
  const points = rows.flatMap((row) => {
    const x = row.config[path];
    const last = row.figures?.[metricKey]?.last;
    return x === undefined || x === null || last === undefined ? [] : [{ x, y: decodeMetricValue(last) }];
  });
  // The points' text stands for the points: the rows are new objects on every render.
  const shownPoints = useStableValue(points, JSON.stringify(points));
  const chart = useMemo(() => {
    const points = shownPoints;
    if (points.every((p) => typeof p.x === 'number')) {
      const xs = points.map((p) => p.x as number);
      const sorted = [...points].sort((a, b) => (a.x as number) - (b.x as number));
      const positive = xs.every((x) => x > 0);
      // A learning rate's values span decades; a log axis spreads them evenly.
      const logX = positive && Math.max(...xs) / Math.min(...xs) >= 100;
      const data: AlignedSeries = [sorted.map((p) => p.x as number), sorted.map((p) => plotted(p.y, log))];
      return { data, scatter: { logX } };
    }
    const categories = [...new Set(points.map((p) => String(p.x)))].sort((a, b) =>
      a.localeCompare(b, undefined, { numeric: true }),
    );
    const sorted = points
      .map((p) => ({ x: categories.indexOf(String(p.x)), y: p.y }))
      .sort((a, b) => a.x - b.x);
    const data: AlignedSeries = [sorted.map((p) => p.x), sorted.map((p) => plotted(p.y, log))];
    return { data, scatter: { categories } };
  }, [shownPoints, log]);

  return (
    <figure className="metric-chart config-scatter" data-path={path}>
      <figcaption>
        {path} → final {metricKey}
      </figcaption>
      <div ref={frame} className="chart-frame">
        {points.length === 0 ? (
          <p className="muted">
            No run with a value of {path} has logged {metricKey}.
          </p>
        ) : width > 0 ? (
          <Chart
            label={`final ${metricKey} by ${path}, one point per run`}
            data={chart.data}
            lines={[{ label: `final ${metricKey}`, color: lineColor(0) }]}
            width={width}
            height={220}
            xLabel={path}
            log={log}
            scatter={chart.scatter}
          />
        ) : (
          <div className="chart chart-loading" aria-busy="true" />
        )}
      </div>
    </figure>
  );
}
