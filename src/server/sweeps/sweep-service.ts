import type { CreateSweepBody, SweepSpec } from '@assay/contract';
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../db/database.ts';
import { applyMove } from '../experiments/experiment-repository.ts';
import { getVisibleExperiment } from '../experiments/experiment-service.ts';
import { decodeCursor, encodeCursor } from '../http/cursor.ts';
import { AppError, badRequest, conflict, notFound } from '../http/errors.ts';
import { callOrchestrator, requireOrchestrator } from '../orchestration/orchestrator-calls.ts';
import { sweepWorkflowId, type ManagedRunRef, type Orchestrator } from '../../orchestrator/orchestrator.ts';
import { insertManagedRun } from '../orchestration/managed-run-repository.ts';
import { refuseWorkerKey } from '../runs/run-service.ts';
import type { ConfigPolicy } from '../variations/config-policy.ts';
import { parseConfigYaml, splitConfigYaml } from '../variations/config-yaml.ts';
import { checkLaunchPolicy, checkLaunchRunnable } from '../variations/launch-policy.ts';
import { insertVariation } from '../variations/variation-repository.ts';
import { runLabels } from '../orchestration/provision-service.ts';
import { pointName, pointYaml, sweepPoints, type EnumeratedSweep } from './sweep-points.ts';
import * as repo from './sweep-repository.ts';
import { listSweeps as listSweepRows } from './sweep-read-repository.ts';
import { sweepAnswer, sweepSummaries } from './sweep-view.ts';

// Generated YAML is held in memory and stored once per point: bound the whole, not only each point.
const MAX_TOTAL_YAML = 20_000_000;

interface Deps {
  db: Db;
  /** What each point's config may hold: its expanded size, a launch block the server's compute runs. */
  policy: ConfigPolicy;
  orchestrator: Orchestrator | undefined;
  log: FastifyBaseLogger;
}

/**
 * The variations a sweep makes, each config checked exactly as POST …/variations checks one; their launch
 * blocks are the sweep creator's, so the creator must be allowed to run them.
 */
function variationsOf(input: EnumeratedSweep, prefix: string, principal: Principal, policy: ConfigPolicy) {
  const base = parseConfigYaml(input.base_yaml, policy.maxConfigBytes, 'base_yaml');
  const points = sweepPoints(input);
  if (input.base_yaml.length * points.length > MAX_TOTAL_YAML) {
    throw new AppError(
      400,
      'sweep_too_large',
      `the sweep's configs would total over ${MAX_TOTAL_YAML / 1e6} MB of YAML; use fewer points or a smaller base`,
    );
  }
  return points.map((point, i) => {
    const configYaml = pointYaml(base, point);
    const name = pointName(prefix, point);
    try {
      const config = splitConfigYaml(configYaml, policy.maxConfigBytes);
      checkLaunchPolicy(config, policy);
      const author = { id: principal.userId, email: null, is_admin: principal.isAdmin };
      checkLaunchRunnable(
        config.launch_config,
        { provisionedByAdmin: principal.isAdmin, launchAuthor: author },
        policy,
      );
      return { name, configYaml, config };
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      // The point's number joins the error's own details (the field refused, the sizes measured).
      const details = typeof err.details === 'object' && err.details !== null ? err.details : {};
      throw new AppError(err.statusCode, err.code, `sweep point ${i + 1} (${name}): ${err.message}`, {
        ...details,
        point: i + 1,
      });
    }
  });
}

/**
 * Turns a draft experiment into a sweep in one transaction: a variation per point, the commit, a managed run
 * per variation and the sweep row; then starts the sweep workflow. Repeating the same request after a 503
 * finds the recorded sweep and starts its workflow (the start is idempotent).
 */
