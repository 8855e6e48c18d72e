// The background heartbeat of `assay run`: keeps the run alive, and hears about cancels should the control
// long-poll (run-control-poll.ts) not get through.
import { ConflictError, type Run } from '../client/index.ts';
import type { CancelReason } from '@assay/contract';

export interface HeartbeatEvents {
  /** The answer said cancel_requested: stop the command, fail the run `abandoned`. */
  onCancel(reason: CancelReason | null | undefined): void;
  /** The run is no longer running (failed by the watchdog, by someone else): stop the command. */
  onEnded(state: string): void;
  /** A heartbeat that did not get through; the next one tries again (the client never retries). */
  onError(error: unknown): void;
}

/**
 * One heartbeat every interval, never two at once: a slow answer delays the next beat instead of piling up.
 */
export class Heartbeat {
  readonly #run: Run;
  readonly #intervalMs: number;
  readonly #events: HeartbeatEvents;
  #timer: NodeJS.Timeout | undefined;
  #inFlight: Promise<void> | undefined;
  #stopped = false;

  constructor(run: Run, intervalMs: number, events: HeartbeatEvents) {
    this.#run = run;
    this.#intervalMs = intervalMs;
    this.#events = events;
  }

  start(): void {
    this.#schedule();
  }

  /**
   * No further beats; resolves once the one in flight is answered, so no beat reaches a run already ended.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#inFlight;
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#inFlight = this.#beat().finally(() => {
        this.#inFlight = undefined;
        this.#schedule();
      });
    }, this.#intervalMs);
  }

  async #beat(): Promise<void> {
    try {
      const answer = await this.#run.heartbeat();
      if (this.#stopped) return;
      if (answer.cancel_requested) this.#events.onCancel(answer.cancel_reason);
      else if (answer.state !== 'running') this.#events.onEnded(answer.state);
    } catch (error) {
      if (this.#stopped) return;
      // 409: heartbeats apply to running runs only, so the run has ended under us.
      if (error instanceof ConflictError) this.#events.onEnded(stateOf(error) ?? 'ended');
      else this.#events.onError(error);
    }
  }
}

function stateOf(error: ConflictError): string | undefined {
  const details = error.details as { state?: unknown } | undefined;
  return typeof details?.state === 'string' ? details.state : undefined;
}
