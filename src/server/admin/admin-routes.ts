import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { ApiKey, ApiKeyList, ApiKeyParams, CreatedUser, CreateUserBody } from '@assay/contract';
import type { ServiceConfig } from '../config.ts';
import type { Db } from '../db/database.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { withErrors } from '../http/schemas.ts';
import { listOrchestratorKeys, revokeOrchestratorKey } from './orchestrator-key-admin.ts';
import { createUserWithKey } from './user-accounts.ts';

/**
 * What an operator needs where there is no identity provider (creating users, each with a first key), and the
 * orchestrator user's keys, which belong to no one who could list or revoke them otherwise.
 */
export function adminRoutes(db: Db, config: ServiceConfig, authenticator: Authenticator) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post(
      '/admin/users',
      {
        config: { scope: 'admin' },
        schema: {
          tags: ['admin'],
          operationId: 'createUser',
          summary: 'Create a user and mint their first key (admin scope)',
          body: CreateUserBody,
          response: withErrors({ 201: CreatedUser }, 409),
        },
      },
      async (req, reply) => {
        reply.code(201);
        return createUserWithKey(db, {
          email: req.body.email.toLowerCase(),
          name: req.body.name,
          isAdmin: req.body.admin ?? false,
          ttlDays: config.apiKeyTtlDays,
        });
      },
    );
    app.get(
      '/admin/orchestrator-keys',
      {
        config: { scope: 'admin' },
        schema: {
          tags: ['admin'],
          operationId: 'listOrchestratorKeys',
          summary: "The orchestrator user's keys, revoked ones included (admin scope)",
          response: withErrors({ 200: ApiKeyList }),
        },
      },
      () => listOrchestratorKeys(db),
    );
    app.delete(
      '/admin/orchestrator-keys/:id',
      {
        config: { scope: 'admin' },
        schema: {
          tags: ['admin'],
          operationId: 'revokeOrchestratorKey',
          summary: 'Revoke an orchestrator key and the worker keys it minted (admin scope)',
          params: ApiKeyParams,
          response: withErrors({ 200: ApiKey }),
        },
      },
      async (req) => {
        const { key, revokedIds } = await revokeOrchestratorKey(db, req.params.id);
        for (const id of revokedIds) authenticator.forgetKey(id);
        return key;
      },
    );
  };
}
