import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { ServiceConfig } from '../config.ts';
import type { Db } from '../db/database.ts';
import { CreatedApiKey } from '../api-keys/api-key-routes.ts';
import { Nullable, Timestamp, Uuid, withErrors } from '../http/schemas.ts';
import { createUserWithKey } from './user-accounts.ts';

const User = Type.Object({
  id: Uuid,
  email: Type.String(),
  name: Nullable(Type.String()),
  is_admin: Type.Boolean(),
  created_at: Timestamp,
});

/** What an operator needs where there is no identity provider: creating users, each with a first key. */
export function adminRoutes(db: Db, config: ServiceConfig) {
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
  };
}
