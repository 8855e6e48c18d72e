/** PostgreSQL's SQLSTATE for a transaction it rolled back to break a deadlock. */
const DEADLOCK_DETECTED = '40P01';
const ATTEMPTS = 5;

/**
 * Runs `work` again when PostgreSQL broke a deadlock by rolling it back (the whole statement or transaction
 * undone, so trying again is safe for work that stores idempotently). Concurrent batches of one run lock
 * the same rows in orders no single statement can fix; one of them loses and is simply tried again.
 */
export async function retryingDeadlocks<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= ATTEMPTS || (err as { code?: unknown }).code !== DEADLOCK_DETECTED) throw err;
    }
  }
}
