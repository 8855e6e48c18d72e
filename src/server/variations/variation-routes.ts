import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import {
  CreateVariationBody,
  EditVariationBody,
  ExperimentParams,
  Variation,
  VariationList,
  VariationParams,
} from '@assay/contract';
import type { Db } from '../db/database.ts';
import { withErrors } from '../http/schemas.ts';
import type { ConfigPolicy } from './config-policy.ts';
import * as service from './variation-service.ts';

const tags = ['variations'];

/** `policy`: what a config may hold (its expanded size, launch blocks the server's compute would run). */
export function variationRoutes(db: Db, policy: ConfigPolicy) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const read = { scope: 'experiments:read' as const };
    const write = { scope: 'experiments:write' as const };

    app.post(
      '/experiments/:id/variations',
      {
        config: write,
        schema: {
          tags,
          operationId: 'createVariation',
          summary: 'Create a variation from config_yaml (draft experiments only)',
          params: ExperimentParams,
          body: CreateVariationBody,
          response: withErrors({ 201: Variation }, 409),
        },
      },
      async (req, reply) => {
        reply.code(201);
        return service.createVariation(db, req.principal, req.params.id, req.body, policy);
      },
    );

    app.get(
      '/experiments/:id/variations',
      {
        config: read,
        schema: {
          tags,
          operationId: 'listVariations',
          summary: 'List variations',
          params: ExperimentParams,
          response: withErrors({ 200: VariationList }),
        },
      },
      (req) => service.listVariations(db, req.principal, req.params.id),
    );

    app.get(
      '/experiments/:id/variations/:n',
      {
        config: read,
        schema: {
          tags,
          operationId: 'getVariation',
          summary: 'Get a variation',
          params: VariationParams,
          response: withErrors({ 200: Variation }),
        },
      },
      (req) => service.getVariation(db, req.principal, req.params.id, req.params.n),
    );

    app.patch(
      '/experiments/:id/variations/:n',
      {
        config: write,
        schema: {
          tags,
          operationId: 'updateVariation',
          summary: 'Edit a variation (draft experiments only)',
          params: VariationParams,
          body: EditVariationBody,
          response: withErrors({ 200: Variation }, 409),
        },
      },
      (req) => service.editVariation(db, req.principal, req.params.id, req.params.n, req.body, policy),
    );
  };
}
