/** The experiment state machine as data: which move leads from which states to which, and what it stamps. */
export type ExperimentState = 'draft' | 'committed' | 'concluded' | 'retracted';
export type ExperimentMove = 'commit' | 'conclude' | 'retract';

export const EXPERIMENT_MOVES: Readonly<
  Record<ExperimentMove, { from: readonly ExperimentState[]; to: ExperimentState; stamp: string }>
> = {
  commit: { from: ['draft'], to: 'committed', stamp: 'committed_at' },
  conclude: { from: ['committed'], to: 'concluded', stamp: 'concluded_at' },
  retract: { from: ['committed', 'concluded'], to: 'retracted', stamp: 'retracted_at' },
};

/** Variations may be added or edited only while the experiment is a draft. */
export const EDITABLE_STATES: readonly ExperimentState[] = ['draft'];
/** New runs only once committed and until concluded. */
export const RUNNABLE_STATES: readonly ExperimentState[] = ['committed'];

export function canMove(state: ExperimentState, move: ExperimentMove): boolean {
  return EXPERIMENT_MOVES[move].from.includes(state);
}
