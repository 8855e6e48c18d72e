// One managed run as a saga: provision → await start → watch → collect outputs → conclude,
// with compensation (terminate the instance, revoke the worker key, leave the run terminal) on every path.
import {
  CancellationScope,
  ContinueAsNew,
  ParentClosePolicy,
  condition,
  continueAsNew,
  executeChild,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { runChangedSignal, runEndedSignal, runSearchAttributes, workflowMemo } from './definitions.ts';
import { isTerminalRunState, type FailureReason, type RunState } from '@assay/contract';
import type { ManagedRunInput, ManagedRunResult, RunSnapshot, WatchOutcome } from './saga-types.ts';

/**
 * Histories recorded before this patch poll their way through the watch and conclude in four steps; from it on,
 * the service's signal ends the watch and concluding is one activity. Remove once no execution that started
 * before it is open (a run's executions last at most a slice set: `slicesPerExecution` × the watch slice).
 */
export const SIGNAL_DRIVEN_WATCH = 'signal-driven-watch';

/**
 * From this patch on, the saga takes fewer steps before the run starts and gives up its sweep slot earlier:
 * provisioning checks that the run is still pending itself (no read before it); the start wait waits for the
 * service's signal (or a poll) before it reads, and reads the instance only while the run has not started; and
 * a run its runner ended signals its sweep (`runEnded`) before concluding. Remove under the same condition as
 * SIGNAL_DRIVEN_WATCH.
 */
export const LEAN_SAGA = 'lean-saga';

// Short, idempotent service calls: local activities, ≈7× cheaper a step than regular ones.
// They retry without end: a service that is down for a while delays the saga but loses nothing.
const service = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});

// Compute calls: their own timeouts, and retried on another worker if this one dies (noticed by the missing
// heartbeats within seconds, not at the end of the start-to-close timeout).
const compute = proxyActivities<Activities>({
  startToCloseTimeout: '5m',
  heartbeatTimeout: '10s',
  retry: {
    initialInterval: '2s',
    backoffCoefficient: 2,
    maximumInterval: '1m',
    maximumAttempts: 8,
    nonRetryableErrorTypes: ['LaunchConfigError'],
  },
});

// Cleanup must eventually succeed, or an instance would leak: no attempt limit.
const cleanup = proxyActivities<Activities>({
  startToCloseTimeout: '5m',
  heartbeatTimeout: '10s',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m' },
});

function describeError(error: unknown): string {
  const cause = (error as { cause?: { message?: string } }).cause;
  return cause?.message ?? (error instanceof Error ? error.message : String(error));
}

