import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import {
  CreateSweepBody,
  ExperimentParams,
  NoBody,
  Sweep,
  SweepList,
  SweepListQuery,
  SweepParams,
} from '@assay/contract';
import type { Db } from '../db/database.ts';
import { withErrors } from '../http/schemas.ts';
import type { Orchestrator } from '../../orchestrator/orchestrator.ts';
import type { ConfigPolicy } from '../variations/config-policy.ts';
import { tagLegacySweep } from './sweep-points.ts';
import * as service from './sweep-service.ts';

const tags = ['sweeps'];

export function sweepRoutes(db: Db, orchestrator: Orchestrator | undefined, policy: ConfigPolicy) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const path = '/experiments/:id/sweeps';

    app.post(
      path,
      {
        config: { scope: ['experiments:write', 'runs:write'] },
        schema: {
          tags,
          operationId: 'createSweep',
          summary:
            'A grid or list of configs → variations, commit, one managed run each, and the sweep workflow (draft experiments only)',
          params: ExperimentParams,
          body: CreateSweepBody,
          response: withErrors({ 202: Sweep }, 409, 503),
        },
        // Requests written before `strategy` existed keep working: the tag is added before validation.
        preValidation: async (req) => {
          req.body = tagLegacySweep(req.body) as typeof req.body;
        },
      },
      async (req, reply) => {
        const sweep = await service.createSweep(
          { db, policy, orchestrator, log: req.log },
          req.principal,
          req.params.id,
          req.body,
        );
        reply.code(202);
        return sweep;
      },
    );

    app.get(
      `${path}/:sweep_id`,
      {
        config: { scope: 'experiments:read' },
        schema: {
          tags,
          operationId: 'getSweep',
          summary: 'A sweep, its runs and the workflow’s progress',
          params: SweepParams,
          response: withErrors({ 200: Sweep }),
        },
      },
      (req) =>
        service.getSweep(
          { db, policy, orchestrator, log: req.log },
          req.principal,
          req.params.id,
          req.params.sweep_id,
        ),
    );

    app.post(
      `${path}/:sweep_id/cancel`,
      {
        config: { scope: 'runs:write' },
        schema: {
          tags,
          operationId: 'cancelSweep',
          summary: 'Cancel the sweep workflow, which cancels its runs',
          params: SweepParams,
          body: NoBody,
          response: withErrors({ 202: Sweep }, 503),
        },
      },
      async (req, reply) => {
        const sweep = await service.cancelSweep(
          { db, policy, orchestrator, log: req.log },
          req.principal,
          req.params.id,
          req.params.sweep_id,
        );
        reply.code(202);
        return sweep;
      },
    );

    app.get(
      path,
      {
        config: { scope: 'experiments:read' },
        schema: {
          tags,
          operationId: 'listSweeps',
          summary: 'The experiment’s sweeps, newest first, each with its progress and best objective value',
          params: ExperimentParams,
          querystring: SweepListQuery,
          response: withErrors({ 200: SweepList }),
        },
      },
      (req) => service.listSweeps({ db, orchestrator }, req.principal, req.params.id, req.query),
    );
  };
}
