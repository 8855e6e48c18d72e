import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/database.ts';
import { withErrors } from '../http/schemas.ts';
import * as s from '@assay/contract';
import * as service from './experiment-service.ts';
import { walkLineage } from './lineage.ts';

const tags = ['experiments'];

export function experimentRoutes(db: Db) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const read = { scope: 'experiments:read' as const };
    const write = { scope: 'experiments:write' as const };

    app.post(
      '/experiments',
      {
        config: write,
        schema: {
          tags,
          operationId: 'createExperiment',
          summary: 'Create an experiment (draft)',
          body: s.CreateExperimentBody,
          response: withErrors({ 201: s.Experiment }),
        },
      },
      async (req, reply) => {
        reply.code(201);
        return service.createExperiment(db, req.principal, req.body);
      },
    );

    app.get(
      '/experiments',
      {
        config: read,
        schema: {
          tags,
          operationId: 'listExperiments',
          summary: 'List experiments of one scope, newest first',
          querystring: s.ListExperimentsQuery,
          response: withErrors({ 200: s.ExperimentList }),
        },
      },
      (req) => service.listExperiments(db, req.principal, req.query),
    );

    app.get(
      '/experiments/:id',
      {
        config: read,
        schema: {
          tags,
          operationId: 'getExperiment',
          summary: 'Experiment detail',
          params: s.ExperimentParams,
          response: withErrors({ 200: s.ExperimentDetail }),
        },
      },
      (req) => service.getExperimentDetail(db, req.principal, req.params.id),
    );

    app.patch(
      '/experiments/:id',
      {
        config: write,
        schema: {
          tags,
          operationId: 'updateExperiment',
          summary: 'Edit a draft experiment',
          params: s.ExperimentParams,
          body: s.EditExperimentBody,
          response: withErrors({ 200: s.Experiment }, 409),
        },
      },
      (req) => service.editExperiment(db, req.principal, req.params.id, req.body),
    );

    for (const move of ['commit', 'conclude'] as const) {
      app.post(
        `/experiments/:id/${move}`,
        {
          config: write,
          schema: {
            tags,
            operationId: `${move}Experiment`,
            summary: `${move[0]!.toUpperCase()}${move.slice(1)} the experiment`,
            params: s.ExperimentParams,
            body: s.NoBody,
            response: withErrors({ 200: s.Experiment }, 409),
          },
        },
        (req) => service.moveExperiment(db, req.principal, req.params.id, move),
      );
    }

    app.post(
      '/experiments/:id/retract',
      {
        config: write,
        schema: {
          tags,
          operationId: 'retractExperiment',
          summary: 'Retract a committed or concluded experiment',
          params: s.ExperimentParams,
          body: s.RetractBody,
          response: withErrors({ 200: s.Experiment }, 409),
        },
      },
      (req) => service.moveExperiment(db, req.principal, req.params.id, 'retract', req.body.reason),
    );

    app.get(
      '/experiments/:id/lineage',
      {
        config: read,
        schema: {
          tags,
          operationId: 'getExperimentLineage',
          summary: 'Walk ancestors and descendants',
          params: s.ExperimentParams,
          querystring: s.LineageQuery,
          response: withErrors({ 200: s.LineageResponse }),
        },
      },
      (req) =>
        walkLineage(db, req.principal, req.params.id, req.query.direction ?? 'both', req.query.depth ?? 10),
    );
  };
}
