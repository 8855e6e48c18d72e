// The service's handle on the search worker process, with stand-in programs for Python: a worker that dies is
// restarted (each exit logged), stop() ends one that ignores SIGTERM, and no Python means no worker, said once.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  startEmbeddedSearchWorker,
  startSearchWorker,
  type SearchWorkerOptions,
} from '../../src/orchestrator/search-worker-process.ts';
import { eventually } from '../support/bounded-waits.ts';

interface Entry {
  level: 'info' | 'warn';
  fields: Record<string, unknown>;
  msg: string;
}

function recordingLog() {
  const entries: Entry[] = [];
  return {
    entries,
    info: (fields: object, msg: string) => entries.push({ level: 'info', fields: { ...fields }, msg }),
    warn: (fields: object, msg: string) => entries.push({ level: 'warn', fields: { ...fields }, msg }),
  };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('the search worker process', () => {
  let dir: string;
  const script = async (name: string, body: string) => {
    const file = path.join(dir, name);
    await writeFile(file, `#!/bin/sh\n${body}\n`);
    await chmod(file, 0o755);
    return file;
  };
  const options = (python: string, log: ReturnType<typeof recordingLog>): SearchWorkerOptions => ({
    python,
    packageDir: dir,
    address: '127.0.0.1:1',
    namespace: 'default',
    taskQueue: 'q-search',
    log,
    restartDelaysMs: [20, 40],
    stopGraceMs: 300,
  });
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'assay-search-process-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test('a worker that keeps dying is restarted, its output and every exit logged, until stop()', async () => {
    const python = await script('dies.sh', 'echo "started with $*"; echo "no module" >&2; exit 3');
    const log = recordingLog();
    const worker = startSearchWorker(options(python, log));
    const exits = () => log.entries.filter((e) => e.msg.startsWith('search worker exited'));
    await eventually(async () => exits().length >= 3, 30_000, 'three restarts');
    await worker.stop();
    const after = exits().length;
    assert.deepEqual(
      exits().map((e) => e.fields.code),
      Array(after).fill(3),
    );
    // Restarts back off: the delays grow to the last one and stay there.
    assert.deepEqual(
      exits()
        .slice(0, 3)
        .map((e) => e.fields.restartInMs),
      [20, 40, 40],
    );
    const out = log.entries.find((e) => e.level === 'info' && e.msg.startsWith('started with'));
    assert.match(
      out!.msg,
      /-m assay_search_worker --address 127\.0\.0\.1:1 --namespace default --task-queue q-search --parent-pid \d+/,
    );
    assert.ok(log.entries.some((e) => e.level === 'warn' && e.msg === 'no module'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(exits().length, after, 'restarted after stop()');
    assert.equal(worker.pid(), undefined);
  });

  test('stop() kills a worker that ignores SIGTERM, and what it started', async () => {
    const python = await script('stubborn.sh', "trap '' TERM; echo ready; while :; do sleep 0.05; done");
    const log = recordingLog();
    const worker = startSearchWorker(options(python, log));
    await eventually(async () => log.entries.some((e) => e.msg === 'ready'), 30_000, 'the worker running');
    const pid = worker.pid()!;
    await worker.stop();
    assert.equal(alive(pid), false);
    // What it started dies with it (the kernel reaps the last of the group a moment later).
    await eventually(async () => !alive(-pid), 5_000, 'its process group gone');
    assert.equal(log.entries.filter((e) => e.msg.startsWith('search worker exited')).length, 0);
  });

  test('the worker gets none of the service environment but PATH and the like', async () => {
    const python = await script('env.sh', 'echo "secret=${DATABASE_URL:-none} path=${PYTHONPATH}"; sleep 5');
    process.env.DATABASE_URL = 'postgres://user:hunter2@db/assay';
    const log = recordingLog();
    const worker = startSearchWorker(options(python, log));
    try {
      await eventually(
        async () => log.entries.some((e) => e.msg.startsWith('secret=')),
        30_000,
        'its output',
      );
      assert.ok(log.entries.some((e) => e.msg === `secret=none path=${dir}`));
    } finally {
      delete process.env.DATABASE_URL;
      await worker.stop();
    }
  });

  test('without a Python to run it, the embedded default starts none and says how to get one', () => {
    const log = recordingLog();
    const worker = startEmbeddedSearchWorker(
      { python: path.join(dir, 'no-such-python') },
      { address: '127.0.0.1:1', namespace: 'default', deploymentQueue: 'q', log },
    );
    assert.equal(worker, undefined);
    assert.equal(log.entries.length, 1);
    assert.match(
      log.entries[0]!.msg,
      /sweeps are off: no Python .*setup-search-worker\.sh.*ASSAY_SEARCH_PYTHON/,
    );
  });
});
