// The Slurm provider's commands over SSH, through a real sshd: argv arrives word for word (the remote shell
// never reads a word as code), stdin and the remote exit code pass through, an unknown or changed host key
// is refused naming ASSAY_SLURM_KNOWN_HOSTS, and ssh's own failures and timeouts reject.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ShellResult } from '../../src/compute/slurm-shell.ts';
import { sshSlurmShell, type SshSubmission } from '../../src/compute/slurm-ssh-shell.ts';
import { freePort } from '../support/free-port.ts';
import { ed25519Key, startSshd, type Sshd } from '../support/sshd.ts';

describe('Slurm commands over SSH', () => {
  let sshd: Sshd;
  let submission: SshSubmission;
  before(async () => {
    sshd = await startSshd();
    submission = {
      kind: 'ssh',
      target: sshd.target,
      port: sshd.port,
      keyFile: sshd.keyFile,
      knownHostsFile: sshd.knownHostsFile,
    };
  });
  after(() => sshd?.stop());

  const accepted = () => sshd.output().match(/Accepted publickey/g)?.length ?? 0;

  for (const reuse of [true, false]) {
    it(`passes each argv word exactly, never to the remote shell as code (reuse: ${reuse})`, async () => {
      const shell = sshSlurmShell(submission, { reuse });
      try {
        const marker = path.join(sshd.dir, `injected-${reuse}`);
        const words = [
          'a b  c',
          "it's",
          '"double"',
          `$(touch ${marker})`,
          `\`touch ${marker}\``,
          `; touch ${marker}`,
          `| touch ${marker} &&`,
          '*',
          '~',
          '$HOME',
          'line\nbreak',
          '\\',
          '',
          '--partition=gpu',
          'ünïcödé',
        ];
        const result = await shell.run(['printf', '%s\\0', ...words]);
        assert.equal(result.code, 0, result.stderr);
        assert.deepEqual(result.stdout.split('\0').slice(0, -1), words);
        assert.equal(existsSync(marker), false, 'no word ran as a command');
      } finally {
        await shell.close();
      }
    });
  }

  it('passes stdin through and reports the remote exit code, stdout and stderr', async () => {
    const shell = sshSlurmShell(submission);
    try {
      const script = `#!/bin/bash\n#SBATCH --job-name='x y'\necho "$HOME"\n${'x'.repeat(200_000)}\n`;
      const echoed = await shell.run(['cat'], { stdin: script });
      assert.deepEqual([echoed.code, echoed.stdout], [0, script]);
      const failed = await shell.run(['sh', '-c', 'cat >/dev/null; echo out; echo err >&2; exit 7'], {
        stdin: 'ignored',
      });
      assert.deepEqual(failed, { stdout: 'out\n', stderr: 'err\n', code: 7 });
      // A command that does not read stdin at all is not a failure.
      const unread = await shell.run(['true'], { stdin: 'y'.repeat(1_000_000) });
      assert.equal(unread.code, 0);
    } finally {
      await shell.close();
    }
  });

  it('reuses one connection for successive commands, and close() ends it', async () => {
    const reused = sshSlurmShell(submission);
    const before = accepted();
    for (let i = 0; i < 5; i++) assert.equal((await reused.run(['true'])).code, 0);
    // More at once than one connection's sessions (sshd's MaxSessions, 10) all still run.
    const many = await Promise.all(Array.from({ length: 20 }, (_, i) => reused.run(['echo', String(i)])));
    assert.deepEqual(
      many.map((r) => r.stdout),
      Array.from({ length: 20 }, (_, i) => `${i}\n`),
    );
    assert.equal(accepted() - before, 1, sshd.output());
    await reused.close();
    assert.equal((await reused.run(['true'])).code, 0);
    assert.equal(accepted() - before, 2, 'a command after close() opens a new connection');
    await reused.close();

    const fresh = sshSlurmShell(submission, { reuse: false });
    const start = accepted();
    for (let i = 0; i < 3; i++) assert.equal((await fresh.run(['true'])).code, 0);
    assert.equal(accepted() - start, 3);
  });

  it('opens a new connection when the kept one is dropped by the login node', async () => {
    const shell = sshSlurmShell(submission);
    try {
      assert.equal((await shell.run(['true'])).code, 0);
      const before = accepted();
      // The listener's children are its connections: ending them drops the kept one, as a reboot would.
      const children = readFileSync(`/proc/${sshd.pid}/task/${sshd.pid}/children`, 'utf8').trim().split(' ');
      assert.ok(children.length > 0 && children[0] !== '', 'a kept connection');
      for (const pid of children) process.kill(Number(pid), 'SIGKILL');
      let answered: ShellResult | undefined;
      for (let i = 0; i < 3 && answered === undefined; i++)
        answered = await shell.run(['echo', 'again']).catch(() => undefined);
      assert.equal(answered?.stdout, 'again\n');
      assert.equal(accepted() - before, 1, sshd.output());
    } finally {
      await shell.close();
    }
  });

  it('refuses a host that known_hosts does not list, naming ASSAY_SLURM_KNOWN_HOSTS, and runs nothing', async () => {
    const empty = path.join(sshd.dir, 'known_hosts.empty');
    await writeFile(empty, '');
    const marker = path.join(sshd.dir, 'ran-on-unknown-host');
    const shell = sshSlurmShell({ ...submission, knownHostsFile: empty });
    try {
      await assert.rejects(shell.run(['touch', marker]), (error: Error) => {
        assert.match(error.message, /ASSAY_SLURM_KNOWN_HOSTS/);
        assert.match(error.message, /host key/);
        assert.ok(error.message.includes(empty), error.message);
        return true;
      });
      assert.equal(existsSync(marker), false);
    } finally {
      await shell.close();
    }
  });

  it('refuses a host whose key is not the one known_hosts lists, naming ASSAY_SLURM_KNOWN_HOSTS', async () => {
    const other = await ed25519Key(path.join(sshd.dir, 'impostor'));
    const wrong = path.join(sshd.dir, 'known_hosts.wrong');
    await writeFile(wrong, `[127.0.0.1]:${sshd.port} ${other}\n`);
    const marker = path.join(sshd.dir, 'ran-on-changed-host');
    for (const reuse of [true, false]) {
      const shell = sshSlurmShell({ ...submission, knownHostsFile: wrong }, { reuse });
      try {
        await assert.rejects(shell.run(['touch', marker]), /ASSAY_SLURM_KNOWN_HOSTS/);
      } finally {
        await shell.close();
      }
    }
    assert.equal(existsSync(marker), false);
  });

  it('rejects a key the host does not authorize, naming ASSAY_SLURM_SSH_KEY', async () => {
    const stranger = path.join(sshd.dir, 'stranger');
    await ed25519Key(stranger);
    const shell = sshSlurmShell({ ...submission, keyFile: stranger });
    try {
      await assert.rejects(shell.run(['true']), /ASSAY_SLURM_SSH_KEY/);
    } finally {
      await shell.close();
    }
  });

  it('rejects when nothing answers (a status check that says nothing), within the connect timeout', async () => {
    const shell = sshSlurmShell({ ...submission, port: await freePort() }, { connectTimeoutS: 2 });
    try {
      await assert.rejects(shell.run(['squeue']), /ssh to .* failed/);
    } finally {
      await shell.close();
    }
  });

  it('rejects a command that outlives its timeout, promptly', async () => {
    const shell = sshSlurmShell(submission);
    try {
      const started = Date.now();
      await assert.rejects(shell.run(['sleep', '30'], { timeoutMs: 1_000 }), /timed out after 1000 ms/);
      assert.ok(Date.now() - started < 5_000, `took ${Date.now() - started} ms`);
      // The kept connection still serves the next command.
      assert.equal((await shell.run(['echo', 'after'])).stdout, 'after\n');
    } finally {
      await shell.close();
    }
  });
});
