import type { ApiClient, RunData } from '@assay/client/browser';
import { isTerminalRunState } from '@assay/contract/enums';
import { keepPreviousData } from '@tanstack/react-query';
import type { StepRange } from './metric-series.ts';
import { queryKeys } from './query-keys.ts';

// The run page's reads of a run's metrics, through the client, as TanStack Query options.

/**
 * Up to this many keys, each gets its chart; past it the reader picks the keys to chart (each chart polls).
 */
export const CHART_EVERY_KEY_UP_TO = 20;

/** How often a running run's metrics are read again (as its state is: see run-polling.ts). */
export const LIVE_INTERVAL_MS = 2_000;

/**
 * A page of the run's keys as the server lists them, read again every 2 s while the run is running. The run's
 * end is in the query key, so the figures are read once more when it ends.
 */
export function runMetricKeysQuery(
  client: ApiClient,
  run: RunData,
  page: { limit: number; cursor?: string; contains?: string },
  interval = LIVE_INTERVAL_MS,
) {
  return {
    queryKey: queryKeys.runMetricKeys(run.id, page, isTerminalRunState(run.state)),
    queryFn: () => client.runs.metricKeys(run.experiment_id, run.n, run.r, page),
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
      client.runs.metricSeries(run.experiment_id, run.n, run.r, key, {
        maxPoints,
        minStep: zoom?.min,
        maxStep: zoom?.max,
      }),
    refetchInterval: run.state === 'running' ? interval : (false as const),
    placeholderData: keepPreviousData,
  };
}