export async function createSweep(
  { db, policy, orchestrator, log }: Deps,
  principal: Principal,
  experimentId: string,
  input: CreateSweepBody,
) {
  refuseWorkerKey(principal);
  if (input.strategy !== 'grid' && input.strategy !== 'list')
    throw badRequest('invalid_sweep', `strategy ${input.strategy} is not served yet`);
  const orch = requireOrchestrator(orchestrator);
  const concurrency = input.concurrency ?? 4;
  const prefix = input.name_prefix ?? 'sweep';
  const { concurrency: _, ...rest } = input;
  const spec: SweepSpec = { ...rest, name_prefix: prefix };
  const variations = variationsOf(input, prefix, principal, policy);

  let sweep = await repo.findSameSweep(db, principal.userId, experimentId, spec, concurrency);
  if (!sweep) {
    const id = randomUUID();
    sweep = await db.transaction(async (tx) => {
      const experiment = await repo.lockVisibleExperiment(tx, principal.userId, experimentId);
      if (!experiment) throw notFound('experiment');
      if (experiment.state !== 'draft') {
        throw conflict(
          'experiment_not_draft',
          `a sweep creates variations, so it needs a draft experiment; this one is ${experiment.state}`,
          { state: experiment.state },
        );
      }
      const row = await repo.insertSweep(tx, {
        id,
        experimentId,
        workflowId: sweepWorkflowId(id),
        spec,
        concurrency,
        createdBy: principal.userId,
      });
      const numbers: number[] = [];
      for (const v of variations)
        numbers.push((await insertVariation(tx, principal.userId, experimentId, v))!.n);
      await applyMove(tx, principal.userId, experimentId, 'commit', null);
      for (const n of numbers)
        await insertManagedRun(tx, {
          experimentId,
          n,
          provisionedBy: principal.userId,
          sweepId: id,
          recoversRunId: null,
        });
      return row;
    });
  }
  const runs = await repo.sweepRuns(db, sweep.id);
  const refs: ManagedRunRef[] = runs
    .filter((r) => r.recovers_run_id === null)
    .map((r) => ({ runId: r.id, experimentId, n: r.n, r: r.r, workflowId: r.workflow_id }));
  const { experimentName, owner } = await runLabels(db, { experiment_id: experimentId, sweep_id: null });
  const start = {
    sweepId: sweep.id,
    workflowId: sweep.workflow_id,
    experimentId,
    concurrency,
    runs: refs,
    labels: { experimentName, owner },
  };
  await callOrchestrator(log, `starting sweep workflow ${sweep.workflow_id}`, () => orch.startSweep(start));
  return sweepAnswer(db, sweep, orchestrator);
}

async function visibleSweep(db: Db, principal: Principal, experimentId: string, sweepId: string) {
  const sweep = await repo.findSweep(db, principal.userId, experimentId, sweepId);
  if (sweep) return sweep;
  await getVisibleExperiment(db, principal, experimentId);
  throw notFound('sweep');
}

/** The sweep with its runs' states and its progress, both from the database (Temporal is not asked). */
export async function getSweep(
  { db, orchestrator }: Deps,
  principal: Principal,
  experimentId: string,
  sweepId: string,
) {
  const sweep = await visibleSweep(db, principal, experimentId, sweepId);
  return sweepAnswer(db, sweep, orchestrator);
}

/** Cancels the sweep workflow, which cancels the runs it started. */
export async function cancelSweep(
  { db, orchestrator, log }: Deps,
  principal: Principal,
  experimentId: string,
  sweepId: string,
) {
  refuseWorkerKey(principal);
  const orch = requireOrchestrator(orchestrator);
  const sweep = await visibleSweep(db, principal, experimentId, sweepId);
  await callOrchestrator(log, `cancelling sweep workflow ${sweep.workflow_id}`, () =>
    orch.cancelSweep(sweep.workflow_id),
  );
  return sweepAnswer(db, sweep, orchestrator);
}

/** The experiment's sweeps, newest first, each with its progress and best value. */
export async function listSweeps(
  { db, orchestrator }: Pick<Deps, 'db' | 'orchestrator'>,
  principal: Principal,
  experimentId: string,
  query: { limit?: number; cursor?: string },
) {
  await getVisibleExperiment(db, principal, experimentId);
  const limit = query.limit ?? 50;
  const rows = await listSweepRows(db, principal.userId, experimentId, decodeCursor(query.cursor), limit + 1);
  const page = rows.slice(0, limit);
  return {
    items: await sweepSummaries(db, page, orchestrator),
    next_cursor: rows.length > limit ? encodeCursor(page.at(-1)!.id) : null,
  };
}
