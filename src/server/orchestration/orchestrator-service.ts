import { revokeRunWorkerKeys } from '../api-keys/api-key-repository.ts';
import type { Db, Tx } from '../db/database.ts';
import { conflict, notFound } from '../http/errors.ts';
import type { RunRow } from '../runs/run-repository.ts';
import { insertManagedRun } from './managed-run-repository.ts';
import * as repo from './orchestrator-repository.ts';
import { voidRunExchanges } from './worker-key-exchange-repository.ts';

// The rules behind /orchestrator/*: every call is safe to repeat, because activities are retried.

export async function getManagedRun(db: Db, runId: string) {
  const run = await repo.findManagedRun(db, runId);
  if (!run) throw notFound('managed run');
  return run;
}

/**
 * Revokes every worker key of the run (a compensation), and voids its unused exchange tokens so that none can
 * buy a key afterwards; the ids let the caller drop the keys from the auth cache.
 */
export async function revokeWorkerKeys(db: Db, runId: string): Promise<string[]> {
  await getManagedRun(db, runId);
  await voidRunExchanges(db, runId);
  return revokeRunWorkerKeys(db, runId);
}

export async function recordInstance(
  db: Db,
  runId: string,
  instance: { provider: string; instance_id: string; state: string },
) {
  const run = await repo.recordInstance(db, runId, instance);
  if (!run) throw notFound('managed run');
  return run;
}

/** Fails a pending or running run; an ended run is answered as it is, since a compensation may come twice. */
export async function failManagedRun(db: Db, runId: string, reason: string, message: string | undefined) {
  const failed = await repo.failManagedRun(db, runId, reason, message ?? null);
  return failed ?? getManagedRun(db, runId);
}

/**
 * As a user's cancel: a pending run fails `abandoned`, a running one is asked to stop; an ended one is left
 * as it is.
 */
export async function cancelManagedRun(db: Db, runId: string) {
  const pending = await repo.cancelPendingManagedRun(db, runId);
  if (pending) return pending;
  const requested = await repo.requestManagedRunCancel(db, runId);
  return requested ?? getManagedRun(db, runId);
}

/**
 * The run that recovers this one (its instance was lost): the next run of the same variation, managed for the
 * same user and sweep. One per run: asking again answers the same run, with `created: false`.
 */
export async function createRecoveryRun(db: Db, runId: string): Promise<{ run: RunRow; created: boolean }> {
  return db.transaction(async (tx) => {
    const original = await repo.lockManagedRun(tx, runId);
    if (!original) throw notFound('managed run');
    const existing = await repo.findRecoveryOf(tx, runId);
    if (existing) return { run: existing, created: false };
    return nextRunOf(tx, original, { recoversRunId: original.id });
  });
}

/**
 * A new managed run of `original`'s variation for the same user and sweep, with its name and tags, linked as
 * `link` says; 409 once the experiment takes no new runs.
 */
async function nextRunOf(
  tx: Tx,
  original: RunRow,
  link: { recoversRunId?: string; retriesRunId?: string; seed?: number | null },
): Promise<{ run: RunRow; created: boolean }> {
  const run = await insertManagedRun(tx, {
    experimentId: original.experiment_id,
    n: original.n,
    provisionedBy: original.provisioned_by,
    sweepId: original.sweep_id,
    recoversRunId: null,
    // It takes the original's place in line: the same priority; and its name and tags, the same training.
    priority: original.priority,
    name: original.name,
    tags: original.tags,
    ...link,
  });
  if (!run)
    throw conflict('experiment_not_runnable', 'the experiment is no longer committed: it takes no new runs');
  return { run, created: true };
}

/**
 * The run that retries this failed sweep run (it failed crash, heartbeat_timeout or provision_failed): the
 * next run of the same variation, for the same user, sweep and seed. One per run: asking again answers the
 * same run, with `created: false`.
 */
export async function createRetryRun(db: Db, runId: string): Promise<{ run: RunRow; created: boolean }> {
  return db.transaction(async (tx) => {
    const original = await repo.lockManagedRun(tx, runId);
    if (!original) throw notFound('managed run');
    const existing = await repo.findRetryOf(tx, runId);
    if (existing) return { run: existing, created: false };
    if (original.sweep_id === null || original.state !== 'failed')
      throw conflict('invalid_state_transition', 'only a failed run of a sweep is retried', {
        state: original.state,
      });
    return nextRunOf(tx, original, {
      retriesRunId: original.id,
      seed: original.seed === null ? null : Number(original.seed),
    });
  });
}

export async function listRunAssets(db: Db, runId: string) {
  await getManagedRun(db, runId);
  return { items: await repo.listRunAssets(db, runId) };
}
