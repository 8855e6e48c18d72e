import { ErrorResponse, ProbeStatus } from '@assay/contract';
import type { FastifyInstance } from 'fastify';
import { ping, type Db } from './db/database.ts';
import { StorageUnavailable, type ObjectStorage } from './storage/object-storage.ts';

/**
 * Liveness says the process answers; readiness says it can reach its database and its object store (load
 * balancers and compose's healthcheck route on it).
 */
export function healthRoutes(db: Db, storage: ObjectStorage) {
  return async (app: FastifyInstance) => {
    const config = { public: true };
    app.get(
      '/healthz',
      {
        config,
        schema: {
          tags: ['operations'],
          operationId: 'checkLiveness',
          summary: 'Liveness',
          security: [],
          response: { 200: ProbeStatus },
        },
      },
      async () => ({
        status: 'ok',
      }),
    );
    app.get(
      '/readyz',
      {
        config,
        schema: {
          tags: ['operations'],
          operationId: 'checkReadiness',
          summary: 'Readiness: the database and the object store answer',
          security: [],
          response: { 200: ProbeStatus, 503: ErrorResponse },
        },
      },
      async (req, reply) => {
        try {
          await withTimeout(ping(db), 2000);
        } catch (err) {
          req.log.warn({ err }, 'not ready');
          return reply
            .code(503)
            .send({ error: { code: 'database_unavailable', message: 'the database is unavailable' } });
        }
        try {
          await storage.check({ timeoutMs: 2000 });
        } catch (err) {
          req.log.warn({ err }, 'not ready');
          // The message names the setting, never the cause's details.
          const message = err instanceof StorageUnavailable ? err.message : 'the object store is unavailable';
          return reply.code(503).send({ error: { code: 'storage_unavailable', message } });
        }
        return { status: 'ready' };
      },
    );
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
