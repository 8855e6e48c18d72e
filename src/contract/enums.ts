// The contract's enums and state tables as plain values, apart from the TypeBox schemas that are built from
// them: the web UI imports this entry (`@assay/contract/enums`) so that its first page does not load TypeBox
// and build every schema just to read a list of states.

export const EXPERIMENT_STATES = ['draft', 'committed', 'concluded', 'retracted'] as const;
export type ExperimentState = (typeof EXPERIMENT_STATES)[number];
export type ExperimentMove = 'commit' | 'conclude' | 'retract';

/** The experiment state machine as data: which move leads from which states to which, and what it stamps. */
export const EXPERIMENT_MOVES: Readonly<
  Record<
    ExperimentMove,
    {
      from: readonly ExperimentState[];
      to: ExperimentState;
      stamp: 'committed_at' | 'concluded_at' | 'retracted_at';
    }
  >
> = {
  commit: { from: ['draft'], to: 'committed', stamp: 'committed_at' },
  conclude: { from: ['committed'], to: 'concluded', stamp: 'concluded_at' },
  retract: { from: ['committed', 'concluded'], to: 'retracted', stamp: 'retracted_at' },
};

/** Whether the move applies to an experiment in this state (a UI enables its buttons by it). */
export function canMoveExperiment(state: ExperimentState, move: ExperimentMove): boolean {
  return EXPERIMENT_MOVES[move].from.includes(state);
}

export const RUN_STATES = ['pending', 'running', 'succeeded', 'failed'] as const;
export type RunState = (typeof RUN_STATES)[number];

/** States a run never leaves. */
export const TERMINAL_RUN_STATES: readonly RunState[] = ['succeeded', 'failed'];
export const isTerminalRunState = (state: string): boolean =>
  (TERMINAL_RUN_STATES as readonly string[]).includes(state);

/** A pending asset takes uploads; a ready one is immutable. */
export const ASSET_STATES = ['pending', 'ready'] as const;
export type AssetState = (typeof ASSET_STATES)[number];

/**
 * Kinds with a meaning to the service (documents and papers are indexed for search); others are free-form.
 */
export const ASSET_KINDS = ['report', 'environment', 'paper', 'document', 'output', 'checkpoint'] as const;
/** The kinds whose text the service extracts and indexes for full-text search. */
export const SEARCHABLE_ASSET_KINDS = ['report', 'document', 'paper'] as const;

/**
 * What a key may do. A key never holds a scope its owner lacks, and a minted key never exceeds its minter.
 */
export const SCOPES = [
  'experiments:read',
  'experiments:write',
  'runs:read',
  'runs:write',
  'assets:read',
  'assets:write',
  'search:read',
  'api_keys:write',
  'organizations:write',
  'admin',
  'orchestrate',
] as const;
export type Scope = (typeof SCOPES)[number];

export const ORGANIZATION_ROLES = ['owner', 'member'] as const;
export type OrganizationRole = (typeof ORGANIZATION_ROLES)[number];

export const GOALS = ['minimize', 'maximize'] as const;
export type Goal = (typeof GOALS)[number];

export const SEARCH_STRATEGIES = ['random', 'sobol', 'tpe'] as const;
export type SearchStrategy = (typeof SEARCH_STRATEGIES)[number];

/** The early-stopping kinds; sweeps.ts gives each its schema (`EARLY_STOPPING_KINDS`). */
export const EARLY_STOPPING_KIND_NAMES = ['asha', 'hyperband', 'median'] as const;
export type EarlyStoppingKind = (typeof EARLY_STOPPING_KIND_NAMES)[number];
