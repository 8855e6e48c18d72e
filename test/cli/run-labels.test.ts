// `assay run --name/--tag/--notes/--resume-from` label the run it creates (or relabel the one it is given),
// and the environment snapshot names the repository of the program's own script.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, realpath, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '../../src/client/index.ts';
import { runCli, tempHome } from '../support/cli.ts';
import { committedExperiment, createRun } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

describe('assay run: labels and the program’s repository', () => {
  let t: TestService;
  let key: string;
  let home: string;
  let experimentId: string;
  let client: Client;

  before(async () => {
    t = await startTestService({ listen: true });
    key = (await t.createUser()).key;
    home = await tempHome();
    experimentId = (await committedExperiment(t, key)).id;
    client = new Client({ serverUrl: t.url, apiKey: key });
  });
  after(async () => {
    client.close();
    await t.close();
    await rm(home, { recursive: true, force: true });
  });

  const assay = (args: string[], cwd = home) =>
    runCli(['run', '--experiment', experimentId, '--variation', '1', ...args], {
      home,
      cwd,
      env: { SERVICE_SERVER_URL: t.url, SERVICE_API_KEY: key },
    });
  const runNumber = (stderr: string) => Number(/as run (\d+) of variation/.exec(stderr)?.[1]);

  it('a new run gets --name, every --tag and --notes; --resume-from names the run it resumes from', async () => {
    const earlier = await createRun(t, key, experimentId);
    const result = await assay([
      '--name',
      'warmup 3e-4',
      '--tag',
      'baseline',
      '--tag',
      'lr-sweep',
      '--notes',
      'the *first* try',
      '--resume-from',
      `1.${earlier.r}`,
      '--',
      'true',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const run = await client.runs.get(experimentId, 1, runNumber(result.stderr));
    assert.equal(run.name, 'warmup 3e-4');
    assert.deepEqual(run.tags, ['baseline', 'lr-sweep']);
    assert.equal(run.notes, 'the *first* try');
    assert.equal(run.resumes_from_run_id, (await client.runs.get(experimentId, 1, earlier.r)).id);
    assert.equal(run.state, 'succeeded');
  });

  it('--run R relabels the existing run; --resume-from with --run, or a bad reference, is refused', async () => {
    const { r } = await createRun(t, key, experimentId);
    const result = await assay(['--run', String(r), '--name', 'second look', '--tag', 'rerun', '--', 'true']);
    assert.equal(result.code, 0, result.stderr);
    const run = await client.runs.get(experimentId, 1, r);
    assert.deepEqual([run.name, run.tags, run.state], ['second look', ['rerun'], 'succeeded']);

    const both = await assay(['--run', String(r), '--resume-from', '1', '--', 'true']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--resume-from is for a new run/);
    const bad = await assay(['--resume-from', 'latest', '--', 'true']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--resume-from/);
    const missing = await assay(['--resume-from', '7.99', '--', 'true']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no run 7\.99 to resume from/);
  });

  it('the environment names the git repository holding the script, its branch, and its remote without credentials', async () => {
    const repo = path.join(home, 'training-code');
    await mkdir(path.join(repo, 'scripts'), { recursive: true });
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], {
        cwd: repo,
        env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: home },
      })
        .toString()
        .trim();
    git('init', '-q');
    git('checkout', '-q', '-b', 'exp/warmup');
    await writeFile(path.join(repo, 'scripts/train.sh'), 'echo training\n');
    git('add', '.');
    git('commit', '-qm', 'first');
    git('remote', 'add', 'origin', 'https://alice:ghp_secret@git.example.com/lab/training-code.git');
    // Run from elsewhere (the home directory, in no repository): the script's repository counts.
    const result = await assay(['--', 'bash', path.join(repo, 'scripts/train.sh')]);
    assert.equal(result.code, 0, result.stderr);
    const run = await client.runs.get(experimentId, 1, runNumber(result.stderr));
    const env = run.environment as Record<string, unknown>;
    assert.equal(env.git_repo, await realpath(repo));
    assert.equal(env.git_commit, git('rev-parse', 'HEAD'));
    assert.equal(env.git_dirty, false);
    assert.equal(env.git_branch, 'exp/warmup');
    assert.equal(env.git_remote, 'https://git.example.com/lab/training-code.git');
    assert.doesNotMatch(JSON.stringify(env), /ghp_secret|alice/);

    // A tracked file changed since the commit: dirty.
    await writeFile(path.join(repo, 'scripts/train.sh'), 'echo training harder\n');
    const dirty = await assay(['--', 'bash', path.join(repo, 'scripts/train.sh')]);
    assert.equal(dirty.code, 0, dirty.stderr);
    const dirtyEnv = (await client.runs.get(experimentId, 1, runNumber(dirty.stderr))).environment as Record<
      string,
      unknown
    >;
    assert.deepEqual([dirtyEnv.git_commit, dirtyEnv.git_dirty], [git('rev-parse', 'HEAD'), true]);

    // A program in no repository (a command on PATH, run from a directory outside any): no git fields at
    // all, never Assay's own repository's.
    const outside = await assay(['--', 'true']);
    assert.equal(outside.code, 0, outside.stderr);
    const outsideEnv = (await client.runs.get(experimentId, 1, runNumber(outside.stderr)))
      .environment as Record<string, unknown>;
    assert.deepEqual(
      Object.keys(outsideEnv).filter((k) => k.startsWith('git_')),
      [],
    );
    assert.equal(outsideEnv.cwd, await realpath(home));
  });
});
