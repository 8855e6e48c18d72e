import type { ApiKeys } from '../resources/api-keys.ts';
import type { Assets, RunRef } from '../resources/assets.ts';
import type { Experiments } from '../resources/experiments.ts';
import type { Me } from '../resources/me.ts';
import type { Runs } from '../resources/runs.ts';
import type { Search } from '../resources/search.ts';
import type { Variations } from '../resources/variations.ts';
import type { MetricsOptions } from '../handles/metric-buffer.ts';
import type { Transport } from './transport.ts';

/**
 * What handles need from their client: the namespaces, the transport for run moves, and the upload tracker.
 */
export interface ClientCore {
  readonly transport: Transport;
  readonly experiments: Experiments;
  readonly variations: Variations;
  readonly runs: Runs;
  readonly assets: Assets;
  readonly search: Search;
  readonly apiKeys: ApiKeys;
  readonly me: Me;
  /** How run handles batch and retry metric points. */
  readonly metricsOptions: MetricsOptions | undefined;
  /** Resolves when this process's uploads for the run are done; raises UploadError naming any that failed. */
  waitForRunUploads(run: RunRef): Promise<void>;
}
