import type { SearchSpace, SweepTrialRecord as TrialRecord } from '@assay/contract';
import type { Db } from '../db/database.ts';
import { AppError, conflict, notFound } from '../http/errors.ts';
import { insertManagedRun } from '../orchestration/managed-run-repository.ts';
import type { ConfigPolicy } from '../variations/config-policy.ts';
import { parseConfigYaml, splitConfigYaml } from '../variations/config-yaml.ts';
import { checkLaunchPolicy, checkLaunchRunnable } from '../variations/launch-policy.ts';
import { pointName, pointYaml, type SweepPoint } from './sweep-points.ts';
import * as repo from './trial-repository.ts';

// The trial sweep workflow's calls (through /orchestrator/sweeps/*): every one safe to repeat.

interface SearchSpec {
  base_yaml: string;
  space: SearchSpace;
  name_prefix?: string;
  objective?: { metric: string } | null;
  trials?: number;
  /** The compute queue's priority of every trial run. */
  priority?: number;
}

/** Short numbers in a trial's name; the variation's config keeps the exact value. */
const shown = (value: unknown) =>
  typeof value === 'number' && !Number.isInteger(value) ? Number(value.toPrecision(4)) : value;

/** The trial's point in the space's key order; every key of the space must have a value. */
function pointOf(space: SearchSpace, params: Record<string, unknown>): SweepPoint {
  return Object.keys(space).map((path) => {
    if (!Object.hasOwn(params, path))
      throw new AppError(422, 'invalid_search_space', `the suggestion has no value for ${path}`, {
        field: `params.${path}`,
      });
    return [path, params[path]];
  });
}

/**
 * The trial's variation (marked with its sweep, trial number and point) and its first managed run, made
 * once: a repeated call answers the same run. The variation's config is checked as POST …/variations checks
 * one, its launch block the sweep creator's.
 */
export async function createTrial(
  db: Db,
  policy: ConfigPolicy,
  sweepId: string,
  trial: number,
  params: Record<string, unknown>,
) {
  return db.transaction(async (tx) => {
    const sweep = await repo.lockSweep(tx, sweepId);
    if (!sweep) throw notFound('sweep');
    const spec = sweep.spec as unknown as SearchSpec;
    if (!spec.space)
      throw conflict('invalid_state_transition', 'this sweep does not search: it makes no trials');
    // The declaration is the sweep's promise: never a trial past the number it declared.
    if (spec.trials !== undefined && trial > spec.trials)
      throw new AppError(
        422,
        'invalid_sweep',
        `the sweep declared ${spec.trials} trials; no trial ${trial}`,
        {
          field: 'trial',
        },
      );
    let n = await repo.findTrialVariation(tx, sweepId, trial);
    if (n === undefined) {
      const point = pointOf(spec.space, params);
      const base = parseConfigYaml(spec.base_yaml, policy.maxConfigBytes, 'base_yaml');
      const configYaml = pointYaml(base, point);
      const config = splitConfigYaml(configYaml, policy.maxConfigBytes);
      checkLaunchPolicy(config, policy);
      checkLaunchRunnable(
        config.launch_config,
        {
          provisionedByAdmin: sweep.creator_is_admin,
          launchAuthor: sweep.created_by
            ? { id: sweep.created_by, email: null, is_admin: sweep.creator_is_admin }
            : null,
        },
        policy,
      );
      const name = pointName(
        `${spec.name_prefix ?? 'sweep'} #${trial}`,
        point.map(([path, value]) => [path, shown(value)]),
      );
      const made = await repo.insertTrialVariation(tx, {
        experimentId: sweep.experiment_id,
        sweepId,
        trial,
        params: Object.fromEntries(point),
        name,
        configYaml,
        config,
        author: sweep.created_by,
      });
      if (made === undefined)
        throw conflict('experiment_not_committed', 'the sweep’s experiment is no longer committed');
      n = made;
    }
    const existing = await repo.firstRunOf(tx, sweepId, n);
    if (existing) return existing;
    const run = await insertManagedRun(tx, {
      experimentId: sweep.experiment_id,
      n,
      provisionedBy: sweep.created_by,
      sweepId,
      recoversRunId: null,
      // The sweep's priority in the compute queue, as its declaration carries it.
      priority: spec.priority ?? 0,
    });
    if (!run) throw conflict('experiment_not_committed', 'the sweep’s experiment is no longer committed');
    return run;
  });
}

/** The sweep's trials as the sampler takes them (Optuna's states), in trial order. */
export async function trialHistory(db: Db, sweepId: string): Promise<TrialRecord[]> {
  const spec = (await repo.sweepSpec(db, sweepId)) as SearchSpec | undefined;
  if (!spec) throw notFound('sweep');
  const metric = spec.objective?.metric ?? null;
  return (await repo.trialRuns(db, sweepId, metric)).map((t): TrialRecord => {
    const intermediate: [number, number][] =
      t.step !== null && t.value !== null && Number.isFinite(t.value) ? [[t.step, t.value]] : [];
    const value = t.value !== null && Number.isFinite(t.value) ? t.value : null;
    if (t.state === 'succeeded')
      return { trial: t.trial, params: t.params, state: 'complete', value, intermediate };
    if (t.state === 'failed' && t.failure_reason === 'stopped_early')
      return { trial: t.trial, params: t.params, state: 'pruned', value, intermediate };
    if (t.state === 'failed')
      return { trial: t.trial, params: t.params, state: 'failed', value: null, intermediate };
    return { trial: t.trial, params: t.params, state: 'running', value: null, intermediate };
  });
}

export const abandonPendingRuns = (db: Db, sweepId: string) => repo.abandonPendingRuns(db, sweepId);
