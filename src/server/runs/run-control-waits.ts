import { Gauge, type Registry } from 'prom-client';
import type { Db } from '../db/database.ts';
import { RUN_CONTROL_CHANNEL } from './run-repository.ts';

/**
 * Why a wait ended: a notice named the run (or one may have been missed: read it again), time ran out, the
 * waiter let go, or the replica is shutting down.
 */
export type WaitEnd = 'notified' | 'elapsed' | 'cancelled' | 'closing';

/** One wait: registered at once, so a notice that comes while its caller reads the run is not missed. */
export interface Wait {
  readonly ended: Promise<WaitEnd>;
  /** Lets go of the wait (its place counts against `maxWaiting` until then). */
  cancel(): void;
}

/**
 * The control long-polls waiting on this replica, woken by migration 015's notices (any replica's change,
 * any code path's) on one LISTEN session. While that session is down a notice may be lost, so waits then
 * re-read their run every `recheckMs` instead of trusting the silence.
 */
export interface RunControlWaits {
  /**
   * Ends when a notice names the run, after `ms` (sooner, at the next re-check, while not listening), or at
   * shutdown. Undefined when no wait may start: `maxWaiting` are waiting already, or the replica is closing.
   */
  wait(runId: string, ms: number): Wait | undefined;
  /** Ends every wait at once ('closing') and refuses new ones; the HTTP server's shutdown calls it first. */
  close(): Promise<void>;
  readonly waiting: number;
}

export interface RunControlWaitsOptions {
  maxWaiting: number;
  recheckMs?: number;
  /** Where the waits' gauges are exported (`/metrics`). */
  registry?: Registry;
  /** What the waits are for: the control polls (the default), or another channel's (the log follows). */
  subject?: WaitSubject;
}

/** A channel whose notices name a run, and the names and helps of its waits' gauges. */
export interface WaitSubject {
  channel: string;
  waiting: { name: string; help: string };
  listenerUp: { name: string; help: string };
  /** What the warning says is not heard while the LISTEN session is down. */
  changes: string;
}

const CONTROL: WaitSubject = {
  channel: RUN_CONTROL_CHANNEL,
  waiting: {
    name: 'assay_run_control_waiting',
    help: 'Runner control long-polls waiting on this replica (at most ASSAY_RUN_CONTROL_MAX_WAITING)',
  },
  listenerUp: {
    name: 'assay_run_control_listener_up',
    help: 'Whether this replica listens for run control changes (1); while 0 waiting polls re-read their run',
  },
  changes: 'run control changes',
};

export function runControlWaits(
  db: Db,
  options: RunControlWaitsOptions,
  log: { warn(o: object, m: string): void; info(o: object, m: string): void },
): RunControlWaits {
  const recheckMs = options.recheckMs ?? 1000;
  const byRun = new Map<string, Set<(end: WaitEnd) => void>>();
  let waiting = 0;
  let listening = false;
  let closing = false;
  let warned = false;
  const subject = options.subject ?? CONTROL;
  const registers = options.registry ? [options.registry] : [];
  new Gauge({
    ...subject.waiting,
    registers,
    collect() {
      this.set(waiting);
    },
  });
  const listenerUp = new Gauge({
    ...subject.listenerUp,
    // Across the HTTP workers of one server the lowest counts: 0 when any of them is not listening.
    aggregator: 'min',
    registers,
  });

  const wakeAll = (end: WaitEnd) => {
    for (const wakes of byRun.values()) for (const wake of wakes) wake(end);
  };
  const listener = db.listen(subject.channel, {
    onNotify(payload) {
      // One run's id, or several comma-separated (a notice announcing a batch).
      for (const runId of payload.split(',')) for (const wake of byRun.get(runId) ?? []) wake('notified');
    },
    onListening() {
      listening = true;
      listenerUp.set(1);
      // Notices sent while the session was down are gone: every wait re-reads its run.
      wakeAll('notified');
      if (warned) log.info({}, `listening for ${subject.changes} again`);
      warned = false;
    },
    onLost(err) {
      listening = false;
      listenerUp.set(0);
      wakeAll('notified');
      if (!warned)
        log.warn(
          { err },
          `not listening for ${subject.changes}: waiting polls re-read every ${recheckMs} ms`,
        );
      warned = true;
    },
  });

  function wait(runId: string, ms: number): Wait | undefined {
    if (closing || waiting >= options.maxWaiting) return undefined;
    waiting += 1;
    const wakes = byRun.get(runId) ?? new Set();
    byRun.set(runId, wakes);
    let end!: (how: WaitEnd) => void;
    const ended = new Promise<WaitEnd>((resolve) => {
      end = (how) => {
        if (!wakes.delete(end)) return;
        if (wakes.size === 0) byRun.delete(runId);
        waiting -= 1;
        clearTimeout(timer);
        resolve(how);
      };
    });
    wakes.add(end);
    const timer = listening
      ? setTimeout(() => end('elapsed'), ms)
      : setTimeout(() => end(ms <= recheckMs ? 'elapsed' : 'notified'), Math.min(ms, recheckMs));
    return { ended, cancel: () => end('cancelled') };
  }

  return {
    wait,
    async close() {
      closing = true;
      wakeAll('closing');
      await listener.close();
    },
    get waiting() {
      return waiting;
    },
  };
}
