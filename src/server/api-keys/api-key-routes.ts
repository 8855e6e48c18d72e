import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Authenticator } from '../auth/authenticator.ts';
import { SCOPES } from '../auth/scopes.ts';
import type { ServiceConfig } from '../config.ts';
import type { Db } from '../db/database.ts';
import { Nullable, NullableTimestamp, Timestamp, Uuid, withErrors } from '../http/schemas.ts';
import * as service from './api-key-service.ts';

const tags = ['api-keys'];
const Scope = Type.Union(SCOPES.map((s) => Type.Literal(s)));

export const ApiKey = Type.Object(
  {
    id: Uuid,
    kind: Type.Union([Type.Literal('user'), Type.Literal('agent'), Type.Literal('worker')]),
    description: Type.String(),
    scopes: Type.Array(Type.String()),
    run_id: Nullable(Uuid),
    created_at: Timestamp,
    expires_at: NullableTimestamp,
    last_used_at: NullableTimestamp,
    revoked_at: NullableTimestamp,
  },
  { $id: 'ApiKey' },
);

export const CreatedApiKey = Type.Object({
  ...ApiKey.properties,
  key: Type.String({ description: 'the full key; shown only in this answer' }),
});

const MintBody = Type.Object(
  {
    description: Type.String({ maxLength: 500 }),
    scopes: Type.Array(Scope, { minItems: 1, maxItems: SCOPES.length, uniqueItems: true }),
    kind: Type.Optional(Type.Union([Type.Literal('user'), Type.Literal('agent'), Type.Literal('worker')])),
    expires_in_days: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 3650, description: "never past the minting key's own expiry" }),
    ),
    run: Type.Optional(
      Type.Object(
        {
          experiment_id: Uuid,
          n: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }),
          r: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

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
          summary:
            'Mint a key (needs an access token or the api_keys:write scope); the full key is returned once',
          body: MintBody,
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
          summary: "The caller's keys (never their secrets)",
          response: withErrors({ 200: Type.Object({ items: Type.Array(ApiKey) }) }),
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
          summary: 'Revoke a key at once, and every key minted from it',
          params: Type.Object({ id: Uuid }),
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
