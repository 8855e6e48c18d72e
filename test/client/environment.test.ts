// The runner's environment snapshot: the git commit and dirtiness, Python, and which programs it starts
// for them.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { environmentSnapshot } from '../../src/client/index.ts';
import { withoutCredentials } from '../../src/client/environment.ts';

describe('environmentSnapshot', () => {
  let dir: string;
  let bin: string;
  let calls: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'assay-env-'));
    bin = path.join(dir, 'bin');
    calls = path.join(dir, 'calls.log');
    for (const sub of ['bin', 'repo', 'empty-repo', 'plain']) await mkdir(path.join(dir, sub));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * A fake program on PATH that logs its call and prints `output` (nothing when null, failing when 'fail').
   */
  async function fake(name: string, output: string | null) {
    const file = path.join(bin, name);
    const body = output === 'fail' ? 'exit 127' : output === null ? 'exit 0' : `echo '${output}'`;
    await writeFile(file, `#!/bin/sh\necho ${name} >> '${calls}'\n${body}\n`);
    await chmod(file, 0o755);
  }

  /** PATH with the fakes first, then git's directory (so git works) and nothing that holds a python. */
  function envWith(): NodeJS.ProcessEnv {
    const git = path.dirname(execFileSync('sh', ['-c', 'command -v git']).toString().trim());
    return { PATH: `${bin}:${git}`, HOME: dir };
  }

  function git(cwd: string, ...args: string[]) {
    return execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], {
      cwd,
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dir },
    })
      .toString()
      .trim();
  }

  it('takes the commit, and a tracked change as dirty while an untracked file is not', async () => {
    const repo = path.join(dir, 'repo');
    git(repo, 'init', '-q');
    await writeFile(path.join(repo, 'a.txt'), 'one\n');
    git(repo, 'add', 'a.txt');
    git(repo, 'commit', '-qm', 'first');
    const head = git(repo, 'rev-parse', 'HEAD');
    await writeFile(path.join(repo, 'untracked.txt'), 'new\n');
    let snapshot = await environmentSnapshot(['train'], repo, envWith());
    assert.equal(snapshot.git_commit, head);
    assert.equal(snapshot.git_dirty, false);
    await writeFile(path.join(repo, 'a.txt'), 'two\n');
    snapshot = await environmentSnapshot(['train'], repo, envWith());
    assert.equal(snapshot.git_commit, head);
    assert.equal(snapshot.git_dirty, true);
    assert.deepEqual(snapshot.command, ['train']);
    assert.equal(snapshot.cwd, repo);
  });

  it('leaves the git fields out outside a repository and before its first commit', async () => {
    git(path.join(dir, 'empty-repo'), 'init', '-q');
    for (const cwd of [path.join(dir, 'plain'), path.join(dir, 'empty-repo')]) {
      const snapshot = await environmentSnapshot(['train'], cwd, envWith());
      assert.equal('git_commit' in snapshot, false, cwd);
      assert.equal('git_dirty' in snapshot, false, cwd);
    }
  });

  it('takes the repository of the file the command runs, else the working directory’s, never the runner’s own', async () => {
    const code = path.join(dir, 'code');
    await mkdir(path.join(code, 'src'), { recursive: true });
    git(code, 'init', '-q');
    await writeFile(path.join(code, 'src/train.py'), 'print(1)\n');
    await writeFile(path.join(code, 'run.sh'), 'true\n');
    git(code, 'add', '.');
    git(code, 'commit', '-qm', 'code');
    const head = git(code, 'rev-parse', 'HEAD');
    const plain = path.join(dir, 'plain');
    const real = await realpath(code);
    // From outside the repository: the named file decides (a relative path from the working directory too).
    for (const command of [
      ['python3', '-u', path.join(code, 'src/train.py'), '--lr', '0.1'],
      ['torchrun', '--nproc_per_node', '2', path.join(code, 'src/train.py')],
      [path.join(code, 'run.sh')],
    ]) {
      const snapshot = await environmentSnapshot(command, plain, envWith());
      assert.deepEqual([snapshot.git_repo, snapshot.git_commit], [real, head], command.join(' '));
    }
    const relative = await environmentSnapshot(['python3', 'src/train.py'], code, envWith());
    assert.equal(relative.git_commit, head);
    // Code on the command line, or a module: the working directory's repository, here none.
    for (const command of [
      ['python3', '-c', 'print(1)', path.join(code, 'src/train.py')],
      ['python3', '-m', 'train'],
    ])
      assert.equal('git_commit' in (await environmentSnapshot(command, plain, envWith())), false);
    // The working directory lies in the runner's own repository and the command names no file of it: left out.
    const own = { runnerFile: path.join(code, 'run.sh') };
    assert.equal(
      'git_commit' in (await environmentSnapshot(['python3', '-m', 'train'], code, envWith(), own)),
      false,
    );
    // …unless the program genuinely lives there.
    const there = await environmentSnapshot(['bash', 'run.sh'], code, envWith(), own);
    assert.equal(there.git_commit, head);
  });

  it('records remote URLs without credentials', () => {
    for (const [url, clean] of [
      ['https://user:token@github.com/org/x.git', 'https://github.com/org/x.git'],
      ['https://ghp_abc@github.com/org/x', 'https://github.com/org/x'],
      ['http://h.example/x?private_token=abc', 'http://h.example/x'],
      ['ssh://git:pw@host.example:22/x.git', 'ssh://git@host.example:22/x.git'],
      ['ssh://git@host.example/x.git', 'ssh://git@host.example/x.git'],
      ['git@github.com:org/x.git', 'git@github.com:org/x.git'],
      ['/srv/git/x.git', '/srv/git/x.git'],
    ])
      assert.equal(withoutCredentials(url!), clean);
  });

  it('asks python3 alone when it answers, python only when python3 is missing, and leaves Python out without either', async () => {
    const plain = path.join(dir, 'plain');
    await fake('python3', 'Python 3.12.4');
    await fake('python', 'Python 2.7.18');
    await rm(calls, { force: true });
    assert.equal((await environmentSnapshot(['train'], plain, envWith())).python, '3.12.4');
    assert.deepEqual((await readFile(calls, 'utf8')).split('\n').filter(Boolean), ['python3']);

    await fake('python3', 'fail');
    assert.equal((await environmentSnapshot(['train'], plain, envWith())).python, '2.7.18');

    await fake('python', 'fail');
    assert.equal('python' in (await environmentSnapshot(['train'], plain, envWith())), false);
  });
});
