// The saga's side effects. Each one is idempotent: Temporal may run it again after a crash or timeout, so
// every call either converges on the same result (keyed by the workflow id or the run id) or is
// harmless twice.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { isTerminalRunState, type FailureReason } from '@assay/contract';
import { BadRequestError, ConflictError, NotFoundError, type RunData } from '../src/client/index.ts';
import { LaunchConfigError, type ComputeProvider } from '../src/compute/compute-provider.ts';
import type { OrchestratorApi } from './orchestrator-api.ts';
import { createSweepActivities } from './sweep-activities.ts';
import type { ComputeSlot } from '@assay/contract';
import type { RunSnapshot, SlotOutcome, WatchOutcome } from '../workflows/saga-types.ts';

export interface ActivityDeps {
  /** Holds the orchestrator key: it reaches managed runs only, through /orchestrator/*. */
  api: OrchestratorApi;
  provider: ComputeProvider;
  /** What instances get as SERVICE_SERVER_URL (the service as they can reach it). */
  runnerServerUrl: string;
}

function snapshot(run: RunData): RunSnapshot {
  const lastSign = run.last_heartbeat_at ?? run.started_at;
  return {
    state: run.state,
    failureReason: run.failure_reason,
    cancelRequested: run.cancel_requested,
    // Measured against this worker's clock; the silence timeout is minutes, so seconds of skew do not matter.
    silentForMs: lastSign ? Math.max(0, Date.now() - Date.parse(lastSign)) : null,
  };
}

function slotOutcome(slot: ComputeSlot): SlotOutcome {
  if (slot.state === 'granted') return { kind: 'granted', queued: slot.queued, gpuIds: slot.gpu_ids };
  if (slot.state === 'waiting' && slot.queue)
    return { kind: 'waiting', position: slot.queue.position, waiting: slot.queue.waiting };
  return { kind: 'ended' };
}

/**
 * Service calls: a missing (or unmanaged) run will not appear by retrying, nor will a conflict (the run
 * ended meanwhile) go away; everything else (service down, 5xx, timeouts) is retried by Temporal.
 */
async function orchestrated<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof NotFoundError) throw ApplicationFailure.nonRetryable(error.message, 'RunNotFound');
    if (error instanceof ConflictError) throw ApplicationFailure.nonRetryable(error.message, 'RunConflict');
    // A request the service refuses (a trial's config its policy rejects) is refused again on a retry.
    if (error instanceof BadRequestError) throw ApplicationFailure.nonRetryable(error.message, 'Refused');
    throw error;
  }
}

/**
 * Heartbeats while `work` runs. The compute calls' heartbeat timeout (workflows/managed-run.ts) then notices
 * a worker that died mid-call within seconds and retries on another; without it, Temporal waits out the whole
 * start-to-close timeout (minutes) while the run's sweep slot stays taken.
 */
