import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SweepStart } from '../../src/orchestrator/orchestrator.ts';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { addVariation, createExperiment } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

const BASE = `# the base config
optimizer:
  name: adamw
  lr: 3.0e-4
seed: 0
launch:
  command: python train.py
  instance_type: g5.xlarge
`;

describe('sweeps: a grid or list of configs → variations, managed runs and a sweep workflow', () => {
  let t: TestService;
  let bare: TestService;
  let fake: FakeOrchestrator;
  let owner: string;

  const draft = async () => (await createExperiment(t, owner, { name: 'sweep' })).id;
  const sweep = (experimentId: string, body: Record<string, unknown>, key = owner) =>
    t.as(key).post(`/experiments/${experimentId}/sweeps`, { base_yaml: BASE, ...body });

  before(async () => {
    fake = new FakeOrchestrator();
    // The researchers here are not admins, and their sweeps carry launch commands.
    t = await startTestService({ orchestrator: fake, env: { ASSAY_LOCAL_COMPUTE_USERS: 'all' } });
    bare = await startTestService();
    owner = (await t.createUser()).key;
  });
  after(async () => {
    await t.close();
    await bare.close();
  });

  it('turns a 3×3 grid into 9 variations, commits the experiment and starts the sweep with 9 pending managed runs', async () => {
    const id = await draft();
    const res = await sweep(id, {
      grid: { 'optimizer.lr': [1e-4, 3e-4, 1e-3], seed: [1, 2, 3] },
      concurrency: 3,
      name_prefix: 'lr',
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const s = res.body;
    assert.deepEqual(
      [s.experiment_id, s.workflow_id, s.concurrency, s.progress],
      [
        id,
        `sweep-${s.id}`,
        3,
        {
          total: 9,
          pending: 9,
          running: 0,
          succeeded: 0,
          failed: 0,
          stopped_early: 0,
          retried: 0,
          failed_by_reason: {},
          done: false,
        },
      ],
    );
    assert.equal(s.workflow_url, fake.workflowUrl(s.workflow_id));
    assert.equal(s.runs.length, 9);
    assert.deepEqual(
      s.runs.map((r: { n: number }) => r.n),
      [1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    for (const run of s.runs)
      assert.deepEqual([run.r, run.state, run.workflow_id], [1, 'pending', `run-${id}-${run.n}-1`]);
    assert.equal(s.runs[0].variation_name, 'lr optimizer.lr=0.0001 seed=1');
    assert.equal(s.runs[5].variation_name, 'lr optimizer.lr=0.0003 seed=3');

    const experiment = await t.as(owner).get(`/experiments/${id}`);
    assert.equal(experiment.body.state, 'committed');
    assert.ok(experiment.body.committed_at);
    assert.deepEqual(experiment.body.run_counts, { pending: 9, running: 0, succeeded: 0, failed: 0 });

    // The grid in key order: the first path varies slowest. Everything else of the base is kept.
    const v2 = await t.as(owner).get(`/experiments/${id}/variations/2`);
    assert.deepEqual(v2.body.config_json, { optimizer: { name: 'adamw', lr: 1e-4 }, seed: 2 });
    assert.deepEqual(v2.body.launch_config, { command: 'python train.py', instance_type: 'g5.xlarge' });
    assert.match(v2.body.config_yaml, /lr: 0\.0001/);
    const v9 = await t.as(owner).get(`/experiments/${id}/variations/9`);
    assert.deepEqual(v9.body.config_json, { optimizer: { name: 'adamw', lr: 1e-3 }, seed: 3 });

    const run = await t.as(owner).get(`/experiments/${id}/variations/4/runs/1`);
    assert.deepEqual(
      [run.body.managed, run.body.state, run.body.workflow_id],
      [true, 'pending', `run-${id}-4-1`],
    );

    const started = fake.callsOf<SweepStart>('startSweep').at(-1)!;
    assert.deepEqual(
      [started.sweepId, started.workflowId, started.experimentId, started.concurrency, started.runs.length],
      [s.id, s.workflow_id, id, 3, 9],
    );
    assert.deepEqual(started.runs[3], {
      runId: run.body.id,
      experimentId: id,
      n: 4,
      r: 1,
      workflowId: `run-${id}-4-1`,
    });
  });

  it('takes a list: one variation per entry, setting nested paths and creating missing mappings', async () => {
    const id = await draft();
    const res = await sweep(id, {
      list: [
        { 'optimizer.name': 'sgd', 'optimizer.lr': 0.1 },
        { 'scheduler.warmup.steps': 100 },
        {},
        { 'launch.command': 'python eval.py' },
      ],
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(res.body.concurrency, 4, 'the default concurrency');
    assert.deepEqual(
      res.body.runs.map((r: { variation_name: string }) => r.variation_name),
      [
        'sweep optimizer.name=sgd optimizer.lr=0.1',
        'sweep scheduler.warmup.steps=100',
        'sweep',
        'sweep launch.command=python eval.py',
      ],
    );
    const variations = (await t.as(owner).get(`/experiments/${id}/variations`)).body.items;
    assert.deepEqual(
      variations.map((v: { config_json: unknown }) => v.config_json),
      [
        { optimizer: { name: 'sgd', lr: 0.1 }, seed: 0 },
        { optimizer: { name: 'adamw', lr: 3e-4 }, seed: 0, scheduler: { warmup: { steps: 100 } } },
        { optimizer: { name: 'adamw', lr: 3e-4 }, seed: 0 },
        { optimizer: { name: 'adamw', lr: 3e-4 }, seed: 0 },
      ],
    );
    assert.equal(variations[3].launch_config.command, 'python eval.py');
  });

  it('reads a sweep with run states and progress counted from them, without asking Temporal; cancels it', async () => {
    const id = await draft();
    const created = (await sweep(id, { list: [{ seed: 1 }, { seed: 2 }] })).body;
    await t.as(owner).post(`/experiments/${id}/variations/1/runs/1/cancel`);
    const asked = fake.calls.length;
    const read = await t.as(owner).get(`/experiments/${id}/sweeps/${created.id}`);
    assert.equal(read.status, 200);
    assert.deepEqual(
      read.body.runs.map((r: { state: string; failure_reason: string | null }) => [
        r.state,
        r.failure_reason,
      ]),
      [
        ['failed', 'abandoned'],
        ['pending', null],
      ],
    );
    assert.deepEqual(read.body.progress, {
      total: 2,
      pending: 1,
      running: 0,
      succeeded: 0,
      failed: 1,
      stopped_early: 0,
      retried: 0,
      failed_by_reason: { abandoned: 1 },
      done: false,
    });
    assert.equal(fake.calls.length, asked, 'reading a sweep asks the orchestrator nothing');

    const cancelled = await t.as(owner).post(`/experiments/${id}/sweeps/${created.id}/cancel`);
    assert.deepEqual([cancelled.status, cancelled.body.id], [202, created.id]);
    assert.equal(fake.callsOf('cancelSweep').at(-1), created.workflow_id);

    const stranger = (await t.createUser()).key;
    assert.equal((await t.as(stranger).get(`/experiments/${id}/sweeps/${created.id}`)).status, 404);
    assert.equal((await t.as(stranger).post(`/experiments/${id}/sweeps/${created.id}/cancel`)).status, 404);
    assert.equal((await t.as(owner).get(`/experiments/${id}/sweeps/${id}`)).status, 404);
  });

  it('takes the request tagged by strategy, and checks it against the member its tag names', async () => {
    const id = await draft();
    const res = await sweep(id, { strategy: 'list', list: [{ seed: 1 }, { seed: 2 }] });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.runs.map((r: { variation_name: string }) => r.variation_name),
      ['sweep seed=1', 'sweep seed=2'],
    );
    // The same request repeated (as after a 503) finds the same sweep, tagged or not.
    const again = await sweep(id, { list: [{ seed: 1 }, { seed: 2 }] });
    assert.deepEqual([again.status, again.body.id], [202, res.body.id]);
    // An error names the chosen member's field, not another member's tag.
    const bad = await sweep(await draft(), { strategy: 'grid', grid: { seed: { a: 1 } } });
    assert.equal(bad.status, 422, JSON.stringify(bad.body));
    assert.match(bad.body.error.message, /\/grid\/seed must be array/);
  });

  it('refuses bad input with 400 (never a 500) and writes nothing', async () => {
    const id = await draft();
    const cases: [string, Record<string, unknown>, number, string][] = [
      ['both grid and list', { grid: { seed: [1] }, list: [{ seed: 1 }] }, 400, 'invalid_sweep'],
      ['neither grid nor list', {}, 400, 'invalid_sweep'],
      ['an empty grid value', { grid: { seed: [] } }, 400, 'invalid_sweep'],
      ['an empty grid', { grid: {} }, 400, 'invalid_sweep'],
      ['an empty list', { list: [] }, 400, 'invalid_sweep'],
      [
        'over 1000 points',
        {
          grid: {
            a: Array.from({ length: 11 }, (_, i) => i),
            b: Array.from({ length: 10 }, (_, i) => i),
            c: Array.from({ length: 10 }, (_, i) => i),
          },
        },
        400,
        'sweep_too_large',
      ],
      [
        'a list over 1000 points',
        { list: Array.from({ length: 1001 }, (_, i) => ({ seed: i })) },
        400,
        'sweep_too_large',
      ],
      ['an empty path segment', { grid: { 'optimizer..lr': [1] } }, 400, 'invalid_sweep'],
      ['a path ending in a dot', { list: [{ 'seed.': 1 }] }, 400, 'invalid_sweep'],
      ['a path into a scalar', { grid: { 'seed.value': [1] } }, 400, 'invalid_sweep'],
      [
        'a path into a list',
        { base_yaml: 'layers: [1, 2]\n', grid: { 'layers.0': [1] } },
        400,
        'invalid_sweep',
      ],
      ['__proto__ in a path', { grid: { '__proto__.polluted': [1] } }, 400, 'invalid_sweep'],
      ['a launch block that is no mapping', { grid: { launch: [1] } }, 400, 'invalid_config'],
      [
        'a launch setting the contract does not know',
        { grid: { 'launch.gpu_count': [1] } },
        400,
        'invalid_config',
      ],
      ['a value with a NUL character', { grid: { seed: ['a\u0000b'] } }, 400, 'invalid_config'],
      [
        'a name prefix that is too long',
        { name_prefix: 'x'.repeat(101), grid: { seed: [1] } },
        422,
        'validation_failed',
      ],
      ['concurrency 0', { concurrency: 0, grid: { seed: [1] } }, 422, 'validation_failed'],
      ['concurrency 65', { concurrency: 65, grid: { seed: [1] } }, 422, 'validation_failed'],
      ['a grid value that is no list', { grid: { seed: { a: 1 } } }, 422, 'validation_failed'],
      ['an unknown strategy', { strategy: 'random', grid: { seed: [1] } }, 422, 'validation_failed'],
      ['a list strategy given a grid', { strategy: 'list', grid: { seed: [1] } }, 422, 'validation_failed'],
    ];
    for (const [name, body, status, code] of cases) {
      const res = await sweep(id, body);
      assert.deepEqual(
        [res.status, res.body.error?.code],
        [status, code],
        `${name}: ${JSON.stringify(res.body)}`,
      );
    }
    const yaml = await sweep(id, { base_yaml: 'optimizer:\n  lr: [1, 2\nseed: 0\n', grid: { seed: [1] } });
    assert.deepEqual([yaml.status, yaml.body.error.code], [400, 'invalid_yaml']);
    assert.ok(
      Number.isInteger(yaml.body.error.details.line) && Number.isInteger(yaml.body.error.details.column),
      JSON.stringify(yaml.body),
    );
    assert.match(yaml.body.error.message, /^base_yaml line \d+, column \d+/);
    const notMapping = await sweep(id, { base_yaml: '- 1\n- 2\n', grid: { seed: [1] } });
    assert.deepEqual([notMapping.status, notMapping.body.error.code], [400, 'invalid_config']);

    const experiment = await t.as(owner).get(`/experiments/${id}`);
    assert.deepEqual(
      [experiment.body.state, experiment.body.variations.length],
      ['draft', 0],
      'nothing was written',
    );
  });

  it('needs a draft experiment (409), a visible one (404), and keys that may write experiments and runs (403)', async () => {
    const committed = await createExperiment(t, owner, { name: 'committed' });
    await addVariation(t, owner, committed.id);
    await t.as(owner).post(`/experiments/${committed.id}/commit`);
    const res = await sweep(committed.id, { grid: { seed: [1, 2] } });
    assert.deepEqual(
      [res.status, res.body.error.code, res.body.error.details.state],
      [409, 'experiment_not_draft', 'committed'],
    );

    const id = await draft();
    const stranger = (await t.createUser()).key;
    assert.equal((await sweep(id, { grid: { seed: [1] } }, stranger)).status, 404);
    for (const scopes of [['experiments:write'], ['runs:write']]) {
      const narrow = await t.as(owner).post('/api-keys', { description: 'narrow', scopes });
      const refused = await sweep(id, { grid: { seed: [1] } }, narrow.body.key);
      assert.deepEqual(
        [refused.status, refused.body.error.code],
        [403, 'insufficient_scope'],
        JSON.stringify(scopes),
      );
    }
    assert.equal((await t.as(owner).get(`/experiments/${id}`)).body.state, 'draft');
  });

  it('answers 503 without an orchestrator before touching the database', async () => {
    const key = (await bare.createUser()).key;
    const experiment = await createExperiment(bare, key);
    const res = await bare
      .as(key)
      .post(`/experiments/${experiment.id}/sweeps`, { base_yaml: BASE, grid: { seed: [1, 2] } });
    assert.deepEqual([res.status, res.body.error.code], [503, 'orchestrator_unavailable']);
    const after_ = await bare.as(key).get(`/experiments/${experiment.id}`);
    assert.deepEqual([after_.body.state, after_.body.variations.length], ['draft', 0]);
    assert.equal(
      (await bare.as(key).get(`/experiments/${experiment.id}/sweeps/${experiment.id}`)).status,
      404,
    );
  });

  it('answers 503 when Temporal is unreachable, keeps what it recorded, and the same request repeated starts the sweep', async () => {
    const id = await draft();
    const body = { grid: { seed: [1, 2] }, concurrency: 2 };
    fake.failing.add('startSweep');
    let failed;
    try {
      failed = await sweep(id, body);
    } finally {
      fake.failing.delete('startSweep');
    }
    assert.deepEqual([failed.status, failed.body.error.code], [503, 'orchestrator_unavailable']);
    assert.equal(
      (await t.as(owner).get(`/experiments/${id}`)).body.state,
      'committed',
      'the sweep is recorded',
    );
    const attempted = fake.callsOf<SweepStart>('startSweep').at(-1)!;

    const retry = await sweep(id, body);
    assert.equal(retry.status, 202, JSON.stringify(retry.body));
    assert.deepEqual([retry.body.id, retry.body.runs.length], [attempted.sweepId, 2]);
    assert.deepEqual(
      fake.callsOf<SweepStart>('startSweep').at(-1),
      attempted,
      'the same sweep started, not a second one',
    );
    const variations = (await t.as(owner).get(`/experiments/${id}/variations`)).body.items;
    assert.equal(variations.length, 2, 'no second set of variations');

    const different = await sweep(id, { grid: { seed: [1, 2, 3] } });
    assert.deepEqual([different.status, different.body.error.code], [409, 'experiment_not_draft']);
  });
});

describe('searching sweeps (random, sobol, tpe) and repeats: the declaration checked, then recorded', () => {
  let t: TestService;
  let fake: FakeOrchestrator;
  let owner: string;
  const SPACE = {
    'optimizer.lr': { distribution: 'log_uniform', low: 1e-5, high: 1 },
    seed: { distribution: 'int', low: 0, high: 9 },
    'optimizer.name': { distribution: 'choice', values: ['adamw', 'sgd'] },
  };
  const search = (experimentId: string, body: Record<string, unknown>) =>
    t.as(owner).post(`/experiments/${experimentId}/sweeps`, {
      base_yaml: BASE,
      strategy: 'random',
      space: SPACE,
      trials: 4,
      ...body,
    });

  before(async () => {
    fake = new FakeOrchestrator();
    t = await startTestService({ orchestrator: fake, env: { ASSAY_LOCAL_COMPUTE_USERS: 'all' } });
    owner = (await t.createUser()).key;
  });
  after(async () => {
    await t.close();
  });

  it('refuses a bad space, a path the base lacks and a missing objective with 422 naming the field, and creates nothing', async () => {
    const id = (await createExperiment(t, owner, { name: 'search' })).id;
    const starts = fake.callsOf('startSweep').length;
    const cases: [string, Record<string, unknown>, string, RegExp][] = [
      [
        'low ≥ high',
        { space: { seed: { distribution: 'uniform', low: 2, high: 2 } } },
        'space.seed.low',
        /below high/,
      ],
      [
        'log_uniform from 0',
        { space: { 'optimizer.lr': { distribution: 'log_uniform', low: 0, high: 1 } } },
        'space.optimizer.lr.low',
        /above 0/,
      ],
      [
        'an int on a log scale from 0',
        { space: { seed: { distribution: 'int', low: 0, high: 8, log: true } } },
        'space.seed.low',
        /low ≥ 1/,
      ],
      [
        'an empty choice',
        { space: { 'optimizer.name': { distribution: 'choice', values: [] } } },
        'space.optimizer.name.values',
        /at least one value/,
      ],
      [
        'a key the base lacks',
        { space: { 'optimizer.momentum': { distribution: 'uniform', low: 0, high: 1 } } },
        'space.optimizer.momentum',
        /optimizer exists but has no key momentum/,
      ],
      [
        'a top-level key the base lacks',
        { space: { dropout: { distribution: 'uniform', low: 0, high: 1 } } },
        'space.dropout',
        /base_yaml has no key dropout/,
      ],
      [
        'a path through a value that is no mapping',
        { space: { 'seed.x': { distribution: 'uniform', low: 0, high: 1 } } },
        'space.seed.x',
        /seed is not a mapping/,
      ],
      ['tpe without an objective', { strategy: 'tpe' }, 'objective', /tpe learns from the objective/],
      [
        'early stopping without an objective',
        { early_stopping: { kind: 'median' } },
        'objective',
        /early stopping compares trials/,
      ],
    ];
    for (const [what, body, field, message] of cases) {
      const res = await search(id, body);
      assert.deepEqual(
        [res.status, res.body.error?.code, res.body.error?.details?.field],
        [422, 'invalid_search_space', field],
        `${what}: ${JSON.stringify(res.body)}`,
      );
      assert.match(res.body.error.message, message, what);
    }
    const unknown = await search(id, { space: { seed: { distribution: 'normal', low: 0, high: 1 } } });
    assert.equal(unknown.status, 422, 'an unknown distribution is the schema’s to refuse');
    const over = await search(id, { trials: 1001 });
    assert.equal(over.status, 422, 'trials over the cap');

    const experiment = await t.as(owner).get(`/experiments/${id}`);
    assert.deepEqual(
      [experiment.body.state, experiment.body.variations.length],
      ['draft', 0],
      'nothing was written',
    );
    assert.equal(fake.callsOf('startSweep').length, starts, 'no workflow was started');
  });

  it('answers 503 sampler_unavailable naming what to run when no search worker polls, and creates nothing', async () => {
    const id = (await createExperiment(t, owner, { name: 'no sampler' })).id;
    fake.sampler = false;
    try {
      const res = await search(id, {});
      assert.deepEqual(
        [res.status, res.body.error.code],
        [503, 'sampler_unavailable'],
        JSON.stringify(res.body),
      );
      assert.match(res.body.error.message, /setup-search-worker\.sh/);
      assert.match(res.body.error.message, /assay_search_worker --task-queue \S+-search/);
    } finally {
      fake.sampler = true;
    }
    assert.equal((await t.as(owner).get(`/experiments/${id}`)).body.state, 'draft');
  });

  it('records a random sweep on a draft with no variations: the commit freezes it, the seed is chosen and kept, a repeat finds it', async () => {
    const id = (await createExperiment(t, owner, { name: 'random' })).id;
    const res = await search(id, {
      max_retries: 2,
      concurrency: 2,
      objective: { metric: 'loss', goal: 'maximize' },
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.deepEqual(res.body.runs, [], 'trials are made as they start');
    const experiment = await t.as(owner).get(`/experiments/${id}`);
    assert.deepEqual([experiment.body.state, experiment.body.variations.length], ['committed', 0]);

    const [start] = fake.callsOf<SweepStart>('startSweep').slice(-1);
    assert.ok(start);
    const seed = start.search?.seed;
    assert.ok(Number.isInteger(seed), 'a seed chosen');
    assert.deepEqual(start.search, {
      strategy: 'random',
      space: start.search?.space,
      goal: 'maximize',
      seed,
      trials: 4,
    });
    assert.deepEqual(Object.keys(start.search!.space).sort(), Object.keys(SPACE).sort());
    assert.deepEqual([start.maxRetries, start.concurrency, start.runs], [2, 2, []]);

    const again = await search(id, {
      max_retries: 2,
      concurrency: 2,
      objective: { metric: 'loss', goal: 'maximize' },
    });
    assert.deepEqual(
      [again.status, again.body.id],
      [202, res.body.id],
      'the same request finds the same sweep',
    );
    assert.equal(fake.callsOf<SweepStart>('startSweep').at(-1)!.search?.seed, seed, 'with the same seed');

    // The committed experiment takes no variation but its sweep's trials.
    const direct = await t.as(owner).post(`/experiments/${id}/variations`, { config_yaml: 'lr: 1\n' });
    assert.equal(direct.status, 409);
  });

  it('repeats a committed experiment’s variations with a distinct seed per run; a draft is refused (409)', async () => {
    const draftId = (await createExperiment(t, owner, { name: 'draft repeat' })).id;
    const refused = await t
      .as(owner)
      .post(`/experiments/${draftId}/sweeps`, { strategy: 'repeat', repeats: 2 });
    assert.deepEqual([refused.status, refused.body.error.code], [409, 'experiment_not_committed']);

    const id = (await createExperiment(t, owner, { name: 'repeat' })).id;
    await addVariation(t, owner, id, 'lr: 0.1\nlaunch:\n  command: "true"\n');
    await addVariation(t, owner, id, 'lr: 0.2\nlaunch:\n  command: "true"\n');
    assert.equal((await t.as(owner).post(`/experiments/${id}/commit`)).status, 200);
    const missing = await t
      .as(owner)
      .post(`/experiments/${id}/sweeps`, { strategy: 'repeat', repeats: 2, variations: [2, 7] });
    assert.deepEqual(
      [missing.status, missing.body.error.details],
      [422, { field: 'variations', missing: [7] }],
    );

    const res = await t
      .as(owner)
      .post(`/experiments/${id}/sweeps`, { strategy: 'repeat', repeats: 3, seed: 11, max_retries: 1 });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.runs.map((r: { n: number; r: number }) => [r.n, r.r]),
      [1, 2].flatMap((n) => [1, 2, 3].map((r) => [n, r])),
    );
    const seeds = [];
    for (const run of res.body.runs)
      seeds.push((await t.as(owner).get(`/experiments/${id}/variations/${run.n}/runs/${run.r}`)).body.seed);
    assert.deepEqual(seeds, [12, 13, 14, 15, 16, 17], 'distinct seeds derived from the sweep’s');
    const start = fake.callsOf<SweepStart>('startSweep').at(-1)!;
    assert.deepEqual([start.runs.length, start.maxRetries, start.search], [6, 1, undefined]);
  });

  it('refuses early stopping without an objective, whatever the strategy (422, field objective), creating nothing', async () => {
    const id = (await createExperiment(t, owner, { name: 'no objective' })).id;
    const res = await t.as(owner).post(`/experiments/${id}/sweeps`, {
      base_yaml: BASE,
      strategy: 'grid',
      grid: { seed: [1, 2] },
      early_stopping: { kind: 'median' },
    });
    assert.deepEqual([res.status, res.body.error.details], [422, { field: 'objective' }]);
    const experiment = await t.as(owner).get(`/experiments/${id}`);
    assert.equal(experiment.body.state, 'draft', 'nothing was committed');
    assert.equal((await t.as(owner).get(`/experiments/${id}/variations`)).body.items.length, 0);
  });

  it('gives a grid or list sweep max_retries too (0 when absent)', async () => {
    for (const [body, retries] of [
      [{ strategy: 'grid', grid: { seed: [1, 2] }, max_retries: 3 }, 3],
      [{ list: [{ seed: 1 }] }, 0],
    ] as const) {
      const id = (await createExperiment(t, owner, { name: 'retries' })).id;
      const res = await t.as(owner).post(`/experiments/${id}/sweeps`, { base_yaml: BASE, ...body });
      assert.equal(res.status, 202, JSON.stringify(res.body));
      const start = fake.callsOf<SweepStart>('startSweep').at(-1)!;
      assert.deepEqual(
        [start.sweepId, start.maxRetries, start.runs.length],
        [res.body.id, retries, res.body.runs.length],
      );
    }
  });
});
