import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { cliJson, runCli, spawnCli, tempHome, waitFor } from '../support/cli.ts';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { startTestService, type TestService } from '../support/service.ts';

describe('sweeps commands: create by strategy, list, show (and --watch)', () => {
  let t: TestService;
  let home: string;
  let env: Record<string, string>;
  let key: string;
  let base: string;
  const orchestratorKey = generateOrchestratorKey();
  const cli = (args: string[], e = env) => runCli(args, { home, env: e });
  const json = <T = any>(args: string[]) => cliJson<T>(args, { home, env });
  const file = async (name: string, text: string) => {
    const p = path.join(home, name);
    await writeFile(p, text);
    return p;
  };
  const runPath = (id: string, n: number) => `/experiments/${id}/variations/${n}/runs/1`;
  const start = async (id: string, n: number) => {
    await t.as(key).get(`${runPath(id, n)}/config`);
    assert.equal((await t.as(key).post(`${runPath(id, n)}/start`, {})).status, 200);
  };
  const log = (id: string, n: number, values: number[]) =>
    t.as(key).post(`${runPath(id, n)}/metrics`, {
      metrics: values.map((value, i) => ({ key: 'val_loss', step: i + 1, value })),
    });
  const draft = async (name: string) =>
    (await json(['experiments', 'create', '--file', await file(`${name}.yaml`, `name: ${name}\n`)])).id;

  before(async () => {
    t = await startTestService({
      listen: true,
      orchestrator: new FakeOrchestrator(),
      env: { ASSAY_LOCAL_COMPUTE_USERS: 'all', ASSAY_ORCHESTRATOR_KEY: orchestratorKey },
    });
    home = await tempHome();
    key = (await t.createUser()).key;
    env = { SERVICE_SERVER_URL: t.url!, SERVICE_API_KEY: key };
    base = await file(
      'base.yaml',
      'optimizer:\n  lr: 3.0e-4\nseed: 0\nlaunch:\n  command: python train.py\n',
    );
  });
  after(async () => {
    await t.close();
    await rm(home, { recursive: true, force: true });
  });

  it('create sends a search (space, strategy, trials, objective, early stopping, retries, seed) and a repeat as the API names them', async () => {
    const bodies: unknown[] = [];
    // A server that keeps each request body and refuses it, so only what the CLI sends is looked at.
    const server = http.createServer(async (req, res) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      bodies.push({ method: req.method, url: req.url, body: JSON.parse(body) });
      res.writeHead(422, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'validation_failed', message: 'recorded' } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const recorder = {
      ...env,
      SERVICE_SERVER_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    };
    try {
      const space = await file(
        'space.yaml',
        'optimizer.lr: {distribution: log_uniform, low: 1.0e-5, high: 1}\nlayers:\n  distribution: int\n  low: 1\n  high: 4\n',
      );
      const search = await cli(
        [
          'sweeps',
          'create',
          'e1',
          '--base',
          base,
          '--space',
          space,
          '--strategy',
          'tpe',
          '--trials',
          '32',
          '--metric',
          'val_loss',
          '--early-stopping',
          'asha',
          '--max-step',
          '30',
          '--max-retries',
          '1',
          '--seed',
          '7',
          '--concurrency',
          '2',
        ],
        recorder,
      );
      assert.equal(search.code, 1, search.stderr);
      const stopping = await file('asha.yaml', 'kind: asha\nmin_step: 2\nreduction_factor: 4\n');
      await cli(
        [
          'sweeps',
          'create',
          'e1',
          '--base',
          base,
          '--space',
          space,
          '--trials',
          '4',
          '--metric',
          'acc',
          '--goal',
          'maximize',
          '--early-stopping',
          stopping,
        ],
        recorder,
      );
      await cli(['sweeps', 'create', 'e2', '--repeat', '3', '--variations', '1,3', '--seed', '5'], recorder);
      assert.deepEqual(bodies, [
        {
          method: 'POST',
          url: '/experiments/e1/sweeps',
          body: {
            strategy: 'tpe',
            space: {
              'optimizer.lr': { distribution: 'log_uniform', low: 1e-5, high: 1 },
              layers: { distribution: 'int', low: 1, high: 4 },
            },
            trials: 32,
            seed: 7,
            base_yaml: 'optimizer:\n  lr: 3.0e-4\nseed: 0\nlaunch:\n  command: python train.py\n',
            concurrency: 2,
            objective: { metric: 'val_loss', goal: 'minimize' },
            early_stopping: { kind: 'asha', max_step: 30 },
            max_retries: 1,
          },
        },
        {
          method: 'POST',
          url: '/experiments/e1/sweeps',
          body: {
            strategy: 'random',
            space: {
              'optimizer.lr': { distribution: 'log_uniform', low: 1e-5, high: 1 },
              layers: { distribution: 'int', low: 1, high: 4 },
            },
            trials: 4,
            base_yaml: 'optimizer:\n  lr: 3.0e-4\nseed: 0\nlaunch:\n  command: python train.py\n',
            objective: { metric: 'acc', goal: 'maximize' },
            early_stopping: { kind: 'asha', min_step: 2, reduction_factor: 4 },
          },
        },
        {
          method: 'POST',
          url: '/experiments/e2/sweeps',
          body: { strategy: 'repeat', repeats: 3, variations: [1, 3], seed: 5 },
        },
      ]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses bad search, objective and repeat usage with exit code 2 before calling the server', async () => {
    const space = await file('space2.yaml', 'lr: {distribution: uniform, low: 0, high: 1}\n');
    const cases: [string[], RegExp][] = [
      [['--base', base, '--space', space], /--space needs --trials/],
      [['--base', base, '--grid', base, '--space', space, '--trials', '2'], /exactly one of --grid/],
      [['--base', base, '--set', 'seed=1', '--strategy', 'tpe'], /--strategy chooses how --space/],
      [['--base', base, '--set', 'seed=1', '--trials', '3'], /--trials counts the points/],
      [
        ['--base', base, '--space', space, '--trials', '2', '--strategy', 'bayes'],
        /--strategy must be one of/,
      ],
      [['--base', base, '--set', 'seed=1', '--goal', 'maximize'], /--goal needs --metric/],
      [['--base', base, '--set', 'seed=1', '--metric', 'l', '--goal', 'up'], /--goal must be minimize/],
      [['--base', base, '--set', 'seed=1', '--early-stopping', 'asha'], /give --metric KEY with it/],
      [
        ['--base', base, '--set', 'seed=1', '--metric', 'l', '--early-stopping', 'soon'],
        /takes asha, hyperband, median/,
      ],
      [
        ['--base', base, '--set', 'seed=1', '--metric', 'l', '--early-stopping', 'hyperband'],
        /needs --max-step/,
      ],
      [
        ['--base', base, '--set', 'seed=1', '--metric', 'l', '--early-stopping', 'median', '--max-step', '3'],
        /not median/,
      ],
      [['--base', base, '--set', 'seed=1', '--max-step', '3'], /--max-step goes with/],
      [['--base', base, '--set', 'seed=1', '--seed', '3'], /--seed seeds a search/],
      [['--base', base, '--set', 'seed=1', '--variations', '1'], /--variations names what --repeat/],
      [['--repeat', '2', '--variations', '1,x'], /--variations takes variation numbers/],
      [['--repeat', '0'], /whole number ≥ 1/],
      [['--base', base, '--set', 'seed=1', '--max-retries', '-1'], /whole number ≥ 0/],
      [['--base', base, '--space', await file('bad-space.yaml', '- 1\n'), '--trials', '2'], /is a mapping/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(['sweeps', 'create', 'e1', ...args], {
        ...env,
        SERVICE_SERVER_URL: 'http://127.0.0.1:9',
      });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message, args.join(' '));
    }
  });

  it('list and show: progress by run state, the best trial, stopped early shown as such, a warning; --watch exits 0 when done', async () => {
    const id = await draft('read');
    const points = await file(
      'points.json',
      JSON.stringify([{ 'optimizer.lr': 0.1 }, { 'optimizer.lr': 0.01 }, { 'optimizer.lr': 0.001 }]),
    );
    const created = await cli([
      'sweeps',
      'create',
      id,
      '--base',
      base,
      '--list',
      points,
      '--metric',
      'val_loss',
      '--max-retries',
      '1',
    ]);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /^created sweep (\S+): 3 run\(s\) of experiment/m);
    const sweepId = /^created sweep (\S+):/m.exec(created.stdout)![1]!;

    await start(id, 1);
    await log(id, 1, [0.9, 0.4]);
    await t.as(key).post(`${runPath(id, 1)}/succeed`);
    await start(id, 2);
    await log(id, 2, [0.95]);
    const run2 = (await t.as(key).get(runPath(id, 2))).body.id;
    await t.as(orchestratorKey).post(`/orchestrator/runs/${run2}/fail`, { reason: 'stopped_early' });

    const shown = await cli(['sweeps', 'show', id, sweepId]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^strategy\s+list, 3 runs$/m);
    assert.match(shown.stdout, /^objective\s+val_loss \(minimize\)$/m);
    assert.match(shown.stdout, /^max retries\s+1$/m);
    assert.match(
      shown.stdout,
      /^progress\s+1 succeeded, 1 stopped early, 0 failed, 0 running, 1 pending of 3$/m,
    );
    assert.match(shown.stdout, /^best\s+0\.4 by run 1\/1: optimizer\.lr=0\.1$/m);
    assert.match(shown.stdout, /^TRIAL\s+N\s+R\s+PARAMS\s+OBJECTIVE\s+STEP\s+STATE$/m);
    assert.match(shown.stdout, /^-\s+2\s+1\s+optimizer\.lr=0\.01\s+0\.95\s+1\s+stopped early$/m);
    assert.match(shown.stdout, /^-\s+3\s+1\s+optimizer\.lr=0\.001\s+-\s+-\s+pending$/m);
    assert.doesNotMatch(shown.stdout, /error|failed \(stopped/);

    const listed = await cli(['sweeps', 'list', id]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^ID\s+STRATEGY\s+OBJECTIVE\s+BEST\s+PROGRESS\s+CREATED$/m);
    assert.match(
      listed.stdout,
      new RegExp(`^${sweepId}\\s+list\\s+val_loss \\(minimize\\)\\s+0\\.4\\s+1 succeeded`, 'm'),
    );
    const listedJson = await json(['sweeps', 'list', id]);
    assert.deepEqual(
      listedJson.map((s: { id: string; best_value: number }) => [s.id, s.best_value]),
      [[sweepId, 0.4]],
    );

    // --watch redraws until the last run ends, then exits 0.
    const watching = spawnCli(['sweeps', 'show', id, sweepId, '--watch', '--interval', '0.1'], { home, env });
    let seen = '';
    watching.child.stdout!.on('data', (d: Buffer) => (seen += d));
    await waitFor('the first drawing', () => (seen.includes('pending of 3') ? true : undefined));
    await start(id, 3);
    await t.as(key).post(`${runPath(id, 3)}/succeed`);
    const watched = await watching.result;
    assert.equal(watched.code, 0, watched.stderr);
    assert.match(
      watched.stdout,
      /^progress\s+2 succeeded, 1 stopped early, 0 failed, 0 running, 0 pending of 3 \(done\)$/m,
    );
    // Run 3 logged no val_loss: the best stays run 1, and no warning (other runs logged it).
    assert.doesNotMatch(watched.stdout, /^warning/m);
    const done = await cli(['sweeps', 'show', id, sweepId, '--watch']);
    assert.deepEqual(
      [done.code, done.stdout.match(/^progress/gm)?.length],
      [0, 1],
      'a done sweep: one drawing',
    );
  });

  it('show names a warning when no run logged the objective metric', async () => {
    const id = await draft('warned');
    const created = await json([
      'sweeps',
      'create',
      id,
      '--base',
      base,
      '--set',
      'seed=1',
      '--metric',
      'val_los',
    ]);
    await start(id, 1);
    await log(id, 1, [0.5]);
    await t.as(key).post(`${runPath(id, 1)}/succeed`);
    const shown = await cli(['sweeps', 'show', id, created.id]);
    assert.match(
      shown.stdout,
      /^warning\s+no run has logged the objective metric `val_los` \(its runs logged `val_loss`\); check the metric's name in your training script$/m,
    );
  });
});
