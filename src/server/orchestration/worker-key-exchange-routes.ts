import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { ExchangedWorkerKey, NoBody } from '@assay/contract';
import type { Authenticator } from '../auth/authenticator.ts';
import type { ServiceConfig } from '../config.ts';
import type { Db } from '../db/database.ts';
import { withErrors } from '../http/schemas.ts';
import { exchangeWorkerKey } from './worker-key-exchange-service.ts';

/**
 * The runner of a managed instance trades the exchange token it was started with for its run's worker key.
 */
export function workerKeyExchangeRoutes(db: Db, config: ServiceConfig, authenticator: Authenticator) {
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
            'The token works once and only for minutes: a second exchange, an expired token, or one whose run has ended answers 401 and counts toward the address’s failed-authentication limit (`ASSAY_AUTH_FAILURE_LIMIT`, then 429). Any other credential answers 403.',
          body: NoBody,
          response: withErrors({ 201: ExchangedWorkerKey }, 409),
        },
      },
      async (req, reply) => {
        // A refused token is a failed authentication: guessing tokens trips the limit like guessing keys.
        const minted = await authenticator.guarded(req.ip, () =>
          exchangeWorkerKey(db, req.exchangeToken, config.apiKeyTtlDays),
        );
        reply.code(201);
        return minted;
      },
    );
  };
}
