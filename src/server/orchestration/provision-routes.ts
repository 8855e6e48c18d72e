import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { ProvisionBody, Provisioned, RunParams } from '@assay/contract';
import type { Db } from '../db/database.ts';
import { withErrors } from '../http/schemas.ts';
import type { RunEvents } from '../runs/run-events.ts';
import { runKeyOf } from '../runs/run-repository.ts';
import { toApi } from '../runs/run-service.ts';
import type { Orchestrator } from '../../orchestrator/orchestrator.ts';
import type { ConfigPolicy } from '../variations/config-policy.ts';
import { provisionRun } from './provision-service.ts';

/** `POST …/runs/{r}/provision`: a run's path, but the orchestrator's work, so it lives on this side. */
export function provisionRoutes(
  db: Db,
  orchestrator: Orchestrator | undefined,
  events: RunEvents,
  policy: ConfigPolicy,
) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post(
      '/experiments/:id/variations/:n/runs/:r/provision',
      {
        config: { scope: 'runs:write' as const, workerKeys: true },
        schema: {
          tags: ['runs'],
          operationId: 'provisionRun',
          summary:
            'Make the run managed and start its workflow (repeatable: the same workflow each time), with its priority in the compute queue; 503 without an orchestrator',
          params: RunParams,
          body: ProvisionBody,
          response: withErrors({ 202: Provisioned }, 409, 422, 503),
        },
      },
      async (req, reply) => {
        const row = await provisionRun(
          db,
          req.principal,
          runKeyOf(req.params),
          orchestrator,
          req.log,
          policy,
          req.body?.priority,
        );
        const run = toApi(row, events);
        reply.code(202);
        return { workflow_id: run.workflow_id!, workflow_url: run.workflow_url, run };
      },
    );
  };
}