async function beating<T>(work: () => Promise<T>): Promise<T> {
  const context = Context.current();
  const timer = setInterval(() => context.heartbeat(), 2_000);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

export function createActivities({ api, provider, runnerServerUrl }: ActivityDeps) {
  async function readRun(runId: string): Promise<RunSnapshot> {
    return snapshot((await orchestrated(() => api.getRun(runId))).run);
  }

  /**
   * The instance's state once it is terminated, so the run no longer shows the state provisioning recorded
   * ("running") ever after: `preempted` when the provider says it was taken back, else `terminated`.
   */
  async function recordEndedInstance(runId: string, workflowId: string, recorded: RunData['instance']) {
    const { provider: kind, instance_id: instanceId } = recorded ?? {};
    if (typeof kind !== 'string' || typeof instanceId !== 'string') return;
    // A failed status check says nothing here either: the terminate above succeeded.
    const after = await provider.describe(workflowId).catch(() => undefined);
    const state = after?.state === 'preempted' ? 'preempted' : 'terminated';
    if (recorded?.state === state) return;
    await orchestrated(() => api.recordInstance(runId, { provider: kind, instance_id: instanceId, state }));
  }

  async function outputsOf(input: { runId: string; timeoutMs: number; pollMs: number }) {
    const context = Context.current();
    const deadline = Date.now() + input.timeoutMs;
    for (;;) {
      const { items } = await orchestrated(() => api.listRunAssets(input.runId));
      const pending = items.filter((a) => a.state !== 'ready').length;
      if (pending === 0 || Date.now() >= deadline) return { ready: items.length - pending, pending };
      await context.sleep(Math.min(input.pollMs, Math.max(0, deadline - Date.now())));
    }
  }

  async function acquireSlot(runId: string): Promise<SlotOutcome> {
    return slotOutcome(await orchestrated(() => api.acquireSlot(runId)));
  }

  return {
    ...createSweepActivities(api, orchestrated),
    readRun,

    /**
     * The run's slot in the `local` compute queue, asked once: granted (at once on other providers, or when
     * the machine has room), or its place. A run whose GPU ask the machine can never meet is refused.
     */
    acquireSlot,

    /**
     * Waits in the compute queue for one slice: asks again every `pollMs` while heartbeating (the heartbeats
     * carry a cancellation here at once), and returns once granted or ended, or when the slice is over.
     */
    async awaitSlot(input: { runId: string; pollMs: number; sliceMs: number }): Promise<SlotOutcome> {
      const context = Context.current();
      const sliceEnd = Date.now() + input.sliceMs;
      for (;;) {
        context.heartbeat();
        const outcome = await acquireSlot(input.runId);
        if (outcome.kind !== 'waiting' || Date.now() >= sliceEnd) return outcome;
        await context.sleep(input.pollMs);
      }
    },

    /**
     * Starts the run's instance with a one-time exchange token, which its runner trades for the worker key at
     * start: no worker key exists in this process, the workflow history (an activity's result, which
     * operators read in the Temporal UI) or the instance's launch data. An instance found for the workflow id
     * is returned as is, so a retry after a crash never starts a second one. Attempts that overlap may each
     * mint a token; minting revokes nothing, so the token the instance got works whichever attempt wrote it.
     * With `onlyIfPending`, a run that is no longer pending (cancelled before its instance existed)
     * gets none:
     * `instanceId` null. The saga's own read before provisioning was a step of its own.
     */
    provisionInstance(ref: {
      runId: string;
      workflowId: string;
      experimentId: string;
      n: number;
      r: number;
      onlyIfPending?: boolean;
      /** The GPUs the compute queue granted (null: the machine has no GPU slots; absent: no queue). */
      gpuIds?: number[] | null;
    }): Promise<{ provider: string | null; instanceId: string | null }> {
      return beating(async () => {
        // Both reads at once: a retry finds its instance, a first attempt needs the run's launch config.
        const [existing, current] = await Promise.all([
          provider.describe(ref.workflowId),
          orchestrated(() => api.getRun(ref.runId)),
        ]);
        if (existing) {
          // The attempt that started it may have died before recording it.
          await orchestrated(() =>
            api.recordInstance(ref.runId, {
              provider: existing.provider,
              instance_id: existing.instanceId,
              state: existing.state,
            }),
          );
          return { provider: existing.provider, instanceId: existing.instanceId };
        }
        if (ref.onlyIfPending && current.run.state !== 'pending') return { provider: null, instanceId: null };
        const { launch_config: launch } = current;
        const people = {
          provisionedByAdmin: current.provisioned_by_admin,
          launchAuthor: current.launch_author,
        };
        const command = launch.command;
        if (command === undefined) {
          throw ApplicationFailure.nonRetryable(
            'the variation has no launch.command: a managed run needs one',
            'LaunchConfigError',
          );
        }
        try {
          // A launch the operator's policy refuses is refused before a token exists for it.
          provider.checkLaunch(launch, people);
          const exchange = await orchestrated(() => api.mintExchangeToken(ref.runId));
          const instance = await provider.provision({
            idempotencyKey: ref.workflowId,
            env: {
              SERVICE_SERVER_URL: runnerServerUrl,
              SERVICE_EXCHANGE_TOKEN: exchange.token,
              SERVICE_EXPERIMENT_ID: ref.experimentId,
              SERVICE_VARIATION: String(ref.n),
              SERVICE_RUN: String(ref.r),
            },
            launch: { ...launch, command },
            tags: { 'assay:run': ref.runId, 'assay:workflow': ref.workflowId },
            ...(ref.gpuIds ? { gpuIds: ref.gpuIds } : {}),
            // An attempt killed before it released its instance left one that ended without starting the run.
            replaceEnded: current.run.state === 'pending',
            ...people,
          });
          await api.recordInstance(ref.runId, {
            provider: instance.provider,
            instance_id: instance.instanceId,
            state: instance.state,
          });
          return { provider: instance.provider, instanceId: instance.instanceId };
        } catch (error) {
          if (error instanceof LaunchConfigError)
            throw ApplicationFailure.nonRetryable(error.message, 'LaunchConfigError');
          throw error;
        }
      });
    },

    /** Whether the instance still exists (not terminated, not vanished, not taken back by the provider). */
    instanceAlive(workflowId: string): Promise<boolean> {
      return beating(async () => {
        const instance = await provider.describe(workflowId);
        return instance !== undefined && instance.state !== 'preempted';
      });
    },

    /** Ends the run failed unless it already ended; the service treats a terminal run as success. */
    async failRun(runId: string, reason: FailureReason, message: string): Promise<RunSnapshot> {
      return snapshot(await orchestrated(() => api.failRun(runId, reason, message)));
    },

    /** Asks a running runner to stop (it sees it in its heartbeat answer); a pending run ends at once. */
    async requestCancel(runId: string): Promise<RunSnapshot> {
      return snapshot(await orchestrated(() => api.cancelRun(runId)));
    },

    async createRecoveryRun(runId: string) {
      const run = await orchestrated(() => api.createRecoveryRun(runId));
      return {
        runId: run.id,
        experimentId: run.experiment_id,
        n: run.n,
        r: run.r,
        workflowId: run.workflow_id!,
      };
    },

    /**
     * Watches a started run for one slice without writing history: polls the service and the instance,
     * reports Temporal heartbeats (which carry cancellation to us), and returns on the first thing the
     * workflow must act on, or when the slice is over.
     */
    async watchRun(input: {
      runId: string;
      workflowId: string;
      silenceTimeoutMs: number;
      pollMs: number;
      sliceMs: number;
    }): Promise<WatchOutcome> {
      const context = Context.current();
      const sliceEnd = Date.now() + input.sliceMs;
      let goneSeen = 0;
      for (;;) {
        context.heartbeat();
        // The instance first: a runner ends its run before it exits, so a gone instance with a live run is
        // a loss.
        // Heartbeating meanwhile: a hanging provider API (retried up to its timeouts) is not a dead worker.
        const instance = await beating(() => instanceStatus(provider, input.workflowId));
        const run = await readRun(input.runId);
        if (isTerminalRunState(run.state))
          return { kind: 'ended', state: run.state, failureReason: run.failureReason };
        if (run.cancelRequested) return { kind: 'cancel_requested' };
        // A status check that failed says nothing (SkyPilot#10155 recovered a healthy job 24 times on such
        // answers): only the provider's own word that the instance is gone, twice in a row, is a loss. A run
        // whose instance truly vanished without a word still goes silent and fails heartbeat_timeout.
        goneSeen = instance === 'unknown' ? goneSeen : instance === 'alive' ? 0 : goneSeen + 1;
        if (instance === 'preempted') return { kind: 'instance_lost', cause: 'preempted' };
        if (goneSeen >= 2) return { kind: 'instance_lost', cause: 'crash' };
        if (run.silentForMs !== null && run.silentForMs > input.silenceTimeoutMs)
          return { kind: 'silent', silentForMs: run.silentForMs };
        if (Date.now() >= sliceEnd) return { kind: 'slice_over' };
        await context.sleep(input.pollMs);
      }
    },

    /**
     * The saga's ending in one step (one activity instead of four keeps a run's history short): outputs, then
     * the instance, then the key, since the runner may still be finishing uploads with that key; a run that
     * is not terminal by then is failed `abandoned`. Every step is idempotent, so a retry repeats
     * them harmlessly.
     */
    concludeRun(input: {
      runId: string;
      workflowId: string;
      outputsTimeoutMs: number;
      pollMs: number;
      /** The run went through the compute queue: it leaves it once its instance is gone. */
      releaseSlot?: boolean;
    }): Promise<{ outputs: { ready: number; pending: number }; run: RunSnapshot }> {
      return beating(async () => {
        const outputs = await outputsOf({
          runId: input.runId,
          timeoutMs: input.outputsTimeoutMs,
          pollMs: input.pollMs,
        });
        await provider.terminate(input.workflowId);
        // The revocation and the read need no order: a run that a late runner ended between them stays as it
        // ended, since failRun answers a terminal run's own state.
        const [, current] = await Promise.all([
          orchestrated(() => api.revokeWorkerKeys(input.runId)),
          orchestrated(() => api.getRun(input.runId)),
          // After the instance is gone, so its GPUs are free when the next run gets them.
          input.releaseSlot ? orchestrated(() => api.releaseSlot(input.runId)) : undefined,
        ]);
        await recordEndedInstance(input.runId, input.workflowId, current.run.instance);
        let run = snapshot(current.run);
        if (!isTerminalRunState(run.state))
          run = snapshot(
            await orchestrated(() =>
              api.failRun(input.runId, 'abandoned', 'the managed run ended before its runner did'),
            ),
          );
        return { outputs, run };
      });
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;

/**
 * What the provider says of the instance: `unknown` when the status check itself failed (an error, a
 * timeout), which the watch must never take for a loss.
 */
async function instanceStatus(
  provider: ComputeProvider,
  workflowId: string,
): Promise<'alive' | 'gone' | 'preempted' | 'unknown'> {
  try {
    const instance = await provider.describe(workflowId);
    if (instance === undefined) return 'gone';
    return instance.state === 'preempted' ? 'preempted' : 'alive';
  } catch {
    return 'unknown';
  }
}
