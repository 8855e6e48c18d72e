import type { ExperimentState } from '@assay/client/browser';

export type ExperimentMove = 'commit' | 'conclude' | 'retract';

// Which buttons a state offers; the server decides (a wrong move answers 409, shown as an error). Replace with
// the contract's move table once @assay/contract exports it.
const OFFERED: Record<ExperimentState, ExperimentMove[]> = {
  draft: ['commit'],
  committed: ['conclude', 'retract'],
  concluded: ['retract'],
  retracted: [],
};

export function movesOffered(state: ExperimentState): ExperimentMove[] {
  return OFFERED[state];
}
