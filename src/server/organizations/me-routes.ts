import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../db/database.ts';
import { notFound } from '../http/errors.ts';
import { Nullable, Uuid, withErrors } from '../http/schemas.ts';
import { Organization } from './organization-routes.ts';
import { myOrganizations } from './organization-service.ts';

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

    const me = async (principal: Principal) => {
      const [user] = await db.query<{
        id: string;
        email: string | null;
        name: string | null;
        is_admin: boolean;
        default_organization_id: string | null;
      }>('SELECT id, email, name, is_admin, default_organization_id FROM users WHERE id = $1', [
        principal.userId,
      ]);
      return {
        ...user!,
        auth: {
          via: principal.via,
          key_id: principal.keyId,
          scopes: [...principal.scopes].sort(),
          run_id: principal.runId,
        },
      };
    };

    app.get(
      '/v1/me',
      {
        schema: {
          tags,
          summary: 'The caller: user, default organization, and the scopes of the token in use',
          response: withErrors({ 200: Me }),
        },
      },
      (req) => me(req.principal),
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
      async (req) => {
        const orgId = req.body.default_organization_id;
        const rows = await db.query(
          `UPDATE users u SET default_organization_id = $2 WHERE u.id = $1
           AND ($2::uuid IS NULL OR EXISTS (SELECT 1 FROM memberships m WHERE m.organization_id = $2 AND m.user_id = $1)) RETURNING id`,
          [req.principal.userId, orgId],
        );
        if (rows.length === 0) throw notFound('organization');
        return me(req.principal);
      },
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
      async (req) => {
        const [user] = await db.query<{ default_organization_id: string | null }>(
          'SELECT default_organization_id FROM users WHERE id = $1',
          [req.principal.userId],
        );
        return {
          personal: { user_id: req.principal.userId },
          default_organization_id: user?.default_organization_id ?? null,
          organizations: await myOrganizations(db, req.principal),
        };
      },
    );
  };
}
