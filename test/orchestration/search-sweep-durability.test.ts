// A searching sweep survives kill -9 of the service, the Temporal server, the Temporal worker and the search
// worker mid-sweep: restarted, it finishes with exactly the declared trials, none started twice, the
// suggestions unchanged.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { stringify } from 'yaml';
import { generateOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { startAssayServer, type AssayServer } from '../support/assay-server.ts';
import { eventually } from '../support/bounded-waits.ts';
import { createTestDatabase } from '../support/postgres.ts';
import { spawnProcessGroup, type ProcessGroup } from '../support/process-group.ts';
import { startSearchWorker } from '../support/search-worker.ts';
import { startTemporalDevServer, type TemporalDevServer } from '../support/temporal.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');

// Each execution is noted (its point) before the program works for a while and logs its loss.
const TRAIN = `import json, math, os, sys, time
config = json.load(open(os.environ['ASSAY_CONFIG_FILE']))['config_json']
with open(sys.argv[1], 'a') as f:
    f.write(json.dumps({'lr': config['lr'], 'layers': config['layers']}) + '\\n')
time.sleep(1.5)
with open(os.environ['ASSAY_METRICS_FILE'], 'a') as f:
    f.write(json.dumps({'step': 1, 'loss': (math.log10(config['lr']) + 2) ** 2 + config['layers']}) + '\\n')
`;

describe('a searching sweep under kill -9', () => {
  // A dev server with its state in a file, so that one killed and restarted on it keeps every history.
  let temporal: TemporalDevServer;
  let restarted: TemporalDevServer | undefined;
  let dir: string;
  before(async () => {
    temporal = await startTemporalDevServer();
    dir = await mkdtemp(path.join(tmpdir(), 'assay-durable-'));
  });
  after(async () => {
    await restarted?.stop();
    await temporal?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('service, Temporal, worker and sampler killed mid-sweep and restarted: 6 trials, each run once, suggestions unchanged', async (t) => {
    const database = await createTestDatabase();
    const dataDir = path.join(dir, 'data');
    const orchestratorKey = generateOrchestratorKey();
    const taskQueue = `assay-durable-${Date.now()}`;
    const serverEnv = {
      DATABASE_URL: database.url,
      ASSAY_DATA_DIR: dataDir,
      TEMPORAL_ADDRESS: temporal.address,
      ASSAY_TASK_QUEUE: taskQueue,
      ASSAY_WORKER: 'off',
      ASSAY_ORCHESTRATOR_KEY: orchestratorKey,
      ASSAY_LOG_LEVEL: 'warn',
    };
    let server: AssayServer = await startAssayServer(serverEnv);
    const adminKey = server.bootstrapKey!;
    const worker = (): ProcessGroup =>
      spawnProcessGroup(process.execPath, [path.join(repoRoot, 'bin/assay.js'), 'worker'], {
        name: 'assay worker',
        cwd: repoRoot,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          TEMPORAL_ADDRESS: temporal.address,
          ASSAY_TASK_QUEUE: taskQueue,
          ASSAY_SERVICE_URL: server.url,
          ASSAY_ORCHESTRATOR_KEY: orchestratorKey,
          ASSAY_DATA_DIR: path.join(dir, 'worker'),
          ASSAY_LOCAL_COMPUTE_USERS: 'all',
          // The program and the log of executions are the test's files, out of a sandbox's reach.
          ASSAY_LOCAL_SANDBOX: 'off',
        },
        stopGraceMs: 0,
      });
    const sampler = () => startSearchWorker({ address: temporal.address, taskQueue });
    let processes = [worker(), await sampler()];
    t.after(async () => {
      for (const p of processes) await p.stop();
      await server.stop();
    });

    const call = async (method: string, url: string, body?: unknown, key = adminKey) => {
      const res = await fetch(`${server.url}${url}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const trials = async () =>
      (await call('GET', `/orchestrator/sweeps/${sweep.body.id}/trials`, undefined, orchestratorKey)).body
        .items as { trial: number; params: Record<string, unknown>; state: string }[];
    const log = path.join(dir, 'executions.log');
    const executions = async () => (await readFile(log, 'utf8').catch(() => '')).split('\n').filter(Boolean);
    const script = path.join(dir, 'train.py');
    await writeFile(script, TRAIN);

    const experiment = await call('POST', '/experiments', { name: 'durable', organization_id: 'personal' });
    const sweep = await call('POST', `/experiments/${experiment.body.id}/sweeps`, {
      base_yaml: stringify({ lr: 0.1, layers: 1, launch: { command: `python3 ${script} ${log}` } }),
      strategy: 'random',
      space: {
        lr: { distribution: 'log_uniform', low: 1e-4, high: 1 },
        layers: { distribution: 'int', low: 1, high: 4 },
      },
      trials: 6,
      concurrency: 2,
      seed: 3,
      objective: { metric: 'loss', goal: 'minimize' },
    });
    assert.equal(sweep.status, 202, JSON.stringify(sweep.body));

    // Mid-sweep: some trials made and running, others not yet suggested.
    await eventually(async () => (await executions()).length >= 3, 120_000, 'three trials running');
    const before = await trials();
    assert.ok(before.length >= 3 && before.length < 6, JSON.stringify(before));
    process.kill(-server.process.pid, 'SIGKILL');
    process.kill(-temporal.pid, 'SIGKILL');
    for (const p of processes) process.kill(-p.pid, 'SIGKILL');
    await Promise.all([server.process.exited, ...processes.map((p) => p.exited)]);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    restarted = await startTemporalDevServer({ restartOf: temporal });
    server = await startAssayServer({ ...serverEnv, PORT: new URL(server.url).port });
    processes = [worker(), await sampler()];

    const connection = await Connection.connect({ address: restarted.address });
    t.after(() => connection.close());
    const client = new Client({ connection, namespace: restarted.namespace });
    const result = await client.workflow.getHandle(sweep.body.workflow_id).result();
    assert.equal(result.total, 6, JSON.stringify(result));
    assert.equal(result.done, true);
    const after = await trials();
    assert.deepEqual(
      after.map((t) => t.trial),
      [1, 2, 3, 4, 5, 6],
      'exactly the declared trials',
    );
    for (const t of before)
      assert.deepEqual(after[t.trial - 1]!.params, t.params, `trial ${t.trial}'s suggestion unchanged`);
    const ran = await executions();
    assert.equal(ran.length, 6, `no trial started twice: ${ran.join(' | ')}`);
    assert.equal(new Set(ran).size, 6);
    const variations = (await call('GET', `/experiments/${experiment.body.id}/variations`)).body.items;
    assert.equal(variations.length, 6);
    for (const v of variations) {
      const runs = (await call('GET', `/experiments/${experiment.body.id}/variations/${v.n}/runs`)).body
        .items;
      assert.equal(runs.length, 1, `variation ${v.n}: one run`);
    }
  });
});
