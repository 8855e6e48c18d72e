import {
  SEARCH_STRATEGIES,
  withStoppingDefaults,
  type CreateSweepBody,
  type RepeatSweepBody,
  type SearchSweepBody,
  type SweepSpec,
} from '@assay/contract';
import { randomInt, randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Principal } from '../auth/principal.ts';
import type { Db, Tx } from '../db/database.ts';
import { applyMove } from '../experiments/experiment-repository.ts';
import { getVisibleExperiment } from '../experiments/experiment-service.ts';
import { decodeCursor, encodeCursor } from '../http/cursor.ts';
import { AppError, conflict, notFound, unavailable } from '../http/errors.ts';
import { callOrchestrator, requireOrchestrator } from '../orchestration/orchestrator-calls.ts';
import {
  searchTaskQueue,
  sweepWorkflowId,
  type ManagedRunRef,
  type Orchestrator,
  type SweepStart,
} from '../../orchestrator/orchestrator.ts';
import { insertManagedRun } from '../orchestration/managed-run-repository.ts';
import { refuseWorkerKey } from '../runs/run-service.ts';
import type { ConfigPolicy } from '../variations/config-policy.ts';
import { parseConfigYaml, splitConfigYaml } from '../variations/config-yaml.ts';
import { checkLaunchPolicy, checkLaunchRunnable, checkProvisionable } from '../variations/launch-policy.ts';
import { insertVariation } from '../variations/variation-repository.ts';
import { runLabels } from '../orchestration/provision-service.ts';
import { checkSearchSweep } from './search-space.ts';
import { pointName, pointYaml, sweepPoints, type EnumeratedSweep } from './sweep-points.ts';
import * as repo from './sweep-repository.ts';
import { listSweeps as listSweepRows } from './sweep-read-repository.ts';
import { sweepAnswer, sweepSummaries } from './sweep-view.ts';

// Generated YAML is held in memory and stored once per point: bound the whole, not only each point.
const MAX_TOTAL_YAML = 20_000_000;
const MAX_SEED = 2 ** 31 - 1;

interface Deps {
  db: Db;
  /** What each point's config may hold: its expanded size, a launch block the server's compute runs. */
  policy: ConfigPolicy;
  orchestrator: Orchestrator | undefined;
  log: FastifyBaseLogger;
}

/** A config checked exactly as POST …/variations checks one; its launch block is the sweep creator's. */
function checkedConfig(configYaml: string, principal: Principal, policy: ConfigPolicy) {
  const config = splitConfigYaml(configYaml, policy.maxConfigBytes);
  checkLaunchPolicy(config, policy);
  const author = { id: principal.userId, email: null, is_admin: principal.isAdmin };
  checkLaunchRunnable(
    config.launch_config,
    { provisionedByAdmin: principal.isAdmin, launchAuthor: author },
    policy,
  );
  return config;
}

/** The variations a grid or list sweep makes, each config checked; an error names the point. */
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
      return { name, configYaml, config: checkedConfig(configYaml, principal, policy) };
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

/** What a sweep's transaction adds to its row, the experiment's row locked: variations, commit, runs. */
type Make = (tx: Tx, sweep: { id: string; experimentState: string }) => Promise<void>;

interface Ctx {
  principal: Principal;
  experimentId: string;
  policy: ConfigPolicy;
}

/** A request made ready to record: its stored declaration and what its transaction makes. */
interface Plan {
  spec: SweepSpec;
  /** True when the service chose the seed: a repeated request (without one) finds the sweep all the same. */
  seedChosen: boolean;
  make: Make;
}

const notDraft = (state: string) =>
  conflict(
    'experiment_not_draft',
    `a sweep declares its variations before the commit, so it needs a draft experiment; this one is ${state}`,
    { state },
  );

/** grid and list: a variation per point, the commit, a managed run each. */
function enumeratedPlan(input: EnumeratedSweep, { principal, experimentId, policy }: Ctx): Plan {
  const prefix = input.name_prefix ?? 'sweep';
  const variations = variationsOf(input, prefix, principal, policy);
  const { concurrency: _, ...rest } = input;
  const make: Make = async (tx, sweep) => {
    if (sweep.experimentState !== 'draft') throw notDraft(sweep.experimentState);
    const numbers: number[] = [];
    for (const v of variations)
      numbers.push((await insertVariation(tx, principal.userId, experimentId, v))!.n);
    await applyMove(tx, principal.userId, experimentId, 'commit', null);
    for (const n of numbers)
      await insertManagedRun(tx, {
        experimentId,
        n,
        provisionedBy: principal.userId,
        sweepId: sweep.id,
        recoversRunId: null,
        priority: input.priority ?? 0,
      });
  };
  return { spec: { ...rest, name_prefix: prefix }, seedChosen: false, make };
}

