// Polling the run between steps: the start wait, a cancel's grace. The service's signal cuts a poll short.
import { condition } from '@temporalio/workflow';
import type { RunSnapshot } from '../saga-types.ts';
import { service } from './activities.ts';
import type { Saga } from './saga.ts';

export interface Waited {
  run: RunSnapshot;
  /** False when the instance was found gone (only looked at with `checkInstance`). */
  alive: boolean;
  timedOut: boolean;
}

/**
 * Polls the run until `done` holds or the time is up; the service's signal cuts a poll short. `waitFirst`
 * waits for the signal (or a poll's time) before the first read: right after provisioning, the runner cannot
 * have started unless its signal came, which the handler has noted already.
 */
export async function waitForRun(
  saga: Saga,
  done: (run: RunSnapshot) => boolean,
  timeoutMs: number,
  checkInstance: boolean,
  waitFirst = false,
): Promise<Waited> {
  const { runId, workflowId, settings } = saga;
  const deadline = Date.now() + timeoutMs;
  if (waitFirst) await condition(() => saga.nudged, Math.min(settings.pollMs, timeoutMs));
  for (;;) {
    // A signal that arrives while the reads run must still count: reset before reading, not after.
    saga.nudged = false;
    let run: RunSnapshot;
    let alive = true;
    if (saga.lean) {
      // The run first: on a signal's wake it has moved on, and the instance needs no look (one step).
      run = await service.readRun(runId);
      if (done(run)) return { run, alive: true, timedOut: false };
      if (checkInstance && !(await service.instanceAlive(workflowId))) {
        // Its runner may have moved the run on between the two reads, and exited since.
        run = await service.readRun(runId);
        return { run, alive: done(run), timedOut: false };
      }
    } else {
      alive = checkInstance ? await service.instanceAlive(workflowId) : true;
      run = await service.readRun(runId);
      if (done(run)) return { run, alive: true, timedOut: false };
      if (!alive) return { run, alive: false, timedOut: false };
    }
    const left = deadline - Date.now();
    if (left <= 0) return { run, alive, timedOut: true };
    await condition(() => saga.nudged, Math.min(settings.pollMs, left));
  }
}
