// The control long-poll of `assay run`: one request always open while the command runs, so a cancel (a
// person's, a sweep's, an early stop) reaches the command within a round trip instead of at the next heartbeat.
import { APIConnectionError, ServerError, type Run } from '../client/index.ts';
import type { CancelReason } from '@assay/contract';

export interface ControlEvents {
  /** The run was asked to stop: stop the command, fail the run `abandoned`. */
  onCancel(reason: CancelReason | null): void;
  /** The run is no longer running (failed by the watchdog, by someone else): stop the command. */
  onEnded(state: string): void;
  /** A poll that did not get through; `retrying` false when polling stops (the heartbeat still hears cancels). */
  onError(error: unknown, retrying: boolean): void;
}

/** How long each poll waits on the service; under the service's and proxies' usual 60 s idle limits. */
const WAIT_S = 25;
const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 5000;

/**
 * Polls until the run must stop or `stop()`. An answer that came back early with nothing to do (the replica at
 * its cap of waiting polls, or shutting down) and a failed poll are followed by a pause, never a busy loop.
 */
export class ControlPoll {
  readonly #run: Run;
  readonly #events: ControlEvents;
  readonly #abort = new AbortController();
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;

  constructor(run: Run, events: ControlEvents) {
    this.#run = run;
    this.#events = events;
  }

  start(): void {
    this.#loop ??= this.#poll();
  }

  /** Abandons the poll in flight; resolves once the loop has ended. */
  async stop(): Promise<void> {
    this.#abort.abort();
    this.#wake?.();
    await this.#loop;
  }

  get #stopped(): boolean {
    return this.#abort.signal.aborted;
  }

  async #poll(): Promise<void> {
    let delayMs = RETRY_MIN_MS;
    let failing = false;
    while (!this.#stopped) {
      const began = Date.now();
      try {
        const answer = await this.#run.control({ waitS: WAIT_S, signal: this.#abort.signal });
        if (this.#stopped) return;
        if (answer.cancel_requested) return this.#events.onCancel(answer.cancel_reason);
        if (answer.state !== 'running') return this.#events.onEnded(answer.state);
        failing = false;
        delayMs = RETRY_MIN_MS;
        if (Date.now() - began < (WAIT_S * 1000) / 2) await this.#pause(RETRY_MAX_MS / 5);
      } catch (error) {
        if (this.#stopped) return;
        // A 4xx (a service without the endpoint, a key refused) will not change by asking again.
        const transient = error instanceof APIConnectionError || error instanceof ServerError;
        if (!transient) return this.#events.onError(error, false);
        if (!failing) this.#events.onError(error, true);
        failing = true;
        await this.#pause(delayMs);
        delayMs = Math.min(delayMs * 2, RETRY_MAX_MS);
      }
    }
  }

  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    });
  }
}
