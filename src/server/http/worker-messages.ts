// What the primary process of `assay server --workers N` and its HTTP workers tell each other over the
// cluster's IPC channel. Every message carries `assay`, so others on the channel (prom-client's) are left be.
import type { MetricObjectWithValues, MetricValue } from 'prom-client';

export type WorkerMetrics = MetricObjectWithValues<MetricValue<string>>[];

/** A worker to the primary. */
export type FromWorker =
  | { assay: 'listening'; address: string }
  /** A request for /metrics: the primary answers with every process's metrics summed. */
  | { assay: 'metrics'; id: number }
  /** This worker's own metrics, for the primary's collection `id`. */
  | { assay: 'metrics-part'; id: number; metrics: WorkerMetrics }
  /** A failed authentication from `address`, for the other workers' failure limits. */
  | { assay: 'auth-failure'; address: string };

/** The primary to a worker. */
export type FromPrimary =
  | { assay: 'metrics'; id: number; text?: string; error?: string }
  | { assay: 'collect-metrics'; id: number }
  | { assay: 'auth-failure'; address: string };

export type Message = FromWorker | FromPrimary;

/** Whether `message` is ours, of the kind `kind`. */
export function isMessage<K extends Message['assay']>(
  message: unknown,
  kind: K,
): message is Extract<Message, { assay: K }> {
  return typeof message === 'object' && message !== null && (message as { assay?: unknown }).assay === kind;
}

/** Sends to the primary, when this process is a worker with a channel still open. */
export function toPrimary(message: FromWorker): void {
  if (process.connected) process.send?.(message);
}
