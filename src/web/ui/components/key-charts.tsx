import type { RunData } from '@assay/client/browser';
import type { MetricSummary } from '@assay/contract';
import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import {
  align,
  decodeSeries,
  formatMetric,
  lineColor,
  pointsFor,
  smooth,
  type StepRange,
} from '../metric-series.ts';
import { metricSeriesQuery } from '../run-metric-queries.ts';
import { useClient } from '../session.tsx';
import { Chart, useWidth, type ChartSettings } from './chart-frame.tsx';
import { ErrorState } from './status.tsx';

/** The charts of these keys, each with its readout. */
export function KeyCharts({
  run,
  summaries,
  settings,
}: {
  run: RunData;
  summaries: MetricSummary[];
  settings: ChartSettings;
}) {
  return (
    <div className="charts">
      {summaries.map((summary) => (
        <KeyChart key={summary.key} run={run} summary={summary} settings={settings} />
      ))}
    </div>
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
