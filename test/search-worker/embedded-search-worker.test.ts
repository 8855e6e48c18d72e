// The embedded default runs the Python search worker beside its in-process worker: Temporal sees it poll the
// deployment's search queue, it comes back after a kill -9, and it is gone once the service is (stopped or
// killed).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { searchTaskQueue } from '../../workflows/sweep-types.ts';
import { startAssayServer, type AssayServer } from '../support/assay-server.ts';
import { eventually, within } from '../support/bounded-waits.ts';

/** The pids of search workers polling `queue`, from the kernel's process table. */
function searchWorkerPids(queue: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // gone meanwhile
    }
    const at = argv.indexOf('--task-queue');
    if (argv.includes('assay_search_worker') && argv[at + 1] === queue) pids.push(Number(entry));
  }
  return pids;
}

/** The JSON log lines of the service with this message. */
function logged(server: AssayServer, msg: string): Record<string, unknown>[] {
  return server.process
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry.msg === msg);
}

/** `eventually`, failing with the tail of the service's log. */
async function waitFor(server: AssayServer, probe: () => Promise<boolean>, ms: number, what: string) {
  await eventually(probe, ms, what).catch((error: Error) => {
    throw new Error(`${error.message}; the service's log:\n${server.process.output().slice(-4000)}`);
  });
}

async function startEmbedded(
  dataDir: string,
): Promise<{ server: AssayServer; address: string; queue: string }> {
  const server = await startAssayServer({ ASSAY_DATA_DIR: dataDir });
  // The worker starts once the service answers, a moment after it is ready.
  const running = 'in-process Temporal worker running';
  await waitFor(server, async () => logged(server, running).length > 0, 60_000, running);
  const address = String(logged(server, 'Temporal dev server ready')[0]?.address);
  const deploymentQueue = String(logged(server, 'in-process Temporal worker running')[0]?.taskQueue);
  return { server, address, queue: searchTaskQueue(deploymentQueue) };
}

const { TaskQueueKind, TaskQueueType } = proto.temporal.api.enums.v1;

/** Identities of the activity pollers Temporal has seen on `queue` lately (Python's are `<pid>@<host>`). */
async function pollers(connection: Connection, queue: string): Promise<string[]> {
  const described = await connection.workflowService.describeTaskQueue({
    namespace: 'default',
    taskQueue: { name: queue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
  });
  return (described.pollers ?? []).map((poller) => poller.identity ?? '');
}

describe('the embedded search worker', () => {
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'assay-search-worker-'));
  });
  after(() => rm(dataDir, { recursive: true, force: true }));

  test('polls the search queue, is restarted after a kill -9, and leaves no process once the service stops', async () => {
    const { server, address, queue } = await startEmbedded(path.join(dataDir, 'stop'));
    const connection = await Connection.connect({ address });
    try {
      assert.equal(queue.endsWith('-search'), true);
      await waitFor(
        server,
        async () => searchWorkerPids(queue).length === 1,
        30_000,
        'one search worker process',
      );
      const [first] = searchWorkerPids(queue);
      await waitFor(
        server,
        async () => (await pollers(connection, queue)).some((id) => id.startsWith(`${first}@`)),
        60_000,
        `search worker ${first} polling ${queue}`,
      );

      process.kill(first!, 'SIGKILL');
      await waitFor(
        server,
        async () => searchWorkerPids(queue).some((pid) => pid !== first),
        30_000,
        'a new search worker after the kill',
      );
      const [second] = searchWorkerPids(queue);
      await waitFor(
        server,
        async () => (await pollers(connection, queue)).some((id) => id.startsWith(`${second}@`)),
        60_000,
        `restarted search worker ${second} polling ${queue}`,
      );
      assert.ok(
        logged(
          server,
          'search worker exited; restarting it (random, sobol and tpe sweeps wait for it meanwhile)',
        ).length > 0,
      );

      process.kill(server.process.pid, 'SIGTERM');
      assert.equal(await within(server.process.exited, 45_000, 'service shutdown'), 'exited with code 0');
      assert.deepEqual(searchWorkerPids(queue), [], 'a search worker outlived the service');
    } finally {
      await connection.close();
      await server.stop();
    }
  });

  test('exits by itself when the service is killed with SIGKILL', async () => {
    const { server, queue } = await startEmbedded(path.join(dataDir, 'kill'));
    try {
      await waitFor(
        server,
        async () => searchWorkerPids(queue).length === 1,
        30_000,
        'one search worker process',
      );
      process.kill(server.process.pid, 'SIGKILL');
      await waitFor(
        server,
        async () => searchWorkerPids(queue).length === 0,
        15_000,
        'the orphaned search worker exiting',
      );
    } finally {
      await server.stop();
    }
  });
});
