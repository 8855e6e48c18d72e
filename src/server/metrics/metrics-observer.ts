import type { RunRow } from '../runs/run-repository.ts';

/**
 * Who is told of a run's stored metrics: a higher feature (a sweep's early stopping) listens through this port,
 * so metrics imports nothing above it; `app.ts` passes the listener in.
 */
export interface MetricsObserver {
  /**
   * A batch of the run's points was stored (the run as it was read before the write). Awaited before the batch
   * is answered, so it must be cheap for a run it does not concern; whatever it throws is logged, never answered.
   */
  stored(run: RunRow, points: readonly { key: string }[], log: ObserverLog): Promise<void>;
}

export interface ObserverLog {
  debug(o: object, m: string): void;
  warn(o: object, m: string): void;
}

export const noMetricsObserver: MetricsObserver = { stored: async () => {} };
