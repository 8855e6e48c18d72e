import type { RunData } from '@assay/client/browser';

/**
 * How often a runs query refreshes. Polling, not server-sent events: the API has no push channel, and an
 * EventSource cannot send the Authorization header (the credential would have to travel in a URL). Every 2 s
 * while a run is pending or running, so a state change shows within 2 s; slowly once all have ended, so runs
 * started elsewhere (the CLI, a sweep) still appear.
 */
export function runsRefetchInterval(runs: RunData[] | undefined): number {
  return runs?.some((r) => r.state === 'pending' || r.state === 'running') ? 2_000 : 15_000;
}
