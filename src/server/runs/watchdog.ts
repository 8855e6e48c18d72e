import { ping, type Db } from '../db/database.ts';
import { noRunEvents, type RunEvents } from './run-events.ts';
import { failSilentRuns } from './run-repository.ts';

export interface Watchdog {
  /** One pass; returns how many runs it failed. */
  sweep(): Promise<number>;
  /** No further passes; resolves once a pass in progress has ended, so the database can close under none. */
  stop(): Promise<void>;
}

type Log = Record<'debug' | 'info' | 'warn', (o: object, m: string) => void>;

/**
 * Fails runs that stopped heartbeating, and tells managed runs' workflows. Every replica runs one; the
 * statement itself makes that safe.
 */
export function startWatchdog(
  db: Db,
  opts: { timeoutMs: number; intervalMs: number },
  log: Log,
  events: RunEvents = noRunEvents,
): Watchdog {
  let running: Promise<number> | undefined;
  // A runner cannot heartbeat while this service or its database is down, so silence counts only from when
  // both were last seen up: for a whole timeout after the start, or after the database last failed it, the
  // watchdog only probes.
  let countingSince = Date.now();
  const sweep = async () => {
    const failed = await failSilentRuns(db, opts.timeoutMs);
    if (failed.length > 0)
      log.info(
        { runs: failed.map((r) => r.id) },
        `watchdog failed ${failed.length} silent run(s) with heartbeat_timeout`,
      );
    for (const run of failed) events.changed(run.workflow_id, log);
    return failed.length;
  };
  const timer = setInterval(() => {
    if (running) return;
    const pass = Date.now() - countingSince < opts.timeoutMs ? ping(db).then(() => 0) : sweep();
    running = pass
      .catch((err: unknown) => {
        countingSince = Date.now();
        log.warn({ err }, 'watchdog pass failed; will retry');
        return 0;
      })
      .finally(() => {
        running = undefined;
      });
  }, opts.intervalMs);
  timer.unref();
  return {
    sweep,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
