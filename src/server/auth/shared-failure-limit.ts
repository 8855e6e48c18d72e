import cluster from 'node:cluster';
import { isMessage, toPrimary } from '../http/worker-messages.ts';
import type { FailureLimit } from './auth-failure-limit.ts';

/**
 * In an HTTP worker of `assay server --workers N`, a failure limit that also counts the failures the other
 * workers saw (the primary relays each one), so one address gets ASSAY_AUTH_FAILURE_LIMIT failures a minute
 * from the whole server, not from each worker its connections happen to reach. Elsewhere, `limit` itself.
 */
export function sharedAcrossWorkers(limit: FailureLimit): FailureLimit {
  if (!cluster.isWorker) return limit;
  process.on('message', (message) => {
    if (isMessage(message, 'auth-failure')) limit.recordFailure(message.address);
  });
  return {
    retryAfterSeconds: (address, now) => limit.retryAfterSeconds(address, now),
    recordFailure(address, now) {
      limit.recordFailure(address, now);
      toPrimary({ assay: 'auth-failure', address });
    },
  };
}
