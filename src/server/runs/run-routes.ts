import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import {
  FailRunBody,
  NoBody,
  Provisioned,
  Run,
  RunConfig,
  RunHeartbeat,
  RunList,
  RunParams,
  StartRunBody,
  VariationParams,
} from '@assay/contract';
import type { Db } from '../db/database.ts';
import { withErrors } from '../http/schemas.ts';
import { notifyRunChanged } from '../orchestration/orchestrator-calls.ts';
import type { Orchestrator } from '../../orchestrator/orchestrator.ts';
import { provisionRun } from '../orchestration/provision-service.ts';
import type { ConfigPolicy } from '../variations/config-policy.ts';
import type { RunKey, RunRow } from './run-repository.ts';
import * as service from './run-service.ts';

const tags = ['runs'];

const keyOf = (p: { id: string; n: number; r: number }): RunKey => ({ experimentId: p.id, n: p.n, r: p.r });

export function runRoutes(db: Db, orchestrator: Orchestrator | undefined, policy: ConfigPolicy) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    // A moved run answers as a Run; a managed run's workflow hears of the move at once instead of at its next poll.
    const moved = (row: RunRow, log: FastifyInstance['log']) => {
      notifyRunChanged(orchestrator, row.workflow_id, log);
      return service.toApi(row, orchestrator);
    };
    const read = { scope: 'runs:read' as const, workerKeys: true };
    const write = { scope: 'runs:write' as const, workerKeys: true };
    const path = '/experiments/:id/variations/:n/runs';
    const heartbeat = service.heartbeats(db);

    app.post(
      path,
      {
        config: write,
        schema: {
          tags,
          operationId: 'createRun',
          summary: 'Create a run (pending) of a committed experiment',
          params: VariationParams,
          body: NoBody,
          response: withErrors({ 201: Run }, 409),
        },
      },
      async (req, reply) => {
        reply.code(201);
        return service.createRun(db, req.principal, req.params.id, req.params.n, orchestrator);
      },
    );
    app.get(
      path,
      {
        config: read,
        schema: {
          tags,
          operationId: 'listRuns',
          summary: 'List runs of a variation',
          params: VariationParams,
          response: withErrors({ 200: RunList }),
        },
      },
      (req) => service.listRuns(db, req.principal, req.params.id, req.params.n, orchestrator),
    );
    app.get(
      `${path}/:r`,
      {
        config: read,
        schema: {
          tags,
          operationId: 'getRun',
          summary: 'Get a run',
          params: RunParams,
          response: withErrors({ 200: Run }),
        },
      },
      async (req) => service.toApi(await service.getRun(db, req.principal, keyOf(req.params)), orchestrator),
    );
    app.get(
      `${path}/:r/config`,
      {
        config: read,
        schema: {
          tags,
          operationId: 'getRunConfig',
          summary: "The run's variation config; records config_read_at",
          params: RunParams,
          response: withErrors({ 200: RunConfig }),
        },
      },
      (req) => service.readRunConfig(db, req.principal, keyOf(req.params)),
    );
    app.post(
      `${path}/:r/start`,
      {
        config: write,
        schema: {
          tags,
          operationId: 'startRun',
          summary: 'pending → running (after the config was read), with an environment snapshot',
          params: RunParams,
          body: StartRunBody,
          response: withErrors({ 200: Run }, 409),
        },
      },
      async (req) =>
        moved(
          await service.startRun(db, req.principal, keyOf(req.params), req.body?.environment ?? {}),
          req.log,
        ),
    );
    app.post(
      `${path}/:r/heartbeat`,
      {
        config: write,
        schema: {
          tags,
          operationId: 'heartbeatRun',
          summary: 'Heartbeat of a running run; answers whether a cancel was requested',
          params: RunParams,
          body: NoBody,
          response: withErrors({ 200: RunHeartbeat }, 409),
        },
      },
      (req) => heartbeat(req.principal, keyOf(req.params)),
    );
    app.post(
      `${path}/:r/succeed`,
      {
        config: write,
        schema: {
          tags,
          operationId: 'succeedRun',
          summary: 'running → succeeded',
          params: RunParams,
          body: NoBody,
          response: withErrors({ 200: Run }, 409),
        },
      },
      async (req) => moved(await service.succeedRun(db, req.principal, keyOf(req.params)), req.log),
    );
    app.post(
      `${path}/:r/fail`,
      {
        config: write,
        schema: {
          tags,
          operationId: 'failRun',
          summary: 'running → failed with reason abandoned or crash',
          params: RunParams,
          body: FailRunBody,
          response: withErrors({ 200: Run }, 409),
        },
      },
      async (req) =>
        moved(
          await service.failRun(db, req.principal, keyOf(req.params), req.body.reason, req.body.message),
          req.log,
        ),
    );
    app.post(
      `${path}/:r/cancel`,
      {
        config: write,
        schema: {
          tags,
          operationId: 'cancelRun',
          summary: 'Cancel: a pending run fails at once, a running one is asked to stop',
          params: RunParams,
          body: NoBody,
          response: withErrors({ 200: Run }, 409),
        },
      },
      async (req) => moved(await service.cancelRun(db, req.principal, keyOf(req.params)), req.log),
    );
    app.post(
      `${path}/:r/provision`,
      {
        config: write,
        schema: {
          tags,
          operationId: 'provisionRun',
          summary:
            'Make the run managed and start its workflow (repeatable: the same workflow each time); 503 without an orchestrator',
          params: RunParams,
          body: NoBody,
          response: withErrors({ 202: Provisioned }, 409, 503),
        },
      },
      async (req, reply) => {
        const run = service.toApi(
          await provisionRun(db, req.principal, keyOf(req.params), orchestrator, req.log, policy),
          orchestrator,
        );
        reply.code(202);
        return { workflow_id: run.workflow_id!, workflow_url: run.workflow_url, run };
      },
    );
  };
}
