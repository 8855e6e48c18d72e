import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import {
  ComputeSlot,
  ExchangeToken,
  FailManagedRunBody,
  ManagedRun,
  ManagedRunParams,
  NoBody,
  OrchestratorDeployment,
  ReleasedSlot,
  RevokedWorkerKeys,
  Run,
  RunAssetList,
  RunInstance,
} from '@assay/contract';
import type { Authenticator } from '../auth/authenticator.ts';
import type { ServiceConfig } from '../config.ts';
import type { Db } from '../db/database.ts';
import { withErrors } from '../http/schemas.ts';
import type { RunEvents } from '../runs/run-events.ts';
import { acquireSlot, releaseSlot } from '../runs/compute-queue.ts';
import { toApi } from '../runs/run-service.ts';
import type { Orchestrator } from '../../orchestrator/orchestrator.ts';
import { requireOrchestrator } from './orchestrator-calls.ts';
import { ensureInstallationId } from './deployment-repository.ts';
import * as service from './orchestrator-service.ts';
import * as exchanges from './worker-key-exchange-service.ts';

const tags = ['orchestrator'];

/**
 * What the managed-run and sweep workflows' activities call, keyed by run id, with an orchestrator key (scope
 * `orchestrate`, which only the orchestrator user holds). Runs that are not managed answer 404.
 */
