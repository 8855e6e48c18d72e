import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { ServiceConfig } from '../config.ts';
import type { Db } from '../db/database.ts';
import { ApiKey, CreatedApiKey } from '../api-keys/api-key-routes.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { Nullable, Timestamp, Uuid, withErrors } from '../http/schemas.ts';
import { listOrchestratorKeys, revokeOrchestratorKey } from './orchestrator-key-admin.ts';
import { createUserWithKey } from './user-accounts.ts';

const User = Type.Object({
  id: Uuid,
  email: Type.String(),
  name: Nullable(Type.String()),
  is_admin: Type.Boolean(),
  created_at: Timestamp,
});

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
          summary: 'Create a user and mint their first key (admin scope)',
          body: Type.Object(
            {
              email: Type.String({ format: 'email', maxLength: 320 }),
              name: Type.Optional(Type.String({ maxLength: 200 })),
              admin: Type.Optional(Type.Boolean()),
            },
            { additionalProperties: false },
          ),
          response: withErrors({ 201: Type.Object({ user: User, api_key: CreatedApiKey }) }, 409),
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
          summary: "The orchestrator user's keys, revoked ones included (admin scope)",
          response: withErrors({ 200: Type.Object({ items: Type.Array(ApiKey) }) }),
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
          summary: 'Revoke an orchestrator key and the worker keys it minted (admin scope)',
          params: Type.Object({ id: Uuid }),
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
