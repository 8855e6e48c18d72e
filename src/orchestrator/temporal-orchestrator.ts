// The service's side of Temporal: starts, nudges, queries and cancels workflows through @temporalio/client.
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError, type SearchAttributePair } from '@temporalio/common';
import {
  deploymentTaskQueue,
  type Deployment,
  type ManagedRunRef,
  type Orchestrator,
  type RunLabels,
  type SweepStart,
  type WorkflowState,
} from './orchestrator.ts';
import {
  runChangedSignal,
  runSearchAttributes,
  SEARCH_ATTRIBUTE_DEFINITIONS,
  sweepSearchAttributes,
  workflowMemo,
} from '../../workflows/definitions.ts';
import type { SagaSettings, TrialSweepInput } from '../../workflows/saga-types.ts';
import { searchTaskQueue } from '../../workflows/sweep-types.ts';
import type { TemporalSettings } from './orchestrator-config.ts';

export interface TemporalOrchestratorOptions {
  temporal: TemporalSettings;
  saga: SagaSettings;
  /** An existing client (tests); otherwise one is connected to `temporal.address`. */
  client?: Client;
  log?: { warn(obj: object, msg: string): void };
}

/**
 * One workflow start: its input and its labels, built for a namespace with or without Assay's
 * search attributes.
 */
type StartOf = (indexed: boolean) => {
  args: unknown[];
  typedSearchAttributes: SearchAttributePair[];
  memo: Record<string, unknown>;
};

// temporal.api.enums.v1 TaskQueueKind.TASK_QUEUE_KIND_NORMAL and TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY (the
// proto package is the client's dependency, not ours).
const NORMAL_QUEUE = 1;
const ACTIVITY_QUEUE = 2;

/** Temporal refuses a start that sets a search attribute the namespace does not have. */
function unregisteredAttribute(error: unknown): boolean {
  const text = `${(error as Error)?.message ?? ''} ${(error as { cause?: Error })?.cause?.message ?? ''}`;
  return /search attribute/i.test(text) && /not defined|not registered|unknown|invalid/i.test(text);
}

/** A finished workflow with the same id stays the answer: a run is provisioned once, ever. */
const startOnce = {
  workflowIdConflictPolicy: 'USE_EXISTING',
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
} as const;

const CLOSED = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TERMINATED', 'TIMED_OUT']);

/** An open workflow stays the answer; a closed one (which left its run unconcluded) gets a new execution. */
const startAgain = {
  workflowIdConflictPolicy: 'USE_EXISTING',
  workflowIdReusePolicy: 'ALLOW_DUPLICATE',
} as const;

export class TemporalOrchestrator implements Orchestrator {
  readonly #client: Client;
  readonly #options: TemporalOrchestratorOptions;
  readonly #connection: Connection | undefined;
  /** False once the namespace refused Assay's search attributes: later starts carry the memo only. */
  #indexed = true;
  readonly #taskQueue: Promise<string>;
  #nameDeployment: (installationId: string) => void = () => undefined;

  private constructor(
    client: Client,
    options: TemporalOrchestratorOptions,
    connection: Connection | undefined,
  ) {
    this.#client = client;
    this.#options = options;
    this.#connection = connection;
    const configured = options.temporal.taskQueue;
    this.#taskQueue = configured
      ? Promise.resolve(configured)
      : new Promise((resolve) => {
          this.#nameDeployment = (id) => resolve(deploymentTaskQueue(id));
        });
  }

  useDeployment(installationId: string): void {
    this.#nameDeployment(installationId);
  }

