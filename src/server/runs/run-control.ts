import type { CancelReason, RunControl, RunState } from '@assay/contract';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../db/database.ts';
import { notFound } from '../http/errors.ts';
import type { RunControlWaits } from './run-control-waits.ts';
import * as repo from './run-repository.ts';

/** The runner must act: its run was asked to stop, or is no longer running. */
const settled = (row: repo.RunControlRow) => row.cancel_requested || row.state !== 'running';

async function read(db: Db, principal: Principal, key: repo.RunKey): Promise<repo.RunControlRow> {
  const row = await repo.findRunControl(db, principal, key);
  if (!row) throw notFound('run');
  return row;
}

/**
 * GET …/control: the run's control answer at once when the runner must act, else when that happens (a notice
 * wakes the wait), else after `waitS`. Answers at once too when this replica holds its cap of waiting polls or
 * is shutting down (the runner asks again), and lets go of its place when `gone` fires (the caller left).
 */
export async function awaitRunControl(
  db: Db,
  waits: RunControlWaits,
  principal: Principal,
  key: repo.RunKey,
  waitS: number,
  gone: AbortSignal,
): Promise<RunControl> {
  const deadline = Date.now() + waitS * 1000;
  let row = await read(db, principal, key);
  for (;;) {
    const left = deadline - Date.now();
    if (settled(row) || left <= 0 || gone.aborted) return toControl(row);
    const wait = waits.wait(row.id, left);
    if (!wait) return toControl(row);
    const leave = () => wait.cancel();
    gone.addEventListener('abort', leave);
    try {
      // Read again once the wait is registered: a change committed before it would send no notice it hears.
      row = await read(db, principal, key);
      if (settled(row)) return toControl(row);
      const end = await wait.ended;
      if (end === 'cancelled') return toControl(row);
      row = await read(db, principal, key);
      if (end !== 'notified') return toControl(row);
    } finally {
      wait.cancel();
      gone.removeEventListener('abort', leave);
    }
  }
}

function toControl(row: repo.RunControlRow): RunControl {
  return {
    // The table's CHECK constraints hold these to the contract's values.
    state: row.state as RunState,
    cancel_requested: row.cancel_requested,
    cancel_reason: row.cancel_reason as CancelReason | null,
  };
}
