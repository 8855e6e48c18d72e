import type { RunData } from '@assay/client/browser';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { curlPost } from '../format.ts';
import { CHART_EVERY_KEY_UP_TO, runMetricKeysQuery } from '../run-metric-queries.ts';
import { useClient } from '../session.tsx';
import { ChartControls, type ChartSettings } from './chart-frame.tsx';
import { KeyCharts } from './key-charts.tsx';
import { MetricKeyPicker } from './metric-key-picker.tsx';
import { Empty, ErrorState, Loading } from './status.tsx';

/**
 * A chart per metric key of a run, with one log-scale toggle and smoothing for all, live while it runs. Past
 * CHART_EVERY_KEY_UP_TO keys, a picker pages through the keys and charts only the ones picked.
 */
export function RunMetricCharts({ run }: { run: RunData }) {
  // One key more than get a chart each: whether the run has more is in the same small read.
  const list = useQuery(runMetricKeysQuery(useClient(), run, { limit: CHART_EVERY_KEY_UP_TO + 1 }));
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
  const controls = <ChartControls settings={settings} onChange={setSettings} />;
  if (list.data.items.length > CHART_EVERY_KEY_UP_TO)
    return <MetricKeyPicker run={run} firstKeys={list.data.items} settings={settings} controls={controls} />;
  return (
    <>
      {controls}
      <KeyCharts run={run} summaries={list.data.items} settings={settings} />
    </>
  );
}
