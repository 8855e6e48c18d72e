// The Python search worker (search-worker/, Optuna and SciPy) for a test's Temporal and task queue: started
// as the operator starts it, stopped (or killed) by the test.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { searchTaskQueue } from '../../workflows/sweep-types.ts';
import { eventually } from './bounded-waits.ts';
import { spawnProcessGroup, type ProcessGroup } from './process-group.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');

/** The interpreter with the worker's dependencies: ASSAY_SEARCH_PYTHON, the repo's .venv-search, or /tmp's. */
export function searchPython(): string {
  if (process.env.ASSAY_SEARCH_PYTHON) return process.env.ASSAY_SEARCH_PYTHON;
  // scripts/setup-search-worker.sh makes it; until then, the machine's prepared one.
  const venv = path.join(repoRoot, '.venv-search/bin/python');
  return existsSync(venv) ? venv : '/tmp/optvenv/bin/python';
}

/**
 * Starts `python -m assay_search_worker` on the deployment queue's search queue and waits until it polls
 * (its start line); `stop()` ends it.
 */
export async function startSearchWorker(temporal: {
  address: string;
  namespace?: string;
  taskQueue: string;
}): Promise<ProcessGroup> {
  const queue = searchTaskQueue(temporal.taskQueue);
  const worker = spawnProcessGroup(
    searchPython(),
    [
      '-m',
      'assay_search_worker',
      '--address',
      temporal.address,
      '--namespace',
      temporal.namespace ?? 'default',
      '--task-queue',
      queue,
    ],
    {
      name: 'assay search worker',
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        PYTHONPATH: path.join(repoRoot, 'search-worker'),
      },
      stopGraceMs: 2_000,
    },
  );
  await eventually(
    async () => {
      if (!worker.isRunning()) throw new Error(`the search worker exited: ${worker.output()}`);
      return worker.output().includes('polling');
    },
    60_000,
    'the search worker polling',
  );
  return worker;
}
