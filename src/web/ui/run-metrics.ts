import type { ApiClient, RunData } from '@assay/client/browser';
import { flatten, type Cell } from './compare-rows.ts';

/** The output the compare table reads its figures from, when a run wrote one. */
export const METRICS_ASSET = 'metrics.json';
/** Larger than this is not a small summary of figures; the table skips it rather than download it. */
const MAX_METRICS_BYTES = 1_000_000;

/**
 * A run's `metrics.json` output flattened to dotted path → value, fetched through the asset's presigned URL;
 * null when the run has no such ready output, it is too large, or it is not a JSON object.
 */
export async function fetchRunMetrics(client: ApiClient, run: RunData): Promise<Record<string, Cell> | null> {
  const outputs = await client.assets.list({
    run: { experimentId: run.experiment_id, n: run.n, r: run.r },
    kind: 'output',
    state: 'ready',
  });
  const asset = outputs.items.find((a) => a.name === METRICS_ASSET);
  if (!asset) return null;
  const download = await client.assets.download(asset.id);
  const component = Object.values(download.components)[0];
  if (!component || component.size > MAX_METRICS_BYTES) return null;
  const res = await fetch(component.url, { method: component.method, headers: component.headers });
  if (!res.ok) throw new Error(`the storage answered ${res.status} for ${METRICS_ASSET}`);
  try {
    const parsed: unknown = await res.json();
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? flatten(parsed) : null;
  } catch {
    return null;
  }
}
