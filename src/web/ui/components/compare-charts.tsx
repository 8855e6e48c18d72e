import type { RunData } from '@assay/client/browser';
import { decodeMetricValue, type RunMetricFigures } from '@assay/contract';
import { useQueries } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import type { Cell } from '../compare-rows.ts';
import {
  align,
  decodeSeries,
  lineColor,
  plotted,
  pointsFor,
  smooth,
  type AlignedSeries,
  type StepRange,
} from '../metric-series.ts';
import { useClient } from '../session.tsx';
import { Chart, useWidth, type ChartSettings } from './chart-frame.tsx';
import { metricSeriesQuery } from './run-metric-charts.tsx';
import { ErrorState } from './status.tsx';

/** The compare page reads a running run's curves again this often (slower than one run's page: many runs). */
export const COMPARE_INTERVAL_MS = 10_000;

/**
 * One key's curves of several runs in one chart, a legend entry per run. Drawn once every run's series has
 * arrived (a hundred redraws as they trickle in would cost more than the wait); zoom refetches every curve's
 * zoomed steps in full detail.
 */
export function CompareOverlay({
  runs,
  metricKey,
  settings,
}: {
  runs: RunData[];
  metricKey: string;
  settings: ChartSettings;
}) {
  const client = useClient();
  const [frame, width] = useWidth<HTMLDivElement>();
  const [zoom, setZoom] = useState<StepRange | null>(null);
  // With many runs a point per pixel each would be more than the eye can tell apart; half as many suffice.
  const maxPoints = pointsFor(runs.length > 10 ? width / 2 : width);
  const results = useQueries({
    queries: runs.map((run) => ({
      ...metricSeriesQuery(client, run, metricKey, maxPoints, zoom, COMPARE_INTERVAL_MS),
      enabled: width > 0,
    })),
  });
  const loaded = results.filter((r) => r.data).length;
  const failed = results.find((r) => r.isError);
  const version = results.map((r) => r.dataUpdatedAt).join(',');
  const chart = useMemo(() => {
    if (loaded < runs.length) return null;
    const series = results.map((r) => {
      const s = decodeSeries(r.data!.points);
      return settings.smoothing > 0 ? { steps: s.steps, values: smooth(s.values, settings.smoothing) } : s;
    });
    return {
      data: align(series, settings.log),
      lines: runs.map((run, i) => ({ label: `run ${run.n}.${run.r}`, color: lineColor(i) })),
    };
    // `version` changes whenever any result's data does.
  }, [version, loaded, runs, settings]);

  return (
    <figure className="metric-chart compare-overlay" data-key={metricKey}>
      <figcaption>
        {metricKey} by step, {runs.length} run{runs.length === 1 ? '' : 's'}
      </figcaption>
      <div ref={frame} className="chart-frame">
        {failed ? (
          <ErrorState error={failed.error} title={`Could not load a run’s ${metricKey}`} />
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
            <p className="muted">
              Loading curves: {loaded} of {runs.length}
            </p>
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
  const numeric = points.every((p) => typeof p.x === 'number');
  const chart = useMemo(() => {
    if (numeric) {
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
    // The points' text stands for the points: the rows are new objects on every render.
  }, [JSON.stringify(points), log]);

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
