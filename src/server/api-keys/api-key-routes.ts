import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { ApiKey, ApiKeyList, ApiKeyParams, CreateApiKeyBody, CreatedApiKey } from '@assay/contract';
import type { Authenticator } from '../auth/authenticator.ts';
import type { ServiceConfig } from '../config.ts';
import type { Db } from '../db/database.ts';
import { withErrors } from '../http/schemas.ts';
import * as service from './api-key-service.ts';

const tags = ['api-keys'];

export function apiKeyRoutes(db: Db, config: ServiceConfig, authenticator: Authenticator) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const mint = { scope: 'api_keys:write' as const };

    app.post(
      '/api-keys',
      {
        config: mint,
        schema: {
          tags,
          operationId: 'createApiKey',
          summary:
            'Mint a key (needs an access token or the api_keys:write scope); the full key is returned once',
          body: CreateApiKeyBody,
          response: withErrors({ 201: CreatedApiKey }),
        },
      },
      async (req, reply) => {
        reply.code(201);
        return service.mintKey(db, req.principal, req.body, config.apiKeyTtlDays);
      },
    );
    app.get(
      '/api-keys',
      {
        config: mint,
        schema: {
          tags,
          operationId: 'listApiKeys',
          summary: "The caller's keys (never their secrets)",
          response: withErrors({ 200: ApiKeyList }),
        },
      },
      (req) => service.listKeys(db, req.principal),
    );
    app.delete(
      '/api-keys/:id',
      {
        config: mint,
        schema: {
          tags,
          operationId: 'revokeApiKey',
          summary: 'Revoke a key at once, and every key minted from it',
          description:
            'An access token, the user’s first key (or any key minted with an access token) and admin keys revoke any of the user’s keys; any other key only itself and the keys minted from it (403 `key_outside_lineage`). Another user’s key answers 404.',
          params: ApiKeyParams,
          response: withErrors({ 200: ApiKey }),
        },
      },
      async (req) => {
        const { key, revokedIds } = await service.revoke(db, req.principal, req.params.id);
        for (const id of revokedIds) authenticator.forgetKey(id);
        return key;
      },
    );
  };
}
