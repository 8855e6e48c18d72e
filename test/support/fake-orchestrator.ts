import type {
  ManagedRunRef,
  Orchestrator,
  SweepProgress,
  SweepStart,
} from '../../src/orchestrator/orchestrator.ts';

type Method = Exclude<keyof Orchestrator, 'workflowUrl'>;

/**
 * A recording Orchestrator for HTTP-contract tests: it remembers every call, and a method put in `failing`
 * throws as an unreachable Temporal would. Tests of the real workflows use a Temporal dev server instead.
 */
export class FakeOrchestrator implements Orchestrator {
  readonly calls: { method: Method; arg: unknown }[] = [];
  /** Methods that throw until removed again. */
  readonly failing = new Set<Method>();
  /** What sweepProgress answers. */
  progress: SweepProgress | undefined = {
    total: 0,
    pending: 0,
    running: 0,
    succeeded: 0,
    failed: 0,
    done: false,
  };
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

  async startManagedRun(run: ManagedRunRef): Promise<void> {
    this.#record('startManagedRun', run);
  }
  async startSweep(sweep: SweepStart): Promise<void> {
    this.#record('startSweep', sweep);
  }
  async sweepProgress(workflowId: string): Promise<SweepProgress | undefined> {
    this.#record('sweepProgress', workflowId);
    return this.progress;
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
