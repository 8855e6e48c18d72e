// The trial sweep's activity proxies: the service's calls (local, retried without end) and the sampler's
// (a regular activity on the search queue, served by the Python search worker).
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.ts';
import { SUGGEST_ACTIVITY, type SuggestInput, type Suggestion } from '../sweep-types.ts';

// Idempotent service calls keyed by sweep and trial or by run: a repeat finds what the first call made.
export const service = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});

/**
 * The sampler on its queue. A suggestion is an activity result, so a replay reads it from history and never
 * asks again. While no search worker polls, the task waits on the queue (no timeout): the sweep resumes when
 * one comes back. A request the sampler refuses (a Python error of the input's making) is not retried.
 */
export function samplerOn(queue: string) {
  const proxy = proxyActivities<
    Record<typeof SUGGEST_ACTIVITY, (input: SuggestInput) => Promise<Suggestion>>
  >({
    taskQueue: queue,
    startToCloseTimeout: '5m',
    retry: {
      initialInterval: '1s',
      backoffCoefficient: 2,
      maximumInterval: '30s',
      nonRetryableErrorTypes: ['ValueError', 'KeyError', 'TypeError'],
    },
  });
  return proxy[SUGGEST_ACTIVITY];
}
