import type { ApiClient, AssetData } from '@assay/client/browser';
import { flatten, type Cell } from './compare-rows.ts';
import { allPages } from './all-pages.ts';

/** The output the compare table reads its figures from, when a run wrote one. */
export const METRICS_ASSET = 'metrics.json';
/** Larger than this is not a small summary of figures; the table skips it rather than download it. */
const MAX_METRICS_BYTES = 1_000_000;

/**
 * The ready `metrics.json` outputs of an experiment's runs, by run id: one listing (the name filter) for the
 * whole comparison rather than a listing per run.
 */
export async function listMetricsOutputs(
  client: ApiClient,
  experimentId: string,
): Promise<Map<string, AssetData>> {
  const outputs = await allPages((cursor) =>
    client.assets.list({
      experimentId,
      kind: 'output',
      state: 'ready',
      name: METRICS_ASSET,
      limit: 200,
      cursor,
    }),
  );
  const byRun = new Map<string, AssetData>();
  // Newest first: a run's newest output of that name wins.
  for (const asset of outputs) if (asset.run_id && !byRun.has(asset.run_id)) byRun.set(asset.run_id, asset);
  return byRun;
}

/**
 * A `metrics.json` output flattened to dotted path → value, fetched through the asset's presigned URL; null
 * when it is too large or not a JSON object.
 */
export async function readMetricsOutput(
  client: ApiClient,
  asset: AssetData,
): Promise<Record<string, Cell> | null> {
  const info = Object.values(asset.components)[0];
  if (!info || info.size > MAX_METRICS_BYTES) return null;
  const download = await client.assets.download(asset.id);
  const component = Object.values(download.components)[0];
  if (!component) return null;
  const res = await fetch(component.url, { method: component.method, headers: component.headers });
  if (!res.ok) throw new Error(`the storage answered ${res.status} for ${METRICS_ASSET}`);
  try {
    const parsed: unknown = await res.json();
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? flatten(parsed) : null;
  } catch {
    return null;
  }
}
