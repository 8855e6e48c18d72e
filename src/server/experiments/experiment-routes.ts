import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/database.ts';
import type { ObjectStorage } from '../storage/object-storage.ts';
import { withErrors } from '../http/schemas.ts';
import * as s from '@assay/contract';
import { deleteExperiment } from './experiment-delete.ts';
import * as service from './experiment-service.ts';
import { walkLineage } from './lineage.ts';

const tags = ['experiments'];

export function experimentRoutes(db: Db, storage: ObjectStorage) {
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
          summary: 'Edit a draft experiment; its tags in any state',
          description:
            'name, description and hypothesis only while draft (409 `experiment_not_draft`); a body of `tags` ' +
            'alone replaces them in any state.',
          params: s.ExperimentParams,
          body: s.EditExperimentBody,
          response: withErrors({ 200: s.Experiment }, 409),
        },
      },
      (req) => service.editExperiment(db, req.principal, req.params.id, req.body),
    );

    app.delete(
      '/experiments/:id',
      {
        config: write,
        schema: {
          tags,
          operationId: 'deleteExperiment',
          summary: 'Delete a draft with its variations (and anything under them), 204',
          description:
            'Its assets go too, rows and stored bytes. Any other state is 409 `experiment_not_draft`; a draft ' +
            'that another experiment names as a parent is 409 `experiment_has_children`.',
          params: s.ExperimentParams,
          response: withErrors({ 204: s.NoContent }, 409),
        },
      },
      async (req, reply) => {
        await deleteExperiment(db, storage, req.principal, req.params.id, req.log);
        return reply.code(204).send();
      },
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
