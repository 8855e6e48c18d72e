import { canMoveExperiment, type ExperimentMove, type ExperimentState } from '@assay/contract/enums';

export type { ExperimentMove };

const MOVES: readonly ExperimentMove[] = ['commit', 'conclude', 'retract'];

// Which buttons a state offers, from the contract's move table; the server still decides (a wrong move
// answers 409, shown as an error).
export function movesOffered(state: ExperimentState): ExperimentMove[] {
  return MOVES.filter((move) => canMoveExperiment(state, move));
}
