import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Authenticator } from '../auth/authenticator.ts';
import type { ServiceConfig } from '../config.ts';
import type { Db } from '../db/database.ts';
import { JsonObject, Timestamp, Uuid, withErrors } from '../http/schemas.ts';
import { Run } from '../runs/run-routes.ts';
import { toApi } from '../runs/run-service.ts';
import { ORCHESTRATOR_FAILURE_REASONS } from '../runs/run-states.ts';
import type { Orchestrator } from '../../orchestrator/orchestrator.ts';
import * as service from './orchestrator-service.ts';
import * as exchanges from './worker-key-exchange-service.ts';

const tags = ['orchestrator'];
const Params = Type.Object({ run_id: Uuid });
const NoBody = Type.Optional(Type.Object({}, { additionalProperties: false }));
const Text = Type.String({ minLength: 1, maxLength: 500 });
const Instance = Type.Object(
  { provider: Text, instance_id: Text, state: Text },
  { additionalProperties: false },
);
const Fail = Type.Object(
  {
    reason: Type.Union(ORCHESTRATOR_FAILURE_REASONS.map((r) => Type.Literal(r))),
    message: Type.Optional(Type.String({ maxLength: 10_000 })),
  },
  { additionalProperties: false },
);
const AssetSummary = Type.Object({
  id: Uuid,
  kind: Type.String(),
  name: Type.String(),
  state: Type.String(),
});

/**
 * What the managed-run and sweep workflows' activities call, keyed by run id, with an orchestrator key (scope
 * `orchestrate`, which only the orchestrator user holds). Runs that are not managed answer 404.
 */
export function orchestratorRoutes(
  db: Db,
  config: ServiceConfig,
  authenticator: Authenticator,
  orchestrator: Orchestrator | undefined,
) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const orchestrate = { scope: 'orchestrate' as const };
    const path = '/orchestrator/runs/:run_id';
    const api = (row: Parameters<typeof toApi>[0]) => toApi(row, orchestrator);

    app.get(
      path,
      {
        config: orchestrate,
        schema: {
          tags,
          summary: 'A managed run, its variation’s launch config, and whether an admin provisioned it',
          params: Params,
          response: withErrors({
            200: Type.Object({ run: Run, launch_config: JsonObject, provisioned_by_admin: Type.Boolean() }),
          }),
        },
      },
      async (req) => {
        const run = await service.getManagedRun(db, req.params.run_id);
        return {
          run: api(run),
          launch_config: run.launch_config,
          provisioned_by_admin: run.provisioned_by_admin,
        };
      },
    );

    app.post(
      `${path}/exchange-token`,
      {
        config: orchestrate,
        schema: {
          tags,
          summary:
            'Mint a one-time exchange token for the run’s instance (its runner trades it for the worker key at POST /worker-keys/exchange); returned once, revokes nothing',
          params: Params,
          body: NoBody,
          response: withErrors(
            { 201: Type.Object({ id: Uuid, token: Type.String(), expires_at: Timestamp }) },
            409,
          ),
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
          summary: 'Revoke every worker key of the run (idempotent)',
          params: Params,
          response: withErrors({ 200: Type.Object({ revoked: Type.Integer() }) }),
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
          summary: 'Record the run’s instance and its provider state',
          params: Params,
          body: Instance,
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
          summary:
            'pending | running → failed with the orchestrator’s reason; an ended run is answered unchanged',
          params: Params,
          body: Fail,
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
          summary: 'Cancel: pending → failed abandoned, running → cancel requested, ended → unchanged',
          params: Params,
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
          summary: 'The run that recovers this one: 201 when created, 200 when it already exists',
          params: Params,
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

    app.get(
      `${path}/assets`,
      {
        config: orchestrate,
        schema: {
          tags,
          summary: 'The run’s assets, without components',
          params: Params,
          response: withErrors({ 200: Type.Object({ items: Type.Array(AssetSummary) }) }),
        },
      },
      (req) => service.listRunAssets(db, req.params.run_id),
    );
  };
}
