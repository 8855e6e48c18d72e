import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { EditMeBody, Me, MyScopes } from '@assay/contract';
import type { Db } from '../db/database.ts';
import { withErrors } from '../http/schemas.ts';
import { getMe, myScopes, setDefaultOrganization } from './organization-service.ts';

const tags = ['me'];

export function meRoutes(db: Db) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();

    app.get(
      '/v1/me',
      {
        schema: {
          tags,
          operationId: 'getMe',
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
          operationId: 'setDefaultOrganization',
          summary: "Set the caller's default organization (null: personal)",
          body: EditMeBody,
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
          operationId: 'getMyScopes',
          summary: "The caller's personal scope and organizations (memberships)",
          response: withErrors({ 200: MyScopes }),
        },
      },
      (req) => myScopes(db, req.principal),
    );
  };
}
