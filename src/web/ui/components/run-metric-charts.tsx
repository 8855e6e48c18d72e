import type { RunData } from '@assay/client/browser';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { chartOrder, isSystemKey, SYSTEM_PREFIX } from '../default-key.ts';
import { curlPost } from '../format.ts';
import { CHART_EVERY_KEY_UP_TO, runMetricKeysQuery } from '../run-metric-queries.ts';
import { useClient } from '../session.tsx';
import { ChartControls, type ChartSettings } from './chart-frame.tsx';
import { KeyCharts } from './key-charts.tsx';
import { MetricKeyPicker } from './metric-key-picker.tsx';
import { Empty, ErrorState, Loading } from './status.tsx';

/** System keys a run's page charts at most (`assay run` logs five, and three more per GPU). */
const MAX_SYSTEM_KEYS = 64;

/**
 * The run's metrics: a chart per training key, the sweep's objective first, with one log-scale toggle and
 * smoothing for all, live while it runs; past CHART_EVERY_KEY_UP_TO keys, a picker pages through the keys and
 * charts only the ones picked. The `system/…` keys `assay run` samples (CPU, memory, GPUs) have their own
 * section below.
 */
export function RunMetricCharts({ run, objective }: { run: RunData; objective: string | null }) {
  const client = useClient();
  // The system keys are read apart: however many there are, they never push the training keys into the picker.
  const system = useQuery(
    runMetricKeysQuery(client, run, { limit: MAX_SYSTEM_KEYS, contains: SYSTEM_PREFIX }),
  );
  // One key more than get a chart each, past the system keys: whether the run has more is in the same read.
  const list = useQuery(
    runMetricKeysQuery(client, run, { limit: CHART_EVERY_KEY_UP_TO + 1 + (system.data?.items.length ?? 0) }),
  );
  const [settings, setSettings] = useState<ChartSettings>({ log: false, smoothing: 0 });
  const controls = <ChartControls settings={settings} onChange={setSettings} />;
  const systemKeys = (system.data?.items ?? []).filter((s) => isSystemKey(s.key));

  let training;
  if (run.state === 'pending') training = <p className="muted">The run has not started: no metrics yet.</p>;
  else if (list.isPending || system.isPending) training = <Loading what="the metrics" />;
  else if (list.isError) training = <ErrorState error={list.error} title="Could not load the metrics" />;
  else {
    const keys = chartOrder(
      list.data.items.filter((s) => !isSystemKey(s.key)),
      (s) => s.key,
      objective,
    );
    if (keys.length === 0)
      training = (
        <Empty
          command={curlPost(`/experiments/${run.experiment_id}/variations/${run.n}/runs/${run.r}/metrics`, {
            metrics: [{ key: 'loss', step: 0, value: 0.5 }],
          })}
        >
          No metrics logged{run.state === 'running' ? ' yet' : ''}.
        </Empty>
      );
    else if (keys.length > CHART_EVERY_KEY_UP_TO || list.data.next_cursor)
      training = <MetricKeyPicker run={run} firstKeys={keys} settings={settings} controls={controls} />;
    else
      training = (
        <>
          {controls}
          <KeyCharts run={run} summaries={keys} settings={settings} />
        </>
      );
  }
  return (
    <>
      <section aria-labelledby="metrics-title">
        <h2 id="metrics-title">Metrics</h2>
        {training}
      </section>
      {systemKeys.length > 0 && (
        <section className="system-metrics" aria-labelledby="system-title">
          <h2 id="system-title">System</h2>
          <p className="hint">
            What <code>assay run</code> sampled of the machine: CPU, memory and each GPU.
          </p>
          <KeyCharts run={run} summaries={systemKeys} settings={settings} />
        </section>
      )}
      {system.isError && <ErrorState error={system.error} title="Could not load the system metrics" />}
    </>
  );
}