export function orchestratorRoutes(
  db: Db,
  config: ServiceConfig,
  authenticator: Authenticator,
  orchestrator: Orchestrator | undefined,
  events: RunEvents,
) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const orchestrate = { scope: 'orchestrate' as const };
    const path = '/orchestrator/runs/:run_id';
    const api = (row: Parameters<typeof toApi>[0]) => toApi(row, events);

    app.get(
      '/orchestrator/deployment',
      {
        config: orchestrate,
        schema: {
          tags,
          operationId: 'getOrchestratorDeployment',
          summary: 'This deployment’s installation id, Temporal namespace and task queue, for `assay worker`',
          response: withErrors({ 200: OrchestratorDeployment }, 503),
        },
      },
      async () => {
        const { namespace, taskQueue } = await requireOrchestrator(orchestrator).deployment();
        return { installation_id: await ensureInstallationId(db), namespace, task_queue: taskQueue };
      },
    );

    app.get(
      path,
      {
        config: orchestrate,
        schema: {
          tags,
          operationId: 'getManagedRun',
          summary: 'A managed run, its variation’s launch config, and whether an admin provisioned it',
          params: ManagedRunParams,
          response: withErrors({ 200: ManagedRun }),
        },
      },
      async (req) => {
        const run = await service.getManagedRun(db, req.params.run_id);
        return {
          run: api(run),
          launch_config: run.launch_config,
          provisioned_by_admin: run.provisioned_by_admin,
          launch_author: run.launch_author,
        };
      },
    );

    app.post(
      `${path}/exchange-token`,
      {
        config: orchestrate,
        schema: {
          tags,
          operationId: 'mintExchangeToken',
          summary:
            'Mint a one-time exchange token for the run’s instance (its runner trades it for the worker key at POST /worker-keys/exchange); returned once, revokes nothing',
          params: ManagedRunParams,
          body: NoBody,
          response: withErrors({ 201: ExchangeToken }, 409),
        },
      },
      async (req, reply) => {
        const minted = await exchanges.mintExchangeToken(
          db,
          req.principal,
          req.params.run_id,
          config.exchangeTokenTtlMs,
        );
        reply.code(201);
        return { id: minted.id, token: minted.token, expires_at: minted.expires_at.toISOString() };
      },
    );

    app.delete(
      `${path}/worker-keys`,
      {
        config: orchestrate,
        schema: {
          tags,
          operationId: 'revokeWorkerKeys',
          summary: 'Revoke every worker key of the run (idempotent)',
          params: ManagedRunParams,
          response: withErrors({ 200: RevokedWorkerKeys }),
        },
      },
      async (req) => {
        const revoked = await service.revokeWorkerKeys(db, req.params.run_id);
        for (const id of revoked) authenticator.forgetKey(id);
        return { revoked: revoked.length };
      },
    );

    app.put(
      `${path}/instance`,
      {
        config: orchestrate,
        schema: {
          tags,
          operationId: 'recordInstance',
          summary: 'Record the run’s instance and its provider state',
          params: ManagedRunParams,
          body: RunInstance,
          response: withErrors({ 200: Run }),
        },
      },
      async (req) => api(await service.recordInstance(db, req.params.run_id, req.body)),
    );

    app.post(
      `${path}/fail`,
      {
        config: orchestrate,
        schema: {
          tags,
          operationId: 'failManagedRun',
          summary:
            'pending | running → failed with the orchestrator’s reason; an ended run is answered unchanged',
          params: ManagedRunParams,
          body: FailManagedRunBody,
          response: withErrors({ 200: Run }),
        },
      },
      async (req) =>
        api(await service.failManagedRun(db, req.params.run_id, req.body.reason, req.body.message)),
    );

    app.post(
      `${path}/cancel`,
      {
        config: orchestrate,
        schema: {
          tags,
          operationId: 'cancelManagedRun',
          summary: 'Cancel: pending → failed abandoned, running → cancel requested, ended → unchanged',
          params: ManagedRunParams,
          body: NoBody,
          response: withErrors({ 200: Run }),
        },
      },
      async (req) => api(await service.cancelManagedRun(db, req.params.run_id)),
    );

    app.post(
      `${path}/recovery`,
      {
        config: orchestrate,
        schema: {
          tags,
          operationId: 'createRecoveryRun',
          summary: 'The run that recovers this one: 201 when created, 200 when it already exists',
          params: ManagedRunParams,
          body: NoBody,
          response: withErrors({ 200: Run, 201: Run }, 409),
        },
      },
      async (req, reply) => {
        const { run, created } = await service.createRecoveryRun(db, req.params.run_id);
        reply.code(created ? 201 : 200);
        return api(run);
      },
    );

    app.post(
      `${path}/retry`,
      {
        config: orchestrate,
        schema: {
          tags,
          operationId: 'createRetryRun',
          summary:
            'The run that retries this failed sweep run (same variation and seed): 201 when created, 200 when it already exists',
          params: ManagedRunParams,
          body: NoBody,
          response: withErrors({ 200: Run, 201: Run }, 409),
        },
      },
      async (req, reply) => {
        const { run, created } = await service.createRetryRun(db, req.params.run_id);
        reply.code(created ? 201 : 200);
        return api(run);
      },
    );

    app.post(
      `${path}/slot`,
      {
        config: orchestrate,
        schema: {
          tags,
          operationId: 'acquireComputeSlot',
          summary:
            'Ask for the run’s slot (and GPUs) in the `local` compute queue: granted with its GPU ids, or its place while it waits; repeatable',
          params: ManagedRunParams,
          body: NoBody,
          response: withErrors({ 200: ComputeSlot }, 422),
        },
      },
      async (req) => {
        const answer = await acquireSlot(db, req.params.run_id, config.localCapacity);
        return {
          state: answer.state,
          queued: answer.state === 'granted' ? answer.queued : answer.state === 'waiting',
          gpu_ids: answer.state === 'granted' ? answer.gpuIds : null,
          queue: answer.state === 'waiting' ? answer.place : null,
        };
      },
    );

    app.delete(
      `${path}/slot`,
      {
        config: orchestrate,
        schema: {
          tags,
          operationId: 'releaseComputeSlot',
          summary:
            'The run leaves the compute queue (its saga concluded) and the next waiting runs are granted (idempotent)',
          params: ManagedRunParams,
          response: withErrors({ 200: ReleasedSlot }),
        },
      },
      async (req) => ({ released: await releaseSlot(db, req.params.run_id, config.localCapacity) }),
    );

    app.get(
      `${path}/assets`,
      {
        config: orchestrate,
        schema: {
          tags,
          operationId: 'listRunAssets',
          summary: 'The run’s assets, without components',
          params: ManagedRunParams,
          response: withErrors({ 200: RunAssetList }),
        },
      },
      (req) => service.listRunAssets(db, req.params.run_id),
    );
  };
}
