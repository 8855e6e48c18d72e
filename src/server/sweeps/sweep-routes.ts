import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Ec2Config } from '../../compute/ec2-config.ts';
import type { Db } from '../db/database.ts';
import { Nullable, Timestamp, Uuid, withErrors } from '../http/schemas.ts';
import type { Orchestrator } from '../../orchestrator/orchestrator.ts';
import * as service from './sweep-service.ts';

const tags = ['sweeps'];

const CreateSweep = Type.Object(
  {
    base_yaml: Type.String({
      maxLength: 1_000_000,
      description: 'the base variation config, YAML as POST …/variations takes it',
    }),
    grid: Type.Optional(
      Type.Record(Type.String(), Type.Array(Type.Unknown()), {
        description: 'dotted path → values; every combination, in key order',
      }),
    ),
    list: Type.Optional(
      Type.Array(Type.Record(Type.String(), Type.Unknown()), {
        description: 'one variation per entry of dotted path → value',
      }),
    ),
    concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 64, default: 4 })),
    name_prefix: Type.Optional(Type.String({ minLength: 1, maxLength: 100, default: 'sweep' })),
  },
  { additionalProperties: false },
);

const SweepProgress = Type.Object({
  total: Type.Integer(),
  pending: Type.Integer(),
  running: Type.Integer(),
  succeeded: Type.Integer(),
  failed: Type.Integer(),
  done: Type.Boolean(),
});

const Sweep = Type.Object(
  {
    id: Uuid,
    experiment_id: Uuid,
    workflow_id: Type.String(),
    workflow_url: Nullable(Type.String()),
    concurrency: Type.Integer(),
    created_at: Timestamp,
    runs: Type.Array(
      Type.Object({
        n: Type.Integer(),
        r: Type.Integer(),
        variation_name: Type.String(),
        workflow_id: Type.String(),
        state: Type.String(),
      }),
    ),
    progress: Nullable(SweepProgress),
  },
  { $id: 'Sweep' },
);

const ExperimentParams = Type.Object({ id: Uuid });
const SweepParams = Type.Object({ id: Uuid, sweep_id: Uuid });
const NoBody = Type.Optional(Type.Object({}, { additionalProperties: false }));

export function sweepRoutes(db: Db, orchestrator: Orchestrator | undefined, ec2: Ec2Config | undefined) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const path = '/experiments/:id/sweeps';

    app.post(
      path,
      {
        config: { scope: ['experiments:write', 'runs:write'] },
        schema: {
          tags,
          summary:
            'A grid or list of configs → variations, commit, one managed run each, and the sweep workflow (draft experiments only)',
          params: ExperimentParams,
          body: CreateSweep,
          response: withErrors({ 202: Sweep }, 409, 503),
        },
      },
      async (req, reply) => {
        const sweep = await service.createSweep(
          { db, ec2, orchestrator, log: req.log },
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
          summary: 'A sweep, its runs and the workflow’s progress',
          params: SweepParams,
          response: withErrors({ 200: Sweep }),
        },
      },
      (req) =>
        service.getSweep(
          { db, ec2, orchestrator, log: req.log },
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
          summary: 'Cancel the sweep workflow, which cancels its runs',
          params: SweepParams,
          body: NoBody,
          response: withErrors({ 202: Sweep }, 503),
        },
      },
      async (req, reply) => {
        const sweep = await service.cancelSweep(
          { db, ec2, orchestrator, log: req.log },
          req.principal,
          req.params.id,
          req.params.sweep_id,
        );
        reply.code(202);
        return sweep;
      },
    );
  };
}
