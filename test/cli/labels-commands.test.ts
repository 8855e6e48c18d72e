// The CLI's run labels and experiment tags: `assay runs list` (a variation's, or every variation's) with
// --tag/--state/--archived, `assay runs update`, `assay runs show`, `assay experiments create/list --tag`,
// `assay experiments tag` and `assay experiments delete`, against a real service.
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliJson, runCli, tempHome } from '../support/cli.ts';
import { addVariation, createExperiment } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

describe('labels commands: runs list/update/show, experiments --tag, tag, delete', () => {
  let t: TestService;
  let home: string;
  let env: Record<string, string>;
  let key: string;
  const cli = (args: string[], input?: string) =>
    runCli(args, { home, env, ...(input === undefined ? {} : { input }) });
  const json = <T = any>(args: string[]) => cliJson<T>(args, { home, env });
  const ok = async (args: string[]) => {
    const r = await cli(args);
    assert.equal(r.code, 0, `assay ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };

  before(async () => {
    t = await startTestService({ listen: true });
    home = await tempHome();
    key = (await t.createUser()).key;
    env = { SERVICE_SERVER_URL: t.url!, SERVICE_API_KEY: key };
  });
  after(async () => {
    await t.close();
    await rm(home, { recursive: true, force: true });
  });

  it('runs update names, tags, annotates and archives; runs list filters and shows NAME and TAGS; show prints them', async () => {
    const e = await createExperiment(t, key, { name: 'labels' });
    await addVariation(t, key, e.id, 'lr: 0.1\n');
    await addVariation(t, key, e.id, 'lr: 0.2\n');
    assert.equal((await t.as(key).post(`/experiments/${e.id}/commit`)).status, 200);
    for (const n of [1, 1, 2]) await json(['runs', 'create', e.id, String(n)]);

    const named = await json([
      'runs',
      'update',
      e.id,
      '1',
      '1',
      '--name',
      'warmup 500',
      '--tag',
      'baseline',
      '--tag',
      'seed-1',
      '--notes',
      '# why\nwarmup matters',
    ]);
    assert.deepEqual(
      [named.name, named.tags, named.notes],
      ['warmup 500', ['baseline', 'seed-1'], '# why\nwarmup matters'],
    );
    const notes = path.join(home, 'notes.md');
    await writeFile(notes, 'from a *file*\n');
    const second = await json(['runs', 'update', e.id, '1', '2', '--tag', 'baseline', '--notes-file', notes]);
    assert.deepEqual([second.tags, second.notes], [['baseline'], 'from a *file*\n']);
    await json(['runs', 'update', e.id, '2', '1', '--tag', 'baseline', '--tag', 'seed-1']);

    const table = await ok(['runs', 'list', e.id, '1']);
    assert.match(table, /^R\s+NAME\s+TAGS\s+STATE\s/m);
    assert.match(table, /^1\s+warmup 500\s+baseline,seed-1\s+pending/m);
    assert.match(table, /^2\s+-\s+baseline\s+pending/m);
    const rs = (runs: any[]) => runs.map((r) => `${r.n}.${r.r}`);
    assert.deepEqual(rs(await json(['runs', 'list', e.id, '1', '--tag', 'seed-1'])), ['1.1']);
    assert.deepEqual(rs(await json(['runs', 'list', e.id, '--tag', 'baseline', '--tag', 'seed-1'])), [
      '2.1',
      '1.1',
    ]);
    assert.deepEqual(rs(await json(['runs', 'list', e.id, '--state', 'running'])), []);
    const everything = await ok(['runs', 'list', e.id]);
    assert.match(everything, /^N\s+R\s+NAME\s+TAGS\s+STATE\s/m);
    assert.match(everything, /^2\s+1\s+-\s+baseline,seed-1\s+pending/m);
    const paged = await cli(['runs', 'list', e.id, '--limit', '2']);
    assert.equal(paged.stdout.trim().split('\n').length, 3, paged.stdout);
    assert.match(paged.stderr, /more: --all/);
    assert.equal(rs(await json(['runs', 'list', e.id, '--limit', '1', '--all'])).length, 3);

    const shown = await ok(['runs', 'show', e.id, '1', '1']);
    assert.match(shown, /^name\s+warmup 500$/m);
    assert.match(shown, /^tags\s+baseline, seed-1$/m);
    assert.match(shown, /^notes:\n {2}# why\n {2}warmup matters$/m);

    const archived = await ok(['runs', 'update', e.id, '1', '2', '--archive']);
    assert.match(archived, /\(archived\)/);
    assert.deepEqual(rs(await json(['runs', 'list', e.id, '1'])), ['1.1']);
    assert.deepEqual(rs(await json(['runs', 'list', e.id, '1', '--archived'])), ['1.1', '1.2']);
    assert.match(await ok(['runs', 'show', e.id, '1', '2']), /^archived\s+\d{4}-/m);
    await ok(['runs', 'update', e.id, '1', '2', '--unarchive', '--clear-tags']);
    const cleared = await json(['runs', 'update', e.id, '1', '1', '--no-name']);
    assert.equal(cleared.name, null);
    assert.deepEqual(rs(await json(['runs', 'list', e.id, '1', '--tag', 'baseline'])), ['1.1']);

    for (const args of [
      ['runs', 'update', e.id, '1', '1'],
      ['runs', 'update', e.id, '1', '1', '--archive', '--unarchive'],
      ['runs', 'update', e.id, '1', '1', '--notes', 'x', '--notes-file', notes],
      ['runs', 'list', e.id, '1', '--all'],
      ['runs', 'list', e.id, '--state', 'done'],
    ]) {
      const r = await cli(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    }
    const refused = await cli(['runs', 'update', e.id, '1', '1', '--tag', 'a,b']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /validation_failed/);
  });

  it('experiments create/list --tag, experiments tag adds and removes, in any state', async () => {
    const marker = `cli${Date.now()}`;
    const created = await json([
      'experiments',
      'create',
      '--name',
      'tagged',
      '--tag',
      marker,
      '--tag',
      'vision',
    ]);
    assert.deepEqual(created.tags, [marker, 'vision']);
    const spec = path.join(home, 'experiment.yaml');
    await writeFile(spec, `name: from-file\ntags: [${marker}, nlp]\n`);
    const fromFile = await json(['experiments', 'create', '--file', spec]);
    assert.deepEqual(fromFile.tags, [marker, 'nlp']);
    const names = async (...tags: string[]) =>
      (await json<any[]>(['experiments', 'list', ...tags.flatMap((x) => ['--tag', x])])).map((x) => x.name);
    assert.deepEqual(await names(marker), ['from-file', 'tagged']);
    assert.deepEqual(await names(marker, 'nlp'), ['from-file']);
    const table = await ok(['experiments', 'list', '--tag', marker]);
    assert.match(table, /^ID\s+STATE\s+NAME\s+CREATED\s+TAGS$/m);
    assert.match(table, new RegExp(`tagged\\s+\\d{4}-\\S+ \\S+\\s+${marker},vision$`, 'm'));

    await addVariation(t, key, created.id);
    await json(['experiments', 'commit', created.id]);
    const tagged = await ok(['experiments', 'tag', created.id, 'final', 'vision']);
    assert.equal(tagged, `experiment ${created.id} tags: ${marker}, vision, final\n`);
    const removed = await json(['experiments', 'tag', created.id, '--remove', 'vision']);
    assert.deepEqual(removed.tags, [marker, 'final']);
    assert.match(
      await ok(['experiments', 'show', created.id]),
      new RegExp(`^tags\\s+${marker}, final$`, 'm'),
    );
    assert.equal((await cli(['experiments', 'tag', created.id])).code, 2, 'nothing to add or remove');
  });

  it('experiments delete: a draft once confirmed (--yes, or "y"); no answer keeps it; a committed one is kept', async () => {
    const draft = await json(['experiments', 'create', '--name', 'scratch']);
    await addVariation(t, key, draft.id);
    for (const input of ['', 'n\n']) {
      const unanswered = await cli(['experiments', 'delete', draft.id], input);
      assert.equal(unanswered.code, 1, unanswered.stderr);
      assert.match(
        unanswered.stderr,
        /delete draft experiment "scratch" with its 1 variation\(s\)\? \[y\/N\]/,
      );
      assert.match(unanswered.stderr, /not deleted \(--yes deletes without asking\)/);
      assert.equal((await t.as(key).get(`/experiments/${draft.id}`)).status, 200, 'still there');
    }
    const answered = await cli(['experiments', 'delete', draft.id], 'y\n');
    assert.equal(answered.code, 0, answered.stderr);
    assert.equal(answered.stdout, `deleted experiment ${draft.id}\n`);
    assert.equal((await t.as(key).get(`/experiments/${draft.id}`)).status, 404);

    const other = await json(['experiments', 'create', '--name', 'scratch 2']);
    const deleted = await ok(['experiments', 'delete', other.id, '--yes']);
    assert.equal(deleted, `deleted experiment ${other.id}\n`);
    assert.equal((await t.as(key).get(`/experiments/${other.id}`)).status, 404);
    const again = await cli(['experiments', 'delete', other.id, '--yes']);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /not_found/);

    const committed = await json(['experiments', 'create', '--name', 'kept']);
    await addVariation(t, key, committed.id);
    await json(['experiments', 'commit', committed.id]);
    const refused = await cli(['experiments', 'delete', committed.id, '-y']);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /only a draft experiment can be deleted; this one is committed \(experiment_not_draft/,
    );
  });
});
