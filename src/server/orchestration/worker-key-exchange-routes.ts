import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { ExchangedWorkerKey, NoBody } from '@assay/contract';
import type { ServiceConfig } from '../config.ts';
import type { Db } from '../db/database.ts';
import { withErrors } from '../http/schemas.ts';
import { exchangeWorkerKey } from './worker-key-exchange-service.ts';

/** The runner of a managed instance trades the exchange token it was started with for its run's worker key. */
export function workerKeyExchangeRoutes(db: Db, config: ServiceConfig) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post(
      '/worker-keys/exchange',
      {
        config: { exchangeToken: true },
        schema: {
          tags: ['api-keys'],
          operationId: 'exchangeWorkerKey',
          summary:
            'Trade a managed instance’s one-time exchange token (the bearer, `sk_exchange_…`) for its run’s worker key; the full key is returned once',
          description:
            'The token works once and only for minutes: a second exchange, an expired token, or one whose run has ended answers 401. Any other credential answers 403.',
          body: NoBody,
          response: withErrors({ 201: ExchangedWorkerKey }, 409),
        },
      },
      async (req, reply) => {
        const minted = await exchangeWorkerKey(db, req.exchangeToken, config.apiKeyTtlDays);
        reply.code(201);
        return minted;
      },
    );
  };
}
