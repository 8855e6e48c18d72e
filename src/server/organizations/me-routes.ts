import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../db/database.ts';
import { Nullable, Uuid, withErrors } from '../http/schemas.ts';
import { Organization } from './organization-routes.ts';
import { getMe, myScopes, setDefaultOrganization } from './organization-service.ts';

const tags = ['me'];

const Me = Type.Object({
  id: Uuid,
  email: Nullable(Type.String()),
  name: Nullable(Type.String()),
  is_admin: Type.Boolean(),
  default_organization_id: Nullable(Uuid),
  auth: Type.Object({
    via: Type.String(),
    key_id: Nullable(Uuid),
    scopes: Type.Array(Type.String()),
    run_id: Nullable(Uuid),
  }),
});

const Scopes = Type.Object({
  personal: Type.Object({ user_id: Uuid }),
  default_organization_id: Nullable(Uuid),
  organizations: Type.Array(Organization),
});

export function meRoutes(db: Db) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();

    app.get(
      '/v1/me',
      {
        schema: {
          tags,
          summary: 'The caller: user, default organization, and the scopes of the token in use',
          response: withErrors({ 200: Me }),
        },
      },
      (req) => getMe(db, req.principal),
    );

    app.patch(
      '/v1/me',
      {
        config: { scope: 'organizations:write' },
        schema: {
          tags,
          summary: "Set the caller's default organization (null: personal)",
          body: Type.Object({ default_organization_id: Nullable(Uuid) }, { additionalProperties: false }),
          response: withErrors({ 200: Me }),
        },
      },
      (req) => setDefaultOrganization(db, req.principal, req.body.default_organization_id),
    );

    app.get(
      '/v1/me/scopes',
      {
        schema: {
          tags,
          summary: "The caller's personal scope and organizations (memberships)",
          response: withErrors({ 200: Scopes }),
        },
      },
      (req) => myScopes(db, req.principal),
    );
  };
}
