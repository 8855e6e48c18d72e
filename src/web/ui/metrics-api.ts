import type { ApiClient } from '@assay/client/browser';
import type {
  ExperimentMetricKeys,
  ExperimentMetricSeries,
  ExperimentMetrics,
  MetricSeries,
  RunMetricList,
} from '@assay/contract';

// The UI's reads of run metrics, on the client's transport (bearer auth, timeout, typed errors), so no wire
// shape or error mapping is copied here: the shapes are the contract's.

export interface RunAddress {
  experimentId: string;
  n: number;
  r: number;
}

/** Every interpolated value percent-encoded: a metric key may hold `/`, `:` and spaces. */
const runPath = ({ experimentId, n, r }: RunAddress) =>
  `/experiments/${encodeURIComponent(experimentId)}/variations/${n}/runs/${r}/metrics`;

const queryString = (params: Record<string, string | number | undefined>) => {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
};

/** `GET …/runs/{r}/metrics`: the run's keys, each with its last point, extremes and count. */
export function fetchRunMetricList(client: ApiClient, run: RunAddress): Promise<RunMetricList> {
  return client.transport.get(runPath(run));
}

export interface SeriesRange {
  maxPoints: number;
  minStep?: number;
  maxStep?: number;
}

/** `GET …/runs/{r}/metrics/{key}`: one key's series over a step range, downsampled on the server. */
export function fetchMetricSeries(
  client: ApiClient,
  run: RunAddress,
  key: string,
  range: SeriesRange,
): Promise<MetricSeries> {
  return client.transport.get(
    `${runPath(run)}/${encodeURIComponent(key)}${queryString({
      max_points: range.maxPoints,
      min_step: range.minStep,
      max_step: range.maxStep,
    })}`,
  );
}

/** `GET /experiments/{id}/metrics?keys=`: each run's last value and extremes of the keys. */
export function fetchExperimentMetrics(
  client: ApiClient,
  experimentId: string,
  keys: string[],
): Promise<ExperimentMetrics> {
  return client.transport.get(
    `/experiments/${encodeURIComponent(experimentId)}/metrics${queryString({ keys: keys.join(',') })}`,
  );
}

/** Every page of a cursor-paged read, concatenated. */
export async function allPages<T>(
  read: (cursor: string | undefined) => Promise<{ items: T[]; next_cursor: string | null }>,
) {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await read(cursor);
    items.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return items;
}

/** `GET /experiments/{id}/metric-keys`, every page: the keys any run of the experiment logged. */
export function fetchExperimentMetricKeys(
  client: ApiClient,
  experimentId: string,
): Promise<ExperimentMetricKeys['items']> {
  return allPages((cursor) =>
    client.transport.get<ExperimentMetricKeys>(
      `/experiments/${encodeURIComponent(experimentId)}/metric-keys${queryString({ cursor })}`,
    ),
  );
}

/** `GET /experiments/{id}/metrics/{key}`, every page: one key's series of each run that logged it, downsampled. */
export function fetchExperimentSeries(
  client: ApiClient,
  experimentId: string,
  key: string,
  range: SeriesRange,
): Promise<ExperimentMetricSeries['items']> {
  return allPages((cursor) =>
    client.transport.get<ExperimentMetricSeries>(
      `/experiments/${encodeURIComponent(experimentId)}/metrics/${encodeURIComponent(key)}${queryString({
        max_points: range.maxPoints,
        min_step: range.minStep,
        max_step: range.maxStep,
        cursor,
      })}`,
    ),
  );
}