  async deployment(): Promise<Deployment> {
    return { namespace: this.#options.temporal.namespace, taskQueue: await this.#taskQueue };
  }

  static async connect(options: TemporalOrchestratorOptions): Promise<TemporalOrchestrator> {
    if (options.client) return new TemporalOrchestrator(options.client, options, undefined);
    if (!options.temporal.address) throw new Error('TemporalOrchestrator needs a Temporal address');
    // Lazy: the service starts (and serves everything else) while Temporal is still coming up or is down.
    const connection = Connection.lazy({ address: options.temporal.address });
    const client = new Client({ connection, namespace: options.temporal.namespace });
    return new TemporalOrchestrator(client, options, connection);
  }

  async startManagedRun(
    run: ManagedRunRef,
    labels: RunLabels,
    opts: { restartClosed?: boolean } = {},
  ): Promise<void> {
    const policy = opts.restartClosed ? startAgain : startOnce;
    await this.#start('managedRun', run.workflowId, policy, (indexed) => {
      const all = { ...labels, indexed };
      return {
        args: [{ ...run, settings: this.#options.saga, labels: all }],
        typedSearchAttributes: runSearchAttributes(run, all),
        memo: workflowMemo(all),
      };
    });
  }

  async startSweep(sweep: SweepStart): Promise<void> {
    const { workflowId, labels, search, ...rest } = sweep;
    const queue = searchTaskQueue(await this.#taskQueue);
    await this.#start('trialSweep', workflowId, startOnce, (indexed) => {
      const all = { ...labels, indexed };
      const input: TrialSweepInput = {
        ...rest,
        ...(search ? { search: { ...search, queue } } : {}),
        settings: this.#options.saga,
        labels: all,
      };
      return {
        args: [input],
        typedSearchAttributes: sweepSearchAttributes(input, all),
        memo: workflowMemo(all),
      };
    });
  }

  async workflowState(workflowId: string): Promise<WorkflowState | undefined> {
    try {
      const { status } = await this.#client.workflow.getHandle(workflowId).describe();
      return { open: !CLOSED.has(status.name), status: status.name };
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return undefined;
      throw error;
    }
  }

  async samplerAvailable(): Promise<boolean> {
    const { pollers } = await this.#client.workflowService.describeTaskQueue({
      namespace: this.#options.temporal.namespace,
      taskQueue: { name: searchTaskQueue(await this.#taskQueue), kind: NORMAL_QUEUE },
      taskQueueType: ACTIVITY_QUEUE,
    });
    return (pollers ?? []).length > 0;
  }

  async cancelSweep(workflowId: string): Promise<void> {
    await this.#ignoreGone(() => this.#client.workflow.getHandle(workflowId).cancel());
  }

  async notifyRunChanged(workflowId: string): Promise<void> {
    await this.#ignoreGone(() => this.#client.workflow.getHandle(workflowId).signal(runChangedSignal));
  }

  workflowUrl(workflowId: string): string | undefined {
    const ui = this.#options.temporal.uiUrl;
    return ui
      ? `${ui}/namespaces/${encodeURIComponent(this.#options.temporal.namespace)}/workflows/${encodeURIComponent(workflowId)}`
      : undefined;
  }

  async close(): Promise<void> {
    await this.#connection?.close();
  }

  /**
   * Starts once (a repeat finds the same workflow). A namespace without Assay's search attributes degrades to
   * the memo alone, with one warning: they serve operators' filters in the Temporal UI, and a missing
   * registration must not stop managed runs.
   */
  async #start(
    type: string,
    workflowId: string,
    policy: typeof startOnce | typeof startAgain,
    build: StartOf,
  ): Promise<void> {
    const indexed = this.#indexed;
    try {
      await this.#client.workflow.start(type, {
        taskQueue: await this.#taskQueue,
        workflowId,
        ...build(indexed),
        ...policy,
      });
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return;
      if (!indexed || !unregisteredAttribute(error)) throw error;
      if (this.#indexed) {
        this.#indexed = false;
        this.#warn(
          { namespace: this.#options.temporal.namespace, err: error },
          `Temporal namespace ${this.#options.temporal.namespace} lacks Assay's search attributes: workflows start without them (no filtering by experiment or sweep in the Temporal UI). Register them with: ${SEARCH_ATTRIBUTE_DEFINITIONS.map((d) => `temporal operator search-attribute create --namespace ${this.#options.temporal.namespace} --name ${d.split('=')[0]} --type ${d.split('=')[1]}`).join('; ')} (docs/production.md)`,
        );
      }
      await this.#start(type, workflowId, policy, build);
    }
  }

  #warn(obj: object, msg: string): void {
    if (this.#options.log) this.#options.log.warn(obj, msg);
    else process.emitWarning(msg);
  }

  /** A finished or unknown workflow has nothing left to be told. */
  async #ignoreGone(call: () => Promise<unknown>): Promise<void> {
    try {
      await call();
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return;
      throw error;
    }
  }
}
