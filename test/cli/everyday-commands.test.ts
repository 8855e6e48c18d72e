import assert from 'node:assert/strict';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliJson, runCli, tempHome } from '../support/cli.ts';
import { startTestService, type TestService } from '../support/service.ts';

describe('everyday commands: experiments, variations, runs, assets, search', () => {
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

  before(async () => {
    t = await startTestService({ listen: true });
    home = await tempHome();
    env = { SERVICE_SERVER_URL: t.url!, SERVICE_API_KEY: (await t.createUser()).key };
  });
  after(async () => {
    await t.close();
    await rm(home, { recursive: true, force: true });
  });

  it('an experiment and a variation from YAML files, committed, then listed and shown', async () => {
    const spec = await file(
      'experiment.yaml',
      'name: warmup-ablation\nhypothesis: linear warmup lowers the final loss\n',
    );
    const experiment = await json(['experiments', 'create', '--file', spec]);
    assert.equal(experiment.state, 'draft');
    assert.equal(experiment.hypothesis, 'linear warmup lowers the final loss');
    const config = await file(
      'variation.yaml',
      'lr: 3.0e-4\nwarmup_steps: 500\nlaunch:\n  command: python train.py\n',
    );
    const variation = await json(['variations', 'create', experiment.id, '--file', config, '--name', 'base']);
    assert.deepEqual(
      [variation.n, variation.name, variation.config_json, variation.launch_config],
      [1, 'base', { lr: 3e-4, warmup_steps: 500 }, { command: 'python train.py' }],
    );
    assert.equal((await json(['experiments', 'commit', experiment.id])).state, 'committed');

    const listed = await json<any[]>(['experiments', 'list', '--state', 'committed']);
    assert.deepEqual(
      listed.map((e) => e.id),
      [experiment.id],
    );
    const detail = await json(['experiments', 'show', experiment.id]);
    assert.deepEqual(
      detail.variations.map((v: any) => [v.n, v.name]),
      [[1, 'base']],
    );
    assert.deepEqual(
      (await json<any[]>(['variations', 'list', experiment.id])).map((v) => v.n),
      [1],
    );
    assert.equal(
      (await json(['variations', 'show', experiment.id, '1'])).config_yaml,
      await readFile(config, 'utf8'),
    );

    const table = await cli(['experiments', 'list']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^ID\s+STATE\s+NAME\s+CREATED$/m);
    assert.match(
      table.stdout,
      new RegExp(`^${experiment.id}\\s+committed\\s+warmup-ablation\\s+\\d{4}-`, 'm'),
    );

    const run = await json(['runs', 'create', experiment.id, '1']);
    assert.deepEqual([run.r, run.state], [1, 'pending']);
    assert.deepEqual(
      (await json<any[]>(['runs', 'list', experiment.id, '1'])).map((r) => r.state),
      ['pending'],
    );
    const cancelled = await json(['runs', 'cancel', experiment.id, '1', '1']);
    assert.deepEqual([cancelled.state, cancelled.failure_reason], ['failed', 'abandoned']);
    assert.equal((await json(['runs', 'show', experiment.id, '1', '1'])).failure_reason, 'abandoned');
  });

  it('experiments create from flags: name, hypothesis, description, repeated --parent; flags override --file', async () => {
    const spec = await file('parent.yaml', 'name: from-file\nhypothesis: the file says so\n');
    const first = await json(['experiments', 'create', '--file', spec, '--name', 'first parent']);
    assert.deepEqual([first.name, first.hypothesis], ['first parent', 'the file says so']);
    const second = await json(['experiments', 'create', '--name', 'second parent']);
    const child = await json([
      'experiments',
      'create',
      '--name',
      'warmup, longer',
      '--hypothesis',
      'a longer warmup lowers the loss further',
      '--description',
      'follows both',
      '--parent',
      first.id,
      '--parent',
      second.id,
    ]);
    assert.deepEqual(
      [child.state, child.name, child.hypothesis, child.description, [...child.parent_ids].sort()],
      [
        'draft',
        'warmup, longer',
        'a longer warmup lowers the loss further',
        'follows both',
        [first.id, second.id].sort(),
      ],
    );
    const text = await cli(['experiments', 'create', '--name', 'plain']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^created experiment \S+ \(draft\): plain$/m);
    const nameless = await cli(['experiments', 'create', '--hypothesis', 'no name']);
    assert.equal(nameless.code, 2);
    assert.match(nameless.stderr, /^assay: a name is required/m);
  });

  it('upload a document, find it with search, download it byte for byte', async () => {
    const notes = await file(
      'notes.md',
      '# Warmup\n\nLinear warmup lowers the final loss of small transformers.\n',
    );
    const asset = await json(['assets', 'upload', notes, '--kind', 'document', '--name', 'warmup notes']);
    assert.deepEqual(
      [asset.state, asset.kind, asset.components['notes.md'].content_type],
      ['ready', 'document', 'text/markdown'],
    );
    const found = await json(['search', 'warmup', 'transformers']);
    assert.deepEqual(
      found.items.map((h: any) => h.asset_id),
      [asset.id],
    );
    assert.match(found.items[0].snippet, /<mark>transformers<\/mark>/);
    const text = await cli(['search', 'transformers']);
    assert.match(text.stdout, new RegExp(`^warmup notes  \\[document\\]  asset ${asset.id}`, 'm'));
    assert.deepEqual(
      (await json<any[]>(['assets', 'list', '--kind', 'document'])).map((a) => a.id),
      [asset.id],
    );
    assert.deepEqual(
      (await json<any[]>(['assets', 'list', '--name', 'warmup notes'])).map((a) => a.id),
      [asset.id],
    );
    assert.deepEqual(await json<any[]>(['assets', 'list', '--name', 'warmup']), []);
    assert.equal((await json(['assets', 'show', asset.id])).name, 'warmup notes');

    const out = path.join(home, 'downloaded');
    const got = await json(['assets', 'download', asset.id, '--output', out]);
    assert.deepEqual(
      got.files.map((f: any) => f.name),
      ['notes.md'],
    );
    assert.equal(await readFile(path.join(out, 'notes.md'), 'utf8'), await readFile(notes, 'utf8'));
    const again = await cli(['assets', 'download', asset.id, '--output', out]);
    assert.equal(again.code, 2, 'an existing file is not overwritten without --force');
    assert.equal((await cli(['assets', 'download', asset.id, '--output', out, '--force'])).code, 0);
  });

  it('exit codes: 2 for bad usage or a bad file, 1 with the error line for what the service refuses', async () => {
    const typo = await file('typo.yaml', 'name: x\nhypothesys: oops\n');
    const bad = await cli(['experiments', 'create', '--file', typo]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown key\(s\) hypothesys/);
    assert.equal((await cli(['experiments', 'show'])).code, 2);
    assert.equal((await cli(['experiments', 'list', '--bogus'])).code, 2);
    assert.equal((await cli(['runs', 'show', 'x', 'one', '1'])).code, 2);
    const missing = await cli(['experiments', 'show', '00000000-0000-4000-8000-000000000000']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^error: experiment not found \(not_found, request [0-9a-f-]+\)$/m);
    const spec = await file('draft.yaml', 'name: draft only\n');
    const draft = await json(['experiments', 'create', '--file', spec]);
    const badYaml = await file('bad.yaml', 'lr: [1, 2\n');
    const refused = await cli(['variations', 'create', draft.id, '--file', badYaml]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^error: .*line \d+.*\(invalid_yaml, request /m);
  });

  it('search on a server without search: exit 1 naming the 503', async () => {
    const off = await startTestService({ listen: true, env: { ASSAY_SEARCH: 'off' } });
    try {
      const r = await runCli(['search', 'anything'], {
        home,
        env: { SERVICE_SERVER_URL: off.url!, SERVICE_API_KEY: (await off.createUser()).key },
      });
      assert.equal(r.code, 1);
      assert.match(r.stderr, /^error: full-text search is not configured.+\(search_unavailable, request /m);
    } finally {
      await off.close();
    }
  });
});
