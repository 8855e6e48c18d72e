import { LRUCache } from 'lru-cache';

/**
 * Failed authentications per client address, counted in fixed windows. Only failures count, so any number of
 * clients with valid keys behind one address never trip it. Bounded like the auth cache: an attacker rotating
 * addresses evicts old windows instead of growing memory.
 */
export interface FailureLimit {
  /** Seconds until the address may try again; undefined while it is under the limit. */
  retryAfterSeconds(address: string, now?: number): number | undefined;
  recordFailure(address: string, now?: number): void;
}

export function createFailureLimit(opts: {
  maxFailures: number;
  windowMs: number;
  maxAddresses: number;
}): FailureLimit {
  const windows = new LRUCache<string, { start: number; failures: number }>({ max: opts.maxAddresses });
  const current = (address: string, now: number) => {
    const w = windows.get(address);
    return w && now - w.start < opts.windowMs ? w : undefined;
  };
  return {
    retryAfterSeconds(address, now = Date.now()) {
      if (opts.maxFailures === 0) return undefined;
      const w = current(address, now);
      if (!w || w.failures < opts.maxFailures) return undefined;
      return Math.max(1, Math.ceil((w.start + opts.windowMs - now) / 1000));
    },
    recordFailure(address, now = Date.now()) {
      if (opts.maxFailures === 0) return;
      const w = current(address, now);
      if (w) w.failures++;
      else windows.set(address, { start: now, failures: 1 });
    },
  };
}