export async function managedRun(input: ManagedRunInput): Promise<ManagedRunResult> {
  const { settings, runId, workflowId } = input;
  const ref = { runId, workflowId, experimentId: input.experimentId, n: input.n, r: input.r };
  // LEAN_SAGA implies SIGNAL_DRIVEN_WATCH: a new history records one patch (a marker and a search-attribute
  // update fewer per run); one recorded before it finds no LEAN_SAGA marker and asks for the older patch as it did.
  const lean = patched(LEAN_SAGA);
  const signalDriven = lean || patched(SIGNAL_DRIVEN_WATCH);
  let nudged = false;
  setHandler(runChangedSignal, () => {
    nudged = true;
  });
  const watcher = proxyActivities<Activities>({
    startToCloseTimeout: settings.watchSliceMs + 5 * 60_000,
    // Heartbeats are how a dead worker is noticed and how cancellation reaches the activity.
    heartbeatTimeout: Math.max(4 * settings.pollMs, 10_000),
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
  });
  let instanceId: string | null = null;

  /**
   * Polls the run until `done` holds or the time is up; the service's signal cuts a poll short. `waitFirst`
   * waits for the signal (or a poll's time) before the first read: right after provisioning, the runner cannot
   * have started unless its signal came, which the handler has noted already.
   */
  async function waitFor(
    done: (run: RunSnapshot) => boolean,
    timeoutMs: number,
    checkInstance: boolean,
    waitFirst = false,
  ) {
    const deadline = Date.now() + timeoutMs;
    if (waitFirst) await condition(() => nudged, Math.min(settings.pollMs, timeoutMs));
    for (;;) {
      // A signal that arrives while the reads run must still count: reset before reading, not after.
      if (signalDriven) nudged = false;
      let run: RunSnapshot;
      let alive = true;
      if (lean) {
        // The run first: on a signal's wake it has moved on, and the instance needs no look (one step, not two).
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
      if (!signalDriven) nudged = false;
      await condition(() => nudged, Math.min(settings.pollMs, left));
    }
  }

  /**
   * One watch slice. The activity polls (a fallback for a lost signal); the service's signal ends it at once: the
   * workflow reads the run, and when it ended or was asked to cancel, cancels the activity and acts. A signal
   * that changes nothing (the start's, arriving late) leaves the activity running.
   */
  async function watchSlice(): Promise<WatchOutcome> {
    const args = {
      runId,
      workflowId,
      silenceTimeoutMs: settings.silenceTimeoutMs,
      pollMs: settings.pollMs,
      sliceMs: settings.watchSliceMs,
    };
    if (!signalDriven) return watcher.watchRun(args);
    nudged = false;
    const scope = new CancellationScope();
    const watch = scope.run(() => watcher.watchRun(args));
    // Rejected with a CancelledFailure once cancelled below, when nobody awaits it any more.
    watch.catch(() => undefined);
    for (;;) {
      const outcome = await Promise.race([watch, condition(() => nudged).then(() => undefined)]);
      if (outcome) return outcome;
      nudged = false;
      const run = await service.readRun(runId);
      const seen: WatchOutcome | undefined = isTerminalRunState(run.state)
        ? { kind: 'ended', state: run.state, failureReason: run.failureReason }
        : run.cancelRequested
          ? { kind: 'cancel_requested' }
          : undefined;
      if (seen) {
        scope.cancel();
        return seen;
      }
    }
  }

  /**
   * Tells the sweep that started this run that the run is over, so that it starts its next run while this
   * saga concludes. Only for a run its runner ended: its instance is exiting by itself. Not awaited: the
   * signal goes out with the conclusion's first step, and a sweep that is gone changes nothing here.
   */
  function releaseSlot(state: RunState) {
    const parent = workflowInfo().parent;
    if (!lean || !input.releasesSlot || !parent) return;
    getExternalWorkflowHandle(parent.workflowId)
      .signal(runEndedSignal, { runId, state })
      .catch(() => undefined);
  }

  async function fail(reason: FailureReason, message: string) {
    await service.failRun(runId, reason, message);
  }

  /** Outputs, then the instance, then the key: the runner may still be finishing uploads with that key. */
  async function conclude(waitForOutputs: boolean): Promise<ManagedRunResult> {
    if (signalDriven)
      return CancellationScope.nonCancellable(async () => {
        const { outputs, run } = await cleanup.concludeRun({
          runId,
          workflowId,
          outputsTimeoutMs: waitForOutputs ? settings.outputsTimeoutMs : 0,
          pollMs: settings.pollMs,
        });
        return {
          runId,
          workflowId,
          state: run.state,
          failureReason: run.failureReason,
          instanceId,
          outputs,
          recoveredBy: null,
        };
      });
    return CancellationScope.nonCancellable(async () => {
      const outputs = await cleanup.collectOutputs({
        runId,
        timeoutMs: waitForOutputs ? settings.outputsTimeoutMs : 0,
        pollMs: settings.pollMs,
      });
      await cleanup.terminateInstance(workflowId);
      await service.revokeWorkerKeys(runId);
      let run = await service.readRun(runId);
      if (!isTerminalRunState(run.state))
        run = await service.failRun(runId, 'abandoned', 'the managed run ended before its runner did');
      return {
        runId,
        workflowId,
        state: run.state,
        failureReason: run.failureReason,
        instanceId,
        outputs,
        recoveredBy: null,
      };
    });
  }

  async function recover(result: ManagedRunResult): Promise<ManagedRunResult> {
    const left = input.recoveriesLeft ?? settings.maxRecoveries;
    if (left <= 0) return result;
    const next = await service.createRecoveryRun(runId);
    const labels = input.labels;
    const recoveredBy = await executeChild(managedRun, {
      workflowId: next.workflowId,
      args: [{ ...next, settings, recoveriesLeft: left - 1, ...(labels ? { labels } : {}) }],
      ...(labels
        ? { typedSearchAttributes: runSearchAttributes(next, labels), memo: workflowMemo(labels) }
        : {}),
      // A terminated parent must still let the child compensate.
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    });
    return { ...result, recoveredBy };
  }

  try {
    if (!input.watching) {
      if (!lean) {
        const before = await service.readRun(runId);
        if (before.state !== 'pending') return await conclude(false);
      }
      try {
        // The lean saga's provisioning starts nothing for a run that is no longer pending (instanceId null).
        instanceId = (await compute.provisionInstance(lean ? { ...ref, onlyIfPending: true } : ref))
          .instanceId;
      } catch (error) {
        if (isCancellation(error)) throw error;
        await fail('provision_failed', `provisioning failed: ${describeError(error)}`);
        return await conclude(false);
      }
      if (instanceId === null) return await conclude(false);
      const start = await waitFor((run) => run.state !== 'pending', settings.startTimeoutMs, true, lean);
      if (!start.alive) {
        await fail('provision_failed', 'the instance exited before the run started');
        return await conclude(false);
      }
      if (start.timedOut) {
        await fail(
          'provision_failed',
          `the run did not start within ${settings.startTimeoutMs / 1000} s of provisioning`,
        );
        return await conclude(false);
      }
      if (isTerminalRunState(start.run.state)) {
        releaseSlot(start.run.state);
        return await conclude(true);
      }
    }
    let slices = input.watching?.slicesDone ?? 0;
    for (;;) {
      const seen = await watchSlice();
      switch (seen.kind) {
        case 'slice_over':
          slices += 1;
          // A week-long run stays a handful of events per execution: each slice is one activity.
          if (slices >= settings.slicesPerExecution)
            return await continueAsNew<typeof managedRun>({ ...input, watching: { slicesDone: 0 } });
          continue;
        case 'ended':
          releaseSlot(seen.state);
          return await conclude(true);
        case 'silent':
          await fail('heartbeat_timeout', `no heartbeat for ${Math.round(seen.silentForMs / 1000)} s`);
          return await conclude(false);
        case 'cancel_requested': {
          const stop = await waitFor((run) => isTerminalRunState(run.state), settings.cancelGraceMs, false);
          if (!isTerminalRunState(stop.run.state))
            await fail(
              'abandoned',
              `cancelled; the runner did not stop within ${settings.cancelGraceMs / 1000} s`,
            );
          return await conclude(isTerminalRunState(stop.run.state));
        }
        case 'instance_lost':
          await fail('crash', 'the instance was lost before the run ended');
          return await recover(await conclude(false));
      }
    }
  } catch (error) {
    if (error instanceof ContinueAsNew) throw error;
    if (isCancellation(error)) {
      // Cancelled from the Temporal UI or by a cancelled sweep: ask the runner to stop, give it the grace, then end it.
      await CancellationScope.nonCancellable(async () => {
        const asked = await service.requestCancel(runId);
        if (!isTerminalRunState(asked.state)) {
          const stop = await waitFor((run) => isTerminalRunState(run.state), settings.cancelGraceMs, false);
          if (!isTerminalRunState(stop.run.state))
            await fail('abandoned', 'cancelled; the runner did not stop in time');
        }
        await conclude(false);
      });
      throw error;
    }
    await CancellationScope.nonCancellable(async () => {
      await fail('crash', `the managed run failed: ${describeError(error)}`);
      await conclude(false);
    });
    throw error;
  }
}
