// Searching sweeps on a real Temporal dev server with the Python search worker (Optuna, SciPy): trials
// suggested and made one by one within the concurrency, seeded suggestions, retries, repeats.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import { managedRunWorld } from '../support/managed-runs.ts';
import { recordHistory, startOrchestration, type Orchestration } from '../support/orchestration.ts';
import type { ProcessGroup } from '../support/process-group.ts';
import { startSearchWorker } from '../support/search-worker.ts';

// The program every trial runs: it notes each execution (its config's lr, layers and seed) in a file, crashes
// once when given a marker file that does not exist yet, and logs a loss its config decides.
const TRAIN = `import json, math, os, sys
config = json.load(open(os.environ['ASSAY_CONFIG_FILE']))['config_json']
with open(sys.argv[1], 'a') as f:
    f.write(json.dumps({'lr': config['lr'], 'layers': config['layers'], 'seed': config.get('seed')}) + '\\n')
if len(sys.argv) > 2 and not os.path.exists(sys.argv[2]):
    open(sys.argv[2], 'w').close()
    sys.exit(3)
loss = (math.log10(config['lr']) + 2) ** 2 + 0.1 * config['layers']
with open(os.environ['ASSAY_METRICS_FILE'], 'a') as f:
    f.write(json.dumps({'step': 1, 'loss': loss}) + '\\n')
`;

const SPACE = {
  lr: { distribution: 'log_uniform', low: 1e-4, high: 1 },
  layers: { distribution: 'int', low: 1, high: 4 },
};

interface Trial {
  trial: number;
  params: Record<string, unknown>;
  state: string;
  value: number | null;
}