/**
 * A search's `choice` over a launch field (a partition, an instance type) is checked value by value now, as a
 * grid's points are: a trial the allowlists refuse would otherwise fail the sweep when the sampler picks it.
 */
function checkLaunchChoices(
  input: SearchSweepBody,
  base: Record<string, unknown>,
  principal: Principal,
  policy: ConfigPolicy,
) {
  for (const [path, dimension] of Object.entries(input.space)) {
    if (!path.startsWith('launch.') || dimension.distribution !== 'choice') continue;
    for (const value of dimension.values) {
      try {
        checkedConfig(pointYaml(base, [[path, value]]), principal, policy);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        const details = typeof err.details === 'object' && err.details !== null ? err.details : {};
        throw new AppError(
          err.statusCode,
          err.code,
          `space.${path} value ${JSON.stringify(value)}: ${err.message}`,
          { ...details, space: path },
        );
      }
    }
  }
}

/**
 * random, sobol and tpe: the declaration checked (space, paths into the base, objective) and a sampler
 * present, then the sweep row and the commit that freezes its declaration. The trials' variations come
 * later, one per trial, made by the sweep workflow.
 */
async function searchPlan(input: SearchSweepBody, ctx: Ctx, orch: Orchestrator, log: FastifyBaseLogger) {
  const { principal, experimentId, policy } = ctx;
  const base = parseConfigYaml(input.base_yaml, policy.maxConfigBytes, 'base_yaml');
  checkSearchSweep(input, base);
  checkedConfig(input.base_yaml, principal, policy);
  checkLaunchChoices(input, base, principal, policy);
  const available = await callOrchestrator(log, 'asking for a search worker', () => orch.samplerAvailable());
  if (!available) {
    const queue = searchTaskQueue((await orch.deployment()).taskQueue);
    throw unavailable(
      'sampler_unavailable',
      `no search worker polls the task queue ${queue}: random, sobol and tpe sweeps need one. Run scripts/setup-search-worker.sh once (it installs Optuna and SciPy in .venv-search, which \`assay server\` then starts), or run \`python -m assay_search_worker --task-queue ${queue}\` from search-worker/ beside your Temporal`,
      { task_queue: queue },
    );
  }
  const { concurrency: _, ...rest } = input;
  const seed = input.seed ?? randomInt(0, MAX_SEED);
  const make: Make = async (tx, sweep) => {
    if (sweep.experimentState !== 'draft') throw notDraft(sweep.experimentState);
    await applyMove(tx, principal.userId, experimentId, 'commit', null, { searching: true });
  };
  const spec: SweepSpec = { ...rest, name_prefix: input.name_prefix ?? 'sweep', seed };
  return { spec, seedChosen: input.seed === undefined, make } satisfies Plan;
}

/**
 * repeat, on a committed experiment: `repeats` more runs of each (or each listed) variation, each with a
 * distinct seed derived from the sweep's (its config's top-level `seed:`).
 */
function repeatPlan(input: RepeatSweepBody, { principal, experimentId, policy }: Ctx): Plan {
  const { concurrency: _, ...rest } = input;
  const seed = input.seed ?? randomInt(0, MAX_SEED);
  const make: Make = async (tx, sweep) => {
    if (sweep.experimentState !== 'committed')
      throw conflict(
        'experiment_not_committed',
        `a repeat sweep runs a committed experiment's variations again; this one is ${sweep.experimentState}`,
        { state: sweep.experimentState },
      );
    const existing = await repo.variationNumbers(tx, experimentId);
    const chosen = input.variations ?? existing;
    const missing = chosen.filter((n) => !existing.includes(n));
    if (missing.length > 0)
      throw new AppError(422, 'invalid_sweep', `the experiment has no variation ${missing.join(', ')}`, {
        field: 'variations',
        missing,
      });
    let k = 0;
    for (const n of chosen) {
      await checkProvisionable(tx, principal, { experimentId, n }, policy);
      for (let i = 0; i < input.repeats; i++) {
        k += 1;
        await insertManagedRun(tx, {
          experimentId,
          n,
          provisionedBy: principal.userId,
          sweepId: sweep.id,
          recoversRunId: null,
          seed: (seed + k) % (MAX_SEED + 1),
          priority: input.priority ?? 0,
        });
      }
    }
  };
  return { spec: { ...rest, seed }, seedChosen: input.seed === undefined, make };
}

