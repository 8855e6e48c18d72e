import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliJson, runCli, tempHome } from '../support/cli.ts';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { startTestService, type TestService } from '../support/service.ts';

describe('managed-run commands: runs provision, sweeps', () => {
  let t: TestService;
  let home: string;
  let env: Record<string, string>;
  const cli = (args: string[]) => runCli(args, { home, env });
  const json = <T = any>(args: string[]) => cliJson<T>(args, { home, env });
  const file = async (name: string, text: string) => {
    const p = path.join(home, name);
    await writeFile(p, text);
    return p;
  };
  let base: string;

  before(async () => {
    // The researcher here is not an admin, and their sweeps carry launch commands.
    t = await startTestService({
      listen: true,
      orchestrator: new FakeOrchestrator(),
      env: { ASSAY_LOCAL_COMPUTE_USERS: 'all' },
    });
    home = await tempHome();
    env = { SERVICE_SERVER_URL: t.url!, SERVICE_API_KEY: (await t.createUser()).key };
    base = await file(
      'base.yaml',
      'optimizer:\n  name: adamw\n  lr: 3.0e-4\nseed: 0\nlaunch:\n  command: python train.py\n',
    );
  });
  after(async () => {
    await t.close();
    await rm(home, { recursive: true, force: true });
  });

  it('runs provision prints the workflow, the same one on a repeat', async () => {
    const spec = await file('experiment.yaml', 'name: managed\n');
    const experiment = await json(['experiments', 'create', '--file', spec]);
    await json(['variations', 'create', experiment.id, '--file', base]);
    await json(['experiments', 'commit', experiment.id]);
    await json(['runs', 'create', experiment.id, '1']);

    const first = await json(['runs', 'provision', experiment.id, '1', '1']);
    assert.equal(first.workflow_id, `run-${experiment.id}-1-1`);
    assert.deepEqual([first.run.r, first.run.managed], [1, true]);
    const again = await json(['runs', 'provision', experiment.id, '1', '1']);
    assert.equal(again.workflow_id, first.workflow_id);

    const text = await cli(['runs', 'provision', experiment.id, '1', '1']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`^workflow\\s+run-${experiment.id}-1-1$`, 'm'));
    assert.ok(text.stdout.includes(`temporal ui  ${first.workflow_url}\n`), text.stdout);
    assert.match(
      (await cli(['runs', 'show', experiment.id, '1', '1'])).stdout,
      new RegExp(`^workflow\\s+run-${experiment.id}-1-1$`, 'm'),
    );
  });

  it('runs provision --priority and sweeps create --priority place the runs in the compute queue', async () => {
    const experiment = await json([
      'experiments',
      'create',
      '--file',
      await file('urgent.yaml', 'name: urgent\n'),
    ]);
    await json(['variations', 'create', experiment.id, '--file', base]);
    await json(['experiments', 'commit', experiment.id]);
    await json(['runs', 'create', experiment.id, '1']);
    const provisioned = await json(['runs', 'provision', experiment.id, '1', '1', '--priority', '-5']);
    assert.equal(provisioned.run.priority, -5);
    assert.match((await cli(['runs', 'show', experiment.id, '1', '1'])).stdout, /^priority\s+-5$/m);
    const refused = await cli(['runs', 'provision', experiment.id, '1', '1', '--priority', '101']);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /from -100 to 100/);

    const draft = await json(['experiments', 'create', '--file', await file('swept.yaml', 'name: swept\n')]);
    const sweep = await json([
      'sweeps',
      'create',
      draft.id,
      '--base',
      base,
      '--set',
      'seed=1,2',
      '--priority',
      '9',
    ]);
    for (const run of sweep.runs)
      assert.equal((await json(['runs', 'show', draft.id, String(run.n), String(run.r)])).priority, 9);
  });

  it('sweeps create --set builds a grid of JSON values and strings; show and cancel', async () => {
    const experiment = await json([
      'experiments',
      'create',
      '--file',
      await file('sweep.yaml', 'name: sweep\n'),
    ]);
    const sweep = await json([
      'sweeps',
      'create',
      experiment.id,
      '--base',
      base,
      '--set',
      'optimizer.lr=1e-4,3e-4',
      '--set',
      'optimizer.name=sgd,adamw',
      '--set',
      'seed=1',
      '--concurrency',
      '3',
      '--name-prefix',
      'grid',
    ]);
    assert.deepEqual([sweep.experiment_id, sweep.concurrency, sweep.runs.length], [experiment.id, 3, 4]);
    const configs = (await json<any[]>(['variations', 'list', experiment.id])).map((v) => v.config_json);
    assert.deepEqual(configs.map((c) => `${c.optimizer.name} ${c.optimizer.lr} ${c.seed}`).sort(), [
      'adamw 0.0001 1',
      'adamw 0.0003 1',
      'sgd 0.0001 1',
      'sgd 0.0003 1',
    ]);

    const first = sweep.runs[0];
    assert.equal((await cli(['runs', 'cancel', experiment.id, String(first.n), String(first.r)])).code, 0);
    const shown = await json(['sweeps', 'show', experiment.id, sweep.id]);
    assert.deepEqual([shown.id, shown.runs.length], [sweep.id, 4]);
    const table = await cli(['sweeps', 'show', experiment.id, sweep.id]);
    assert.equal(table.code, 0, table.stderr);
    // Counted from the runs' states: the cancelled pending run failed `abandoned`, the others wait.
    assert.match(
      table.stdout,
      /^progress\s+0 succeeded, 1 failed \(abandoned: 1\), 0 running, 3 pending of 4$/m,
    );
    assert.match(table.stdout, /^TRIAL\s+N\s+R\s+PARAMS\s+OBJECTIVE\s+STEP\s+STATE$/m);
    assert.equal((await json(['sweeps', 'cancel', experiment.id, sweep.id])).id, sweep.id);
  });

  it('sweeps create --list and --grid read JSON files', async () => {
    const experiment = await json([
      'experiments',
      'create',
      '--file',
      await file('list.yaml', 'name: list\n'),
    ]);
    const list = await file('points.json', '[{"optimizer.name": "sgd", "optimizer.lr": 0.1}, {"seed": 7}]');
    assert.equal(
      (await json(['sweeps', 'create', experiment.id, '--base', base, '--list', list])).runs.length,
      2,
    );
    const other = await json(['experiments', 'create', '--file', await file('grid.yaml', 'name: grid\n')]);
    const grid = await file('grid.json', '{"seed": [1, 2, 3]}');
    const text = await cli(['sweeps', 'create', other.id, '--base', base, '--grid', grid]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^created sweep \S+: 3 run\(s\) of experiment/m);
  });

  it('refuses bad sweep usage with exit code 2 before calling the server', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    const cases: Array<[string[], RegExp]> = [
      [['sweeps', 'create', id, '--set', 'seed=1'], /--base is required/],
      [['sweeps', 'create', id, '--base', base], /exactly one of --grid/],
      [['sweeps', 'create', id, '--base', base, '--set', 'seed=1', '--grid', base], /exactly one of --grid/],
      [['sweeps', 'create', id, '--base', base, '--set', 'seed'], /expected PATH=V1,V2/],
      [['sweeps', 'create', id, '--base', base, '--set', 'seed=1', '--set', 'seed=2'], /given twice/],
      [['sweeps', 'create', id, '--base', base, '--set', 'seed=1,,2'], /empty value/],
      [['sweeps', 'create', id, '--base', base, '--grid', base], /is not JSON/],
      [
        ['sweeps', 'create', id, '--base', base, '--list', await file('bad-list.json', '{"seed": [1]}')],
        /a list is a JSON array/,
      ],
      [
        ['sweeps', 'create', id, '--base', base, '--set', 'seed=1', '--concurrency', '0'],
        /option '--concurrency <n>' argument '0' is invalid/,
      ],
      [['sweeps', 'show', id], /missing required argument 'sweep'/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
    }
  });

  it('keeps JSON structure in --set values: commas inside brackets and quotes do not split', async () => {
    const experiment = await json([
      'experiments',
      'create',
      '--file',
      await file('shapes.yaml', 'name: shapes\n'),
    ]);
    const sweep = await json([
      'sweeps',
      'create',
      experiment.id,
      '--base',
      base,
      '--set',
      'layers=[64,64],[128,"a,b"]',
      '--set',
      'tag=plain,"007",true',
    ]);
    assert.equal(sweep.runs.length, 6);
    const configs = (await json<any[]>(['variations', 'list', experiment.id])).map((v) => [
      v.config_json.layers,
      v.config_json.tag,
    ]);
    const key = (c: unknown[]) => JSON.stringify(c);
    assert.deepEqual(
      configs.map(key).sort(),
      [
        [[64, 64], 'plain'],
        [[64, 64], '007'],
        [[64, 64], true],
        [[128, 'a,b'], 'plain'],
        [[128, 'a,b'], '007'],
        [[128, 'a,b'], true],
      ]
        .map(key)
        .sort(),
    );
  });
});
