// The service's side of Temporal: starts, nudges, queries and cancels workflows through @temporalio/client.
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { ManagedRunRef, Orchestrator, SweepProgress, SweepStart } from './orchestrator.ts';
import { progressQuery, runChangedSignal } from '../../workflows/definitions.ts';
import type { SagaSettings } from '../../workflows/saga-types.ts';
import type { TemporalSettings } from './orchestrator-config.ts';

export interface TemporalOrchestratorOptions {
  temporal: TemporalSettings;
  saga: SagaSettings;
  /** An existing client (tests); otherwise one is connected to `temporal.address`. */
  client?: Client;
}

/** A finished workflow with the same id stays the answer: a run is provisioned once, ever. */
const startOnce = {
  workflowIdConflictPolicy: 'USE_EXISTING',
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
} as const;

export class TemporalOrchestrator implements Orchestrator {
  readonly #client: Client;
  readonly #options: TemporalOrchestratorOptions;
  readonly #connection: Connection | undefined;

  private constructor(
    client: Client,
    options: TemporalOrchestratorOptions,
    connection: Connection | undefined,
  ) {
    this.#client = client;
    this.#options = options;
    this.#connection = connection;
  }

  static async connect(options: TemporalOrchestratorOptions): Promise<TemporalOrchestrator> {
    if (options.client) return new TemporalOrchestrator(options.client, options, undefined);
    if (!options.temporal.address) throw new Error('TemporalOrchestrator needs a Temporal address');
    // Lazy: the service starts (and serves everything else) while Temporal is still coming up or is down.
    const connection = Connection.lazy({ address: options.temporal.address });
    const client = new Client({ connection, namespace: options.temporal.namespace });
    return new TemporalOrchestrator(client, options, connection);
  }

  async startManagedRun(run: ManagedRunRef): Promise<void> {
    await this.#start('managedRun', run.workflowId, [{ ...run, settings: this.#options.saga }]);
  }

  async startSweep(sweep: SweepStart): Promise<void> {
    const { workflowId, ...input } = sweep;
    await this.#start('variationSweep', workflowId, [{ ...input, settings: this.#options.saga }]);
  }

  async sweepProgress(workflowId: string): Promise<SweepProgress | undefined> {
    try {
      return await this.#client.workflow.getHandle(workflowId).query(progressQuery);
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return undefined;
      throw error;
    }
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

  async #start(type: string, workflowId: string, args: unknown[]): Promise<void> {
    try {
      await this.#client.workflow.start(type, {
        taskQueue: this.#options.temporal.taskQueue,
        workflowId,
        args,
        ...startOnce,
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
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