/** The sweep row and what the plan makes, in one transaction, unless the same request made it before. */
async function recordSweep(db: Db, ctx: Ctx, plan: Plan, concurrency: number) {
  const { principal, experimentId } = ctx;
  const { seed: _, ...unseeded } = plan.spec as SweepSpec & { seed?: number };
  const lookup = plan.seedChosen ? unseeded : plan.spec;
  const found = await repo.findSameSweep(db, principal.userId, experimentId, lookup, concurrency, {
    ignoreSeed: plan.seedChosen,
  });
  if (found) return found;
  const id = randomUUID();
  return db.transaction(async (tx) => {
    const experiment = await repo.lockVisibleExperiment(tx, principal.userId, experimentId);
    if (!experiment) throw notFound('experiment');
    const row = await repo.insertSweep(tx, {
      id,
      experimentId,
      workflowId: sweepWorkflowId(id),
      spec: plan.spec,
      concurrency,
      createdBy: principal.userId,
    });
    await plan.make(tx, { id, experimentState: experiment.state });
    return row;
  });
}

/** The workflow's start, from the stored declaration (its seed the one chosen at creation). */
function startOf(sweep: repo.SweepRow, runs: ManagedRunRef[], labels: SweepStart['labels']): SweepStart {
  const spec = sweep.spec as Partial<SearchSweepBody> & { max_retries?: number };
  const search =
    spec.space && spec.strategy && spec.trials && spec.seed !== undefined
      ? {
          strategy: spec.strategy,
          space: spec.space,
          goal: spec.objective?.goal ?? 'minimize',
          seed: spec.seed,
          trials: spec.trials,
        }
      : undefined;
  return {
    sweepId: sweep.id,
    workflowId: sweep.workflow_id,
    experimentId: sweep.experiment_id,
    concurrency: sweep.concurrency,
    runs,
    maxRetries: spec.max_retries ?? 0,
    ...(search ? { search } : {}),
    labels,
  };
}

/**
 * Records the sweep (its row, and by strategy: a draft's variations and commit, or a committed experiment's
 * repeat runs) in one transaction, then starts the trial sweep workflow. Every check comes before anything
 * is made. Repeating the same request after a 503 finds the recorded sweep and starts its workflow (the
 * start is idempotent).
 */
export async function createSweep(
  { db, policy, orchestrator, log }: Deps,
  principal: Principal,
  experimentId: string,
  request: CreateSweepBody,
) {
  refuseWorkerKey(principal);
  const orch = requireOrchestrator(orchestrator);
  const ctx: Ctx = { principal, experimentId, policy };
  // The declaration names every setting its pruner uses, the defaults included.
  const input = request.early_stopping
    ? { ...request, early_stopping: withStoppingDefaults(request.early_stopping) }
    : request;
  // Without an objective there is nothing to stop trials by (a searching sweep's own check says so too).
  const searching = (SEARCH_STRATEGIES as readonly string[]).includes(input.strategy);
  if (input.early_stopping && !input.objective && !searching)
    throw new AppError(
      422,
      'invalid_sweep',
      'objective: early stopping compares trials by the objective: give objective.metric and goal',
      { field: 'objective' },
    );
  const plan =
    input.strategy === 'grid' || input.strategy === 'list'
      ? enumeratedPlan(input, ctx)
      : input.strategy === 'repeat'
        ? repeatPlan(input, ctx)
        : await searchPlan(input, ctx, orch, log);
  const sweep = await recordSweep(db, ctx, plan, input.concurrency ?? 4);
  const refs: ManagedRunRef[] = (await repo.firstRuns(db, sweep.id)).map((r) => ({
    runId: r.id,
    experimentId,
    n: r.n,
    r: r.r,
    workflowId: r.workflow_id,
  }));
  const { experimentName, owner } = await runLabels(db, { experiment_id: experimentId, sweep_id: null });
  const start = startOf(sweep, refs, { experimentName, owner });
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

/** Cancels the sweep workflow, which cancels the runs it started and ends the ones it had not. */
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
