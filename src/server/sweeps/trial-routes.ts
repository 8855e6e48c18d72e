import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import {
  AbandonedRuns,
  CreateTrialBody,
  NoBody,
  Run,
  SweepTrialHistory,
  SweepTrialParams,
} from '@assay/contract';
import type { Db } from '../db/database.ts';
import { withErrors } from '../http/schemas.ts';
import type { RunEvents } from '../runs/run-events.ts';
import { toApi } from '../runs/run-service.ts';
import type { ConfigPolicy } from '../variations/config-policy.ts';
import * as service from './trial-service.ts';

const tags = ['orchestrator'];

/**
 * What the trial sweep workflow's activities call (/orchestrator/sweeps/*), with the orchestrator key only:
 * the trials so far, a trial's variation and run, and the end of a cancelled sweep's unstarted runs.
 */
export function trialRoutes(db: Db, policy: ConfigPolicy, events: RunEvents) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const orchestrate = { scope: 'orchestrate' as const };
    const path = '/orchestrator/sweeps/:sweep_id';

    app.get(
      `${path}/trials`,
      {
        config: orchestrate,
        schema: {
          tags,
          operationId: 'listSweepTrials',
          summary: 'The sweep’s trials so far, as its sampler takes them (state, objective value)',
          params: SweepTrialParams,
          response: withErrors({ 200: SweepTrialHistory }),
        },
      },
      async (req) => ({ items: await service.trialHistory(db, req.params.sweep_id) }),
    );

    app.post(
      `${path}/trials`,
      {
        config: orchestrate,
        schema: {
          tags,
          operationId: 'createSweepTrial',
          summary:
            'The trial’s variation (marked with the sweep and trial) and its managed run; asking again answers the same run',
          params: SweepTrialParams,
          body: CreateTrialBody,
          response: withErrors({ 200: Run }, 409),
        },
      },
      async (req) =>
        toApi(
          await service.createTrial(db, policy, req.params.sweep_id, req.body.trial, req.body.params),
          events,
        ),
    );

    app.post(
      `${path}/abandon-pending`,
      {
        config: orchestrate,
        schema: {
          tags,
          operationId: 'abandonPendingSweepRuns',
          summary: 'Fail the sweep’s runs that never started `abandoned` (a cancelled sweep)',
          params: SweepTrialParams,
          body: NoBody,
          response: withErrors({ 200: AbandonedRuns }),
        },
      },
      async (req) => ({ abandoned: await service.abandonPendingRuns(db, req.params.sweep_id) }),
    );
  };
}
