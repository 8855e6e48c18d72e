/** The run state machine as data: each move, the states it may start from, and where it leads. */
export type RunState = 'pending' | 'running' | 'succeeded' | 'failed';
export type FailureReason = 'abandoned' | 'crash' | 'heartbeat_timeout' | 'provision_failed';
export type RunMove =
  | 'start'
  | 'heartbeat'
  | 'succeed'
  | 'fail'
  | 'cancel_pending'
  | 'request_cancel'
  | 'time_out'
  | 'conclude_failed';

export const RUN_MOVES: Readonly<Record<RunMove, { from: readonly RunState[]; to: RunState }>> = {
  start: { from: ['pending'], to: 'running' },
  heartbeat: { from: ['running'], to: 'running' },
  succeed: { from: ['running'], to: 'succeeded' },
  fail: { from: ['running'], to: 'failed' },
  // A cancel before the runner started ends the run at once; a running one is asked to stop via its heartbeat.
  cancel_pending: { from: ['pending'], to: 'failed' },
  request_cancel: { from: ['running'], to: 'running' },
  // The watchdog's move, never a caller's.
  time_out: { from: ['running'], to: 'failed' },
  // The orchestrator's: an instance that never came up, a lost one, a runner gone silent; before or after start.
  conclude_failed: { from: ['pending', 'running'], to: 'failed' },
};

/** Reasons a runner may give when it fails its own run. */
export const RUNNER_FAILURE_REASONS = ['abandoned', 'crash'] as const;

/** Reasons the orchestrator may give when it fails a managed run. */
export const ORCHESTRATOR_FAILURE_REASONS = [
  'provision_failed',
  'heartbeat_timeout',
  'abandoned',
  'crash',
] as const;

export const TERMINAL_STATES: readonly RunState[] = ['succeeded', 'failed'];
