// /metrics across the HTTP workers of `assay server --workers N`: a worker asked for /metrics asks the
// primary, which collects every worker's registry (and its own) and sums them with prom-client's
// AggregatorRegistry (counters and histograms add up; gauges say how they combine).
import type { Cluster, Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { isMessage, toPrimary, type FromPrimary, type WorkerMetrics } from './worker-messages.ts';

/** How long the primary waits for a worker's part; one that is stuck or restarting is left out. */
const PART_TIMEOUT_MS = 2_000;
/** How long a worker waits for the primary's sum before /metrics fails. */
const ANSWER_TIMEOUT_MS = 5_000;

/**
 * In a worker: answers the primary's collections with `registry`'s metrics, and answers the sum of all
 * workers' metrics, as the primary makes it.
 */
export function workerMetricsSource(registry: Registry): () => Promise<string> {
  let next = 0;
  const waiting = new Map<number, (answer: Extract<FromPrimary, { assay: 'metrics' }>) => void>();
  process.on('message', (message) => {
    if (isMessage(message, 'collect-metrics'))
      void registry
        .getMetricsAsJSON()
        .then((metrics) =>
          toPrimary({ assay: 'metrics-part', id: message.id, metrics: metrics as WorkerMetrics }),
        );
    else if (isMessage(message, 'metrics')) waiting.get(message.id)?.(message);
  });
  return () =>
    new Promise((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error('the primary process did not answer with the metrics of all workers'));
      }, ANSWER_TIMEOUT_MS);
      waiting.set(id, (answer) => {
        clearTimeout(timer);
        waiting.delete(id);
        if (answer.text !== undefined) resolve(answer.text);
        else reject(new Error(answer.error ?? 'no metrics'));
      });
      toPrimary({ assay: 'metrics', id });
    });
}

/** In the primary: sums the metrics of every live worker and its own `registry` for any worker that asks. */
export function serveClusterMetrics(cluster: Cluster, registry: Registry): void {
  let next = 0;
  const collections = new Map<number, { parts: WorkerMetrics[]; left: Set<number>; done(): void }>();

  async function collect(): Promise<string> {
    const id = next++;
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w?.isConnected());
    const parts: WorkerMetrics[] = [(await registry.getMetricsAsJSON()) as WorkerMetrics];
    await new Promise<void>((resolve) => {
      const timer = setTimeout(finish, PART_TIMEOUT_MS);
      function finish() {
        clearTimeout(timer);
        collections.delete(id);
        resolve();
      }
      const left = new Set(workers.map((w) => w.id));
      collections.set(id, { parts, left, done: finish });
      for (const w of workers) w.send({ assay: 'collect-metrics', id } satisfies FromPrimary);
      if (left.size === 0) finish();
    });
    return AggregatorRegistry.aggregate(parts).metrics();
  }

  cluster.on('message', (worker, message) => {
    if (isMessage(message, 'metrics-part')) {
      const collection = collections.get(message.id);
      if (!collection?.left.delete(worker.id)) return;
      collection.parts.push(message.metrics);
      if (collection.left.size === 0) collection.done();
    } else if (isMessage(message, 'metrics')) {
      const answer = (text?: string, error?: string) => {
        if (worker.isConnected())
          worker.send({ assay: 'metrics', id: message.id, text, error } satisfies FromPrimary);
      };
      collect().then(
        (text) => answer(text),
        (err: unknown) => answer(undefined, String(err)),
      );
    }
  });
}
