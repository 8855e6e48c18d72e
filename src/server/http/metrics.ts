import cluster from 'node:cluster';
import type { FastifyContextConfig, FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import type { Scope } from '@assay/contract';
import { workerMetricsSource } from './cluster-metrics.ts';

/**
 * Prometheus metrics at /metrics: process metrics and a request histogram labelled by route pattern (never
 * the raw URL, which would carry ids and explode the label space). One registry per app, so tests can build
 * many. With `scope`, reading them needs a bearer token holding it; without, they are open to whoever reaches
 * the port. In an HTTP worker of `assay server --workers N`, /metrics answers the sum of every worker's (and
 * the primary's), whichever worker a scrape reaches, and counts the requests each worker served.
 */
export function installMetrics(app: FastifyInstance, scope: Scope | undefined): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const duration = new Histogram({
    name: 'assay_http_request_duration_seconds',
    help: 'HTTP request duration by route pattern, method and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  const served = cluster.isWorker
    ? new Counter({
        name: 'assay_http_worker_requests_total',
        help: 'Requests each HTTP worker process served (assay server --workers N), by worker number',
        labelNames: ['worker'] as const,
        registers: [registry],
      }).labels({ worker: String(cluster.worker!.id) })
    : undefined;
  app.addHook('onResponse', async (request, reply) => {
    duration.observe(
      {
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    );
    served?.inc();
  });
  const read = cluster.isWorker ? workerMetricsSource(registry) : () => registry.metrics();
  const config: FastifyContextConfig = scope ? { scope } : { public: true };
  app.get('/metrics', { config, schema: { hide: true } }, async (_request, reply) => {
    void reply.header('content-type', registry.contentType);
    return read();
  });
  return registry;
}
