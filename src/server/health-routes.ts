import type { FastifyInstance } from 'fastify';
import { ping, type Db } from './db/database.ts';

/** Liveness says the process answers; readiness says it can reach its database (load balancers route on it). */
export function healthRoutes(db: Db) {
  return async (app: FastifyInstance) => {
    const config = { public: true };
    app.get('/healthz', { config, schema: { tags: ['operations'], summary: 'Liveness' } }, async () => ({
      status: 'ok',
    }));
    app.get(
      '/readyz',
      { config, schema: { tags: ['operations'], summary: 'Readiness: the database answers' } },
      async (req, reply) => {
        try {
          await withTimeout(ping(db), 2000);
          return { status: 'ready' };
        } catch (err) {
          req.log.warn({ err }, 'not ready');
          return reply
            .code(503)
            .send({ error: { code: 'database_unavailable', message: 'the database is unavailable' } });
        }
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
