import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../db/database.ts';
import { Nullable, ShortText, Timestamp, Uuid, withErrors } from '../http/schemas.ts';
import * as service from './organization-service.ts';

const tags = ['organizations'];
const Role = Type.Union([Type.Literal('owner'), Type.Literal('member')]);

export const Organization = Type.Object(
  { id: Uuid, slug: Type.String(), name: Type.String(), role: Role, created_at: Timestamp },
  { $id: 'Organization' },
);
const Member = Type.Object({
  organization_id: Uuid,
  user_id: Uuid,
  email: Nullable(Type.String()),
  name: Nullable(Type.String()),
  role: Role,
  created_at: Timestamp,
});
const Slug = Type.String({
  pattern: '^(?!personal$)[a-z0-9][a-z0-9-]{1,62}$',
  description: 'lowercase letters, digits and dashes; "personal" is reserved',
});
const Params = Type.Object({ id: Uuid });

export function organizationRoutes(db: Db) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const write = { scope: 'organizations:write' as const };

    app.post(
      '/organizations',
      {
        config: write,
        schema: {
          tags,
          summary: 'Create an organization; the caller becomes its owner',
          body: Type.Object({ slug: Slug, name: ShortText() }, { additionalProperties: false }),
          response: withErrors({ 201: Organization }, 409),
        },
      },
      async (req, reply) => {
        reply.code(201);
        return service.createOrganization(db, req.principal, req.body);
      },
    );
    app.get(
      '/organizations/:id',
      {
        schema: {
          tags,
          summary: 'An organization the caller belongs to',
          params: Params,
          response: withErrors({ 200: Organization }),
        },
      },
      (req) => service.getOrganization(db, req.principal, req.params.id),
    );
    app.get(
      '/organizations/:id/members',
      {
        schema: {
          tags,
          summary: 'Members of an organization',
          params: Params,
          response: withErrors({ 200: Type.Object({ items: Type.Array(Member) }) }),
        },
      },
      (req) => service.listMembers(db, req.principal, req.params.id),
    );
    app.post(
      '/organizations/:id/members',
      {
        config: write,
        schema: {
          tags,
          summary: 'Add an existing user by id or email (owners only)',
          params: Params,
          body: Type.Union([
            Type.Object({ user_id: Uuid, role: Type.Optional(Role) }, { additionalProperties: false }),
            Type.Object(
              { email: Type.String({ minLength: 3, maxLength: 320 }), role: Type.Optional(Role) },
              { additionalProperties: false },
            ),
          ]),
          response: withErrors({ 201: Member }, 409),
        },
      },
      async (req, reply) => {
        reply.code(201);
        return service.addMember(db, req.principal, req.params.id, req.body);
      },
    );
  };
}
