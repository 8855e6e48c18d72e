// The saga's activity proxies, one per kind of call: their timeouts and retries differ.
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.ts';
import type { SagaSettings } from '../saga-types.ts';

// Short, idempotent service calls: local activities, ≈7× cheaper a step than regular ones.
// They retry without end: a service that is down for a while delays the saga but loses nothing.
export const service = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});

// Compute calls: their own timeouts, and retried on another worker if this one dies (noticed by the missing
// heartbeats within seconds, not at the end of the start-to-close timeout).
export const compute = proxyActivities<Activities>({
  startToCloseTimeout: '5m',
  heartbeatTimeout: '10s',
  retry: {
    initialInterval: '2s',
    backoffCoefficient: 2,
    maximumInterval: '1m',
    maximumAttempts: 8,
    nonRetryableErrorTypes: ['LaunchConfigError'],
  },
});

// Cleanup must eventually succeed, or an instance would leak: no attempt limit.
export const cleanup = proxyActivities<Activities>({
  startToCloseTimeout: '5m',
  heartbeatTimeout: '10s',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m' },
});

/** The watch activity's proxy: its timeouts follow the run's settings. */
export function watcherFor(settings: SagaSettings) {
  return proxyActivities<Activities>({
    startToCloseTimeout: settings.watchSliceMs + 5 * 60_000,
    // Heartbeats are how a dead worker is noticed and how cancellation reaches the activity.
    heartbeatTimeout: Math.max(4 * settings.pollMs, 10_000),
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
  });
}
