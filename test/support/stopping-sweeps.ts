// Sweeps that declare an objective and early stopping, for tests and benchmarks of early stopping.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { EarlyStopping, Goal } from '@assay/contract';
import { insertManagedRun } from '../../src/server/orchestration/managed-run-repository.ts';
import { insertSweep } from '../../src/server/sweeps/sweep-repository.ts';
import { addVariation, createExperiment } from './fixtures.ts';
import type { TestService } from './service.ts';

export interface SweepRunRef {
  id: string;
  path: string;
  workflowId: string;
}

/**
 * A committed experiment with `trials` variations whose managed runs (pending, in trial order) belong to a
 * sweep declaring the objective `val_loss` with `goal` and `stopping` (none when null). POST …/sweeps does not take an objective on a grid or
 * list yet, so the sweep row and its runs are inserted with the sweeps repository, as its create path inserts
 * them; everything else goes through the API.
 */
export async function sweepWithStopping(
  t: TestService,
  owner: { id: string; key: string },
  stopping: EarlyStopping | null,
  trials: number,
  goal: Goal = 'minimize',
): Promise<{ sweepId: string; runs: SweepRunRef[] }> {
  const experiment = await createExperiment(t, owner.key, { name: `early stopping ${stopping?.kind}` });
  const list = Array.from({ length: trials }, (_, i) => ({ lr: i + 1 }));
  for (const point of list) await addVariation(t, owner.key, experiment.id, `lr: ${point.lr}\n`);
  assert.equal((await t.as(owner.key).post(`/experiments/${experiment.id}/commit`)).status, 200);
  const id = randomUUID();
  const spec = {
    strategy: 'list',
    list,
    base_yaml: 'lr: 0\n',
    name_prefix: 'sweep',
    objective: { metric: 'val_loss', goal },
    ...(stopping ? { early_stopping: stopping } : {}),
  };
  const runs = await t.service.db.transaction(async (tx) => {
    await insertSweep(tx, {
      id,
      experimentId: experiment.id,
      workflowId: `sweep-${id}`,
      spec,
      concurrency: trials,
      createdBy: owner.id,
    });
    const made = [];
    for (let n = 1; n <= trials; n++) {
      const run = {
        experimentId: experiment.id,
        n,
        provisionedBy: owner.id,
        sweepId: id,
        recoversRunId: null,
      };
      made.push((await insertManagedRun(tx, run))!);
    }
    return made;
  });
  return {
    sweepId: id,
    runs: runs.map((r) => ({
      id: r.id,
      path: `/experiments/${experiment.id}/variations/${r.n}/runs/${r.r}`,
      workflowId: r.workflow_id!,
    })),
  };
}
