import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canMoveExperiment, EXPERIMENT_MOVES, RUN_MOVES, TERMINAL_RUN_STATES } from '@assay/contract';

describe('experiment state machine', () => {
  it('allows exactly the moves of the contract table', () => {
    const table: Record<string, string[]> = {
      draft: ['commit'],
      committed: ['conclude', 'retract'],
      concluded: ['retract'],
      retracted: [],
    };
    for (const [state, allowed] of Object.entries(table)) {
      for (const move of Object.keys(EXPERIMENT_MOVES) as (keyof typeof EXPERIMENT_MOVES)[]) {
        assert.equal(
          canMoveExperiment(state as never, move),
          allowed.includes(move),
          `${move} from ${state}`,
        );
      }
    }
  });
});

describe('run state machine', () => {
  it('leads pending → running → succeeded | failed and never out of a terminal state', () => {
    assert.deepEqual(RUN_MOVES.start, { from: ['pending'], to: 'running' });
    assert.deepEqual(RUN_MOVES.succeed, { from: ['running'], to: 'succeeded' });
    assert.deepEqual(RUN_MOVES.fail, { from: ['running'], to: 'failed' });
    assert.deepEqual(
      RUN_MOVES.conclude_failed,
      { from: ['pending', 'running'], to: 'failed' },
      "the orchestrator's fail, before or after start",
    );
    for (const { from } of Object.values(RUN_MOVES)) {
      for (const terminal of TERMINAL_RUN_STATES) assert.ok(!from.includes(terminal));
    }
  });
});
