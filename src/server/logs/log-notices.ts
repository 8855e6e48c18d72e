import type { Db } from '../db/database.ts';
import { announceStored } from './run-log-repository.ts';

/** Run ids a notice carries at most: 36 characters and a comma each, well inside NOTIFY's 8,000 bytes. */
const IDS_PER_NOTICE = 150;

/**
 * Announces stored chunks to every replica's log follows, the runs stored within `windowMs` in one notice:
 * a follow wakes a few milliseconds later, and the service sends tens of small notices a second instead of
 * one per chunk. A notice that fails is logged; a follow then answers at its `wait_s` (or at the re-check of
 * a replica not listening).
 */
export function logNotices(db: Db, log: { warn(o: object, m: string): void }, windowMs = 10) {
  let pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let sending = Promise.resolve();
  const flush = () => {
    timer = undefined;
    const ids = [...pending];
    pending = new Set();
    sending = sending.then(async () => {
      for (let i = 0; i < ids.length; i += IDS_PER_NOTICE)
        await announceStored(db, ids.slice(i, i + IDS_PER_NOTICE)).catch((err: unknown) =>
          log.warn({ err }, 'could not announce stored log chunks'),
        );
    });
  };
  return {
    stored(runId: string): void {
      pending.add(runId);
      timer ??= setTimeout(flush, windowMs);
    },
    /** Sends what is pending now; before the database closes. */
    async close(): Promise<void> {
      if (timer) {
        clearTimeout(timer);
        flush();
      }
      await sending;
    },
  };
}

export type LogNotices = ReturnType<typeof logNotices>;
