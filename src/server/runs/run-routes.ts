import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import {
  CreateRunBody,
  ExperimentParams,
  FailRunBody,
  ListExperimentRunsQuery,
  ListRunsQuery,
  NoBody,
  Run,
  RunConfig,
  RunControl,
  RunControlQuery,
  RunHeartbeat,
  RunList,
  RunPage,
  RunParams,
  StartRunBody,
  UpdateRunBody,
  VariationParams,
} from '@assay/contract';
import type { Db } from '../db/database.ts';
import { withErrors } from '../http/schemas.ts';
import { awaitRunControl } from './run-control.ts';
import type { RunControlWaits } from './run-control-waits.ts';
import type { RunEvents } from './run-events.ts';
import { runKeyOf as keyOf, type RunRow } from './run-repository.ts';
import * as service from './run-service.ts';

const tags = ['runs'];

/** The runs' own routes; provisioning needs the orchestrator: `orchestration/provision-routes.ts`. */
export function runRoutes(db: Db, events: RunEvents, waits: RunControlWaits) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    // A moved run answers as a Run; a managed run's workflow hears of the move at once instead of at its
    // next poll.
    const moved = (row: RunRow, log: FastifyInstance['log']) => {
      events.changed(row.workflow_id, log);
      return service.toApi(row, events);
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
          description:
            'Optionally named, tagged and annotated; `resume_from: {n?, r}` names a run of the same experiment ' +
            '(n defaults to this variation) whose checkpoints the new run resumes from (GET …/checkpoint); ' +
            'without it the run starts from scratch. A run the caller cannot see is 422 `resume_from_not_found`.',
          params: VariationParams,
          body: CreateRunBody,
          response: withErrors({ 201: Run }, 409),
        },
      },
      async (req, reply) => {
        reply.code(201);
        return service.createRun(db, req.principal, req.params.id, req.params.n, req.body, events);
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
          description:
            'In run order; `state` keeps one state, `tag=a,b` the runs holding every tag named; archived runs ' +
            'are left out unless `archived=true`.',
          params: VariationParams,
          querystring: ListRunsQuery,
          response: withErrors({ 200: RunList }),
        },
      },
      (req) => service.listRuns(db, req.principal, req.params.id, req.params.n, req.query, events),
    );
    app.get(
      '/experiments/:id/runs',
      {
        config: { scope: 'runs:read' as const },
        schema: {
          tags,
          operationId: 'listExperimentRuns',
          summary: 'List the runs of every variation of an experiment, newest first',
          description:
            'Filtered as a variation\'s list is (`state`, `tag`, `archived`), `limit` a page (follow `next_cursor`).',
          params: ExperimentParams,
          querystring: ListExperimentRunsQuery,
          response: withErrors({ 200: RunPage }),
        },
      },
      (req) => service.listExperimentRuns(db, req.principal, req.params.id, req.query, events),
    );
    app.patch(
      `${path}/:r`,
      {
        // People's keys only: a worker key answers 403 worker_key_restricted.
        config: { scope: 'runs:write' as const },
        schema: {
          tags,
          operationId: 'updateRun',
          summary: 'Relabel a run (name, tags, notes) or archive it',
          description:
            '`name: null` clears the name, `tags` replaces them, `archived: true` hides the run from lists and ' +
            'comparisons (kept, `archived_at` set), `archived: false` brings it back.',
          params: RunParams,
          body: UpdateRunBody,
          response: withErrors({ 200: Run }),
        },
      },
      (req) => service.updateRun(db, req.principal, keyOf(req.params), req.body, events),
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
      (req) => service.getRunAnswer(db, req.principal, keyOf(req.params), events),
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
    app.get(
      `${path}/:r/control`,
      {
        config: read,
        schema: {
          tags,
          operationId: 'runControl',
          summary:
            "The runner's long-poll: answers when the run is asked to stop or no longer running, else after wait_s",
          params: RunParams,
          querystring: RunControlQuery,
          response: withErrors({ 200: RunControl }),
        },
      },
      (req, reply) => {
        // The caller gave up (the runner ended, a proxy timed out): its place among the waiting is freed.
        const gone = new AbortController();
        reply.raw.once('close', () => gone.abort());
        const waitS = req.query.wait_s ?? 25;
        return awaitRunControl(db, waits, req.principal, keyOf(req.params), waitS, gone.signal);
      },
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
  };
}
