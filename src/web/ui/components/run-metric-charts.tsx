import type { ApiClient, RunData } from '@assay/client/browser';
import { isTerminalRunState, type MetricSummary } from '@assay/contract';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { curlPost } from '../format.ts';
import { fetchMetricSeries, fetchRunMetricList, type RunAddress } from '../metrics-api.ts';
import {
  align,
  decodeSeries,
  formatMetric,
  lineColor,
  pointsFor,
  smooth,
  type StepRange,
} from '../metric-series.ts';
import { queryKeys } from '../query-keys.ts';
import { useClient } from '../session.tsx';
import { Chart, ChartControls, useWidth, type ChartSettings } from './chart-frame.tsx';
import { Empty, ErrorState, Loading } from './status.tsx';

/** How often a running run's metrics are read again (as its state is: see run-polling.ts). */
const LIVE_INTERVAL_MS = 2_000;

const addressOf = (run: RunData): RunAddress => ({ experimentId: run.experiment_id, n: run.n, r: run.r });

/**
 * The run's keys as the server lists them, read again every 2 s while the run is running. The run's end is in
 * the query key, so the figures are read once more when it ends.
 */
export function runMetricListQuery(client: ApiClient, run: RunData, interval = LIVE_INTERVAL_MS) {
  return {
    queryKey: queryKeys.runMetricList(run.id, isTerminalRunState(run.state)),
    queryFn: () => fetchRunMetricList(client, addressOf(run)),
    enabled: run.state !== 'pending',
    refetchInterval: run.state === 'running' ? interval : (false as const),
  };
}

/**
 * One key's series of a run over a step range (all of it without `zoom`), about `maxPoints` points; read
 * again every `interval` ms while the run is running, and once more when it ends.
 */
export function metricSeriesQuery(
  client: ApiClient,
  run: RunData,
  key: string,
  maxPoints: number,
  zoom: StepRange | null,
  interval = LIVE_INTERVAL_MS,
) {
  return {
    queryKey: queryKeys.runMetricSeries(run.id, key, maxPoints, zoom, isTerminalRunState(run.state)),
    queryFn: () =>
      fetchMetricSeries(client, addressOf(run), key, { maxPoints, minStep: zoom?.min, maxStep: zoom?.max }),
    refetchInterval: run.state === 'running' ? interval : (false as const),
    placeholderData: keepPreviousData,
  };
}

/** A chart per metric key of a run, with one log-scale toggle and smoothing for all, live while it runs. */
export function RunMetricCharts({ run }: { run: RunData }) {
  const list = useQuery(runMetricListQuery(useClient(), run));
  const [settings, setSettings] = useState<ChartSettings>({ log: false, smoothing: 0 });
  if (run.state === 'pending') return <p className="muted">The run has not started: no metrics yet.</p>;
  if (list.isPending) return <Loading what="the metrics" />;
  if (list.isError) return <ErrorState error={list.error} title="Could not load the metrics" />;
  if (list.data.items.length === 0)
    return (
      <Empty
        command={curlPost(`/experiments/${run.experiment_id}/variations/${run.n}/runs/${run.r}/metrics`, {
          metrics: [{ key: 'loss', step: 0, value: 0.5 }],
        })}
      >
        No metrics logged{run.state === 'running' ? ' yet' : ''}.
      </Empty>
    );
  return (
    <>
      <ChartControls settings={settings} onChange={setSettings} />
      <div className="charts">
        {list.data.items.map((summary) => (
          <KeyChart key={summary.key} run={run} summary={summary} settings={settings} />
        ))}
      </div>
    </>
  );
}

function KeyChart({
  run,
  summary,
  settings,
}: {
  run: RunData;
  summary: MetricSummary;
  settings: ChartSettings;
}) {
  const client = useClient();
  const [frame, width] = useWidth<HTMLDivElement>();
  const [zoom, setZoom] = useState<StepRange | null>(null);
  // About a point per pixel: the server keeps each bucket's extremes, so spikes survive the downsampling.
  const maxPoints = pointsFor(width);
  const series = useQuery({
    ...metricSeriesQuery(client, run, summary.key, maxPoints, zoom),
    enabled: width > 0,
  });
  const decoded = useMemo(() => series.data && decodeSeries(series.data.points), [series.data]);
  const chart = useMemo(() => {
    if (!decoded) return null;
    const color = lineColor(0);
    if (settings.smoothing === 0) {
      return { data: align([decoded], settings.log), lines: [{ label: summary.key, color }] };
    }
    const smoothed = { steps: decoded.steps, values: smooth(decoded.values, settings.smoothing) };
    return {
      data: align([decoded, smoothed], settings.log),
      lines: [
        { label: summary.key, color, faint: true, width: 1 },
        { label: `${summary.key} (smoothed)`, color, width: 2 },
      ],
    };
  }, [decoded, settings, summary.key]);

  const shown = series.data;
  return (
    <figure className="metric-chart" data-key={summary.key}>
      <figcaption>{summary.key}</figcaption>
      <p className="metric-readout">
        last <strong>{formatMetric(summary.last.value)}</strong> at step {summary.last.step} · min{' '}
        {formatMetric(summary.min)} · max {formatMetric(summary.max)} · {summary.count.toLocaleString()}{' '}
        points
      </p>
      <div ref={frame} className="chart-frame">
        {chart && width > 0 ? (
          <Chart
            label={`${summary.key} by step`}
            data={chart.data}
            lines={chart.lines}
            width={width}
            xLabel="step"
            log={settings.log}
            zoom={zoom}
            onZoom={setZoom}
          />
        ) : series.isError ? (
          <ErrorState error={series.error} title={`Could not load ${summary.key}`} />
        ) : (
          <div className="chart chart-loading" aria-busy="true" />
        )}
      </div>
      <p className="hint chart-range">
        {shown &&
          `${shown.points.length.toLocaleString()} of ${shown.count.toLocaleString()} points${shown.downsampled ? ' (downsampled on the server)' : ''}`}
        {zoom && (
          <>
            {` · steps ${zoom.min}–${zoom.max} `}
            <button type="button" onClick={() => setZoom(null)}>
              Zoom out
            </button>
          </>
        )}
      </p>
    </figure>
  );
}
