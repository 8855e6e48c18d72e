import {
  deploymentTaskQueue,
  type Deployment,
  type ManagedRunRef,
  type Orchestrator,
  type SweepStart,
  type WorkflowState,
} from '../../src/orchestrator/orchestrator.ts';

type Method = Exclude<keyof Orchestrator, 'workflowUrl' | 'useDeployment' | 'deployment'>;

/**
 * A recording Orchestrator for HTTP-contract tests: it remembers every call, and a method put in `failing`
 * throws as an unreachable Temporal would. Tests of the real workflows use a Temporal dev server instead.
 */
export class FakeOrchestrator implements Orchestrator {
  readonly calls: { method: Method; arg: unknown }[] = [];
  /** Methods that throw until removed again. */
  readonly failing = new Set<Method>();
  /** What workflowState answers, by workflow id: a start makes one open; tests close them. */
  readonly workflows = new Map<string, WorkflowState>();
  /** Workflow ids started again with `restartClosed` while their workflow was closed. */
  readonly restarted: string[] = [];
  installationId: string | undefined;
  /** What samplerAvailable answers: whether a search worker polls the search queue. */
  sampler = true;
  readonly uiUrl = 'http://temporal-ui.test';

  #record(method: Method, arg: unknown): void {
    this.calls.push({ method, arg });
    if (this.failing.has(method))
      throw new Error(`fake orchestrator: ${method} fails (Temporal unreachable)`);
  }

  /** The arguments of every call of one method, oldest first. */
  callsOf<T = unknown>(method: Method): T[] {
    return this.calls.filter((c) => c.method === method).map((c) => c.arg as T);
  }

  useDeployment(installationId: string): void {
    this.installationId = installationId;
  }
  async deployment(): Promise<Deployment> {
    return { namespace: 'default', taskQueue: deploymentTaskQueue(this.installationId ?? 'unnamed') };
  }
  async startManagedRun(
    run: ManagedRunRef,
    _labels?: unknown,
    opts: { restartClosed?: boolean } = {},
  ): Promise<void> {
    this.#record('startManagedRun', run);
    const known = this.workflows.get(run.workflowId);
    if (known && !known.open && opts.restartClosed) this.restarted.push(run.workflowId);
    if (!known || (!known.open && opts.restartClosed))
      this.workflows.set(run.workflowId, { open: true, status: 'RUNNING' });
  }
  async workflowState(workflowId: string): Promise<WorkflowState | undefined> {
    this.#record('workflowState', workflowId);
    return this.workflows.get(workflowId);
  }
  async startSweep(sweep: SweepStart): Promise<void> {
    this.#record('startSweep', sweep);
  }
  async samplerAvailable(): Promise<boolean> {
    this.#record('samplerAvailable', undefined);
    return this.sampler;
  }
  async cancelSweep(workflowId: string): Promise<void> {
    this.#record('cancelSweep', workflowId);
  }
  async notifyRunChanged(workflowId: string): Promise<void> {
    this.#record('notifyRunChanged', workflowId);
  }
  workflowUrl(workflowId: string): string | undefined {
    return `${this.uiUrl}/namespaces/default/workflows/${encodeURIComponent(workflowId)}`;
  }
  async close(): Promise<void> {
    this.#record('close', undefined);
  }
}