describe('searching sweeps', () => {
  let world: Orchestration;
  let m: ReturnType<typeof managedRunWorld>;
  let key: string;
  let sampler: ProcessGroup;
  let dir: string;
  let script: string;

  before(async () => {
    world = await startOrchestration();
    await world.startWorker();
    sampler = await startSearchWorker({ address: world.env.address, taskQueue: world.taskQueue });
    m = managedRunWorld(world);
    key = (await m.user()).key;
    dir = await mkdtemp(path.join(tmpdir(), 'assay-search-'));
    script = path.join(dir, 'train.py');
    await writeFile(script, TRAIN);
  });
  after(async () => {
    await m?.assertNoInstanceLeft();
    await sampler?.stop();
    await world?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const api = () => world.svc.as(key);
  async function draft(name = 'search') {
    const res = await api().post('/experiments', { name, organization_id: 'personal' });
    assert.equal(res.status, 201);
    return res.body.id as string;
  }
  /** The base config whose program notes its executions in `log` (and crashes once given a marker). */
  const base = (log: string, marker?: string) =>
    stringify({
      lr: 0.1,
      layers: 1,
      launch: { command: ['python3', script, log, ...(marker ? [marker] : [])].join(' ') },
    });
  const executions = async (log: string) =>
    (await readFile(log, 'utf8').catch(() => ''))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  /** The trials as the sweep's sampler sees them, through the orchestrator's own route. */
  async function trials(sweepId: string): Promise<Trial[]> {
    const res = await world.svc.as(world.orchestratorKey).get(`/orchestrator/sweeps/${sweepId}/trials`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.items;
  }
  async function sweep(experimentId: string, body: Record<string, unknown>) {
    const res = await api().post(`/experiments/${experimentId}/sweeps`, body);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const result = await world.env.client.workflow.getHandle(res.body.workflow_id).result();
    return { sweep: res.body, result };
  }

  test('a random sweep of 6 trials at concurrency 2: 6 variations marked with their trials, each run once, the objective in the history', async () => {
    const id = await draft();
    const log = path.join(dir, 'random.log');
    const { sweep: created, result } = await sweep(id, {
      base_yaml: base(log),
      strategy: 'random',
      space: SPACE,
      trials: 6,
      concurrency: 2,
      objective: { metric: 'loss', goal: 'minimize' },
    });
    assert.deepEqual(result, { total: 6, pending: 0, running: 0, succeeded: 6, failed: 0, done: true });

    const variations = (await api().get(`/experiments/${id}/variations`)).body.items;
    assert.equal(variations.length, 6);
    const history = await trials(created.id);
    assert.deepEqual(
      history.map((t) => [t.trial, t.state]),
      [1, 2, 3, 4, 5, 6].map((k) => [k, 'complete']),
    );
    for (const t of history) {
      const v = variations.find((v: any) => v.name.startsWith(`sweep #${t.trial} `));
      assert.ok(v, `trial ${t.trial}'s variation, by name: ${variations.map((v: any) => v.name)}`);
      assert.deepEqual([v.config_json.lr, v.config_json.layers], [t.params.lr, t.params.layers]);
      assert.ok((t.params.lr as number) >= 1e-4 && (t.params.lr as number) <= 1);
      const expected = (Math.log10(t.params.lr as number) + 2) ** 2 + 0.1 * (t.params.layers as number);
      assert.ok(Math.abs(t.value! - expected) < 1e-9, `trial ${t.trial}'s loss in the history`);
      const runs = (await api().get(`/experiments/${id}/variations/${v.n}/runs`)).body.items;
      assert.equal(runs.length, 1, 'one run per trial');
    }
    assert.equal((await executions(log)).length, 6, 'each trial’s program ran once');
    assert.equal(await world.instancesStarted(), 6);
    // The declaration bounds the trials, whoever asks: no seventh.
    const seventh = await world.svc
      .as(world.orchestratorKey)
      .post(`/orchestrator/sweeps/${created.id}/trials`, { trial: 7, params: { lr: 0.1, layers: 1 } });
    assert.deepEqual([seventh.status, seventh.body.error?.details], [422, { field: 'trial' }]);
    assert.equal((await api().get(`/experiments/${id}/variations`)).body.items.length, 6);
    await recordHistory(world.env, created.workflow_id, 'trial-sweep-random');
  });

  test('tpe at concurrency 1, twice with the same seed and a deterministic objective: the same suggestions', async () => {
    const suggestions = [];
    for (const name of ['tpe-a', 'tpe-b']) {
      const id = await draft(name);
      const { sweep: created, result } = await sweep(id, {
        base_yaml: base(path.join(dir, `${name}.log`)),
        strategy: 'tpe',
        space: SPACE,
        trials: 4,
        concurrency: 1,
        seed: 7,
        objective: { metric: 'loss', goal: 'minimize' },
      });
      assert.equal(result.succeeded, 4);
      suggestions.push((await trials(created.id)).map((t) => [t.trial, t.params, t.value]));
    }
    assert.equal(suggestions[0]!.length, 4);
    assert.deepEqual(suggestions[1], suggestions[0]);
  });

  test('a trial whose program crashes once is retried with max_retries 1 and succeeds', async () => {
    const id = await draft('retry');
    const log = path.join(dir, 'retry.log');
    const { sweep: created, result } = await sweep(id, {
      base_yaml: base(log, path.join(dir, 'crashed-once')),
      strategy: 'sobol',
      space: SPACE,
      trials: 1,
      concurrency: 1,
      max_retries: 1,
      objective: { metric: 'loss', goal: 'minimize' },
    });
    assert.deepEqual([result.succeeded, result.failed], [1, 0]);
    const [variation] = (await api().get(`/experiments/${id}/variations`)).body.items;
    const runs = (await api().get(`/experiments/${id}/variations/${variation.n}/runs`)).body.items;
    assert.deepEqual(
      runs.map((r: any) => [r.r, r.state, r.failure_reason]),
      [
        [1, 'failed', 'crash'],
        [2, 'succeeded', null],
      ],
    );
    assert.equal(runs[1].retries_run_id, runs[0].id);
    assert.equal((await executions(log)).length, 2);
    assert.equal((await trials(created.id))[0]!.state, 'complete');
    await recordHistory(world.env, created.workflow_id, 'trial-sweep-retried');
  });

  test('repeat: each run of a committed experiment’s variation reads its own seed at its config’s top level', async () => {
    const id = await draft('repeat');
    const log = path.join(dir, 'repeat.log');
    const variation = await api().post(`/experiments/${id}/variations`, { config_yaml: base(log) });
    assert.equal(variation.status, 201);
    assert.equal((await api().post(`/experiments/${id}/commit`)).status, 200);
    const { result } = await sweep(id, { strategy: 'repeat', repeats: 3, seed: 100, concurrency: 3 });
    assert.equal(result.succeeded, 3);
    const seeds = (await executions(log)).map((e) => e.seed).sort();
    assert.deepEqual(seeds, [101, 102, 103]);
  });
});
