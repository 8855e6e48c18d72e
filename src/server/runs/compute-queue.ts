// The `local` compute queue: managed runs beyond the machine's run slots or free GPUs wait here, in one fair
// order (queue-order.ts), and are granted a slot and their GPUs as others end. Every grant is made under one
// lock in one transaction, so several replicas may grant without ever handing out a GPU twice. Other
// providers take no queue: their answer is an immediate grant without a query.
import type { RunQueuePlace } from '@assay/contract';
import { gpuAskRefusal, type LocalCapacity } from '../../compute/local-gpus.ts';
import type { Db, Queryable, Tx } from '../db/database.ts';
import { AppError, notFound } from '../http/errors.ts';
import * as repo from './compute-queue-repository.ts';
import { grantsNow, queueOrder, type QueueState, type WaitingRun } from './queue-order.ts';

/** A holding run whose saga never released it (terminated by an operator) is let go this long after it ended. */
const STALE_HOLD_MS = 10 * 60_000;

export type SlotAnswer =
  /** `gpuIds` null: the machine has no GPU slots (the run's CUDA_VISIBLE_DEVICES is left alone). */
  | { state: 'granted'; queued: boolean; gpuIds: number[] | null }
  | { state: 'waiting'; place: RunQueuePlace }
  /** The run is no longer pending and holds nothing: its saga ends without provisioning. */
  | { state: 'ended' };

/**
 * The saga's ask: puts the pending run in the queue (once), grants whatever fits, and answers the run's grant
 * or its place. Repeating it is safe: a granted run gets its same GPUs again.
 */
export async function acquireSlot(
  db: Db,
  runId: string,
  capacity: LocalCapacity | undefined,
): Promise<SlotAnswer> {
  if (!capacity) return { state: 'granted', queued: false, gpuIds: null };
  const gpus = await repo.gpusAsked(db, runId);
  if (gpus === undefined) throw notFound('managed run');
  const refusal = gpuAskRefusal(gpus, capacity);
  if (refusal) throw new AppError(422, 'launch_not_allowed', refusal, { field: 'launch.gpus' });
  return db.transaction(async (tx) => {
    await repo.lockQueue(tx);
    const row = await repo.enqueue(tx, runId);
    if (!row) return { state: 'ended' };
    if (row.granted_at === null) await grantWhatFits(tx, capacity);
    const now = await repo.findQueued(tx, runId);
    if (now?.granted_at) return granted(now.gpu_ids, capacity);
    const place = placeOf(await repo.readQueue(tx), runId);
    return place ? { state: 'waiting', place } : { state: 'ended' };
  });
}

/** The run leaves the queue (it ended, waiting or holding) and the runs it made room for are granted. */
export async function releaseSlot(
  db: Db,
  runId: string,
  capacity: LocalCapacity | undefined,
): Promise<boolean> {
  if ((await repo.gpusAsked(db, runId)) === undefined) throw notFound('managed run');
  if (!capacity) return false;
  return db.transaction(async (tx) => {
    await repo.lockQueue(tx);
    const left = await repo.leave(tx, runId);
    await grantWhatFits(tx, capacity);
    return left;
  });
}

async function grantWhatFits(tx: Tx, capacity: LocalCapacity): Promise<void> {
  await repo.dropEnded(tx, STALE_HOLD_MS);
  const state = await repo.readQueue(tx);
  for (const g of grantsNow(state, capacity)) await repo.grant(tx, g.runId, g.gpuIds);
}

function granted(gpuIds: number[], capacity: LocalCapacity): SlotAnswer {
  // On a machine with GPUs, a run asking none sees none (CUDA_VISIBLE_DEVICES=''), never another's.
  return { state: 'granted', queued: true, gpuIds: capacity.gpuIds.length === 0 ? null : gpuIds };
}

function placeOf(state: QueueState, runId: string): RunQueuePlace | undefined {
  const order = queueOrder(state);
  const i = order.findIndex((w) => w.runId === runId);
  return i < 0 ? undefined : placeAt(order, i);
}

function placeAt(order: readonly WaitingRun[], i: number): RunQueuePlace {
  const run = order[i]!;
  return {
    position: i + 1,
    waiting: order.length,
    gpus: run.gpus,
    since: new Date(run.enqueuedAt).toISOString(),
  };
}

/**
 * The queue places of those of `runs` that wait, for run answers: nothing to read when none of them is a
 * pending managed run, one query when none of those waits (the usual case), the queue read once when some do.
 */
export async function queuePlaces(
  db: Queryable,
  runs: readonly { id: string; state: string; managed: boolean }[],
): Promise<Map<string, RunQueuePlace>> {
  const places = new Map<string, RunQueuePlace>();
  const candidates = new Set(runs.filter((r) => r.managed && r.state === 'pending').map((r) => r.id));
  if (candidates.size === 0) return places;
  const state = await repo.readQueueIfWaiting(db, [...candidates]);
  if (!state) return places;
  const order = queueOrder(state);
  order.forEach((run, i) => {
    if (candidates.has(run.runId)) places.set(run.runId, placeAt(order, i));
  });
  return places;
}
