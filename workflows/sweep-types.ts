// The shapes a searching sweep sends its sampler: the activity the Python search worker serves
// (search-worker/, on the deployment's `<task queue>-search` queue). Stateless by design: every call carries
// the trials so far, so a suggestion is reproducible from the workflow's history alone.
import type { Goal, SearchSpace, SearchStrategy } from '@assay/contract';

/** The activity's registered name, the same in Python and TypeScript. */
export const SUGGEST_ACTIVITY = 'suggest_trial';

/** The search worker's task queue: the deployment's own, so no other deployment's sampler answers. */
export const searchTaskQueue = (deploymentQueue: string) => `${deploymentQueue}-search`;

/** A trial as the sampler sees it: Optuna's COMPLETE, PRUNED, FAIL or RUNNING. */
export interface TrialRecord {
  trial: number;
  params: Record<string, unknown>;
  state: 'complete' | 'pruned' | 'failed' | 'running';
  /** The objective's last value (complete), or the last intermediate one (pruned); null when none. */
  value: number | null;
  /** The objective by step, for TPE's ordering of pruned trials; may be empty. */
  intermediate: [step: number, value: number][];
}

export interface SuggestInput {
  strategy: SearchStrategy;
  space: SearchSpace;
  goal: Goal;
  seed: number;
  /** The 1-based number of the trial to suggest. */
  trial: number;
  /** Every earlier trial, in trial order. */
  history: TrialRecord[];
}

/** dotted path → value, one per key of the space. */
export interface Suggestion {
  params: Record<string, unknown>;
}

/** What a searching sweep asks its sampler, fixed at the sweep's start. */
export interface SearchPlan {
  strategy: SearchStrategy;
  space: SearchSpace;
  goal: Goal;
  seed: number;
  /** How many trials the sweep makes. */
  trials: number;
  /** The sampler's task queue (searchTaskQueue of the deployment's). */
  queue: string;
}
