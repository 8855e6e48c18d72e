import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import {
  AddMemberBody,
  CreateOrganizationBody,
  MemberAddition,
  MemberList,
  Organization,
  OrganizationParams,
} from '@assay/contract';
import type { Db } from '../db/database.ts';
import { withErrors } from '../http/schemas.ts';
import * as service from './organization-service.ts';

const tags = ['organizations'];

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
          operationId: 'createOrganization',
          summary: 'Create an organization; the caller becomes its owner',
          body: CreateOrganizationBody,
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
          operationId: 'getOrganization',
          summary: 'An organization the caller belongs to',
          params: OrganizationParams,
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
          operationId: 'listOrganizationMembers',
          summary: 'Members of an organization',
          params: OrganizationParams,
          response: withErrors({ 200: MemberList }),
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
          operationId: 'addOrganizationMember',
          summary: 'Add an existing user by id or email (owners only)',
          description:
            'Answers 201 with the request echoed, whether or not the id or email belongs to a user (an unknown one adds no one), so that it cannot tell who has an account; the members list shows who is in. A user already a member answers 409.',
          params: OrganizationParams,
          body: AddMemberBody,
          response: withErrors({ 201: MemberAddition }, 409),
        },
      },
      async (req, reply) => {
        reply.code(201);
        return service.addMember(db, req.principal, req.params.id, req.body);
      },
    );
  };
}
