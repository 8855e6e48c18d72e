// A real OpenSSH server on a free loopback port, its own config, host key, authorized key and pid file:
// the login node a Slurm provider submits to over SSH.
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.ts';
import { spawnProcessGroup } from './process-group.ts';
import { acceptsTcp, waitUntilReady } from './readiness.ts';

const run = promisify(execFile);
const SSHD = '/usr/sbin/sshd';
const host = '127.0.0.1';

export type Sshd = {
  /** `user@127.0.0.1`, the current user. */
  target: string;
  port: number;
  /** The client's private key, authorized on this server. */
  keyFile: string;
  /** A known_hosts file listing this server's host key for `[127.0.0.1]:port`. */
  knownHostsFile: string;
  /** The host's public key line (`ssh-ed25519 AAAA…`). */
  hostPublicKey: string;
  /** The listening sshd's pid (its connections are its children). */
  pid: number;
  /** A directory for the test's own files; deleted by stop(). */
  dir: string;
  /** sshd's log so far (it logs to stderr). */
  output(): string;
  stop(): Promise<void>;
};

/** Makes an ed25519 key pair without a passphrase; returns the public key line. */
export async function ed25519Key(file: string): Promise<string> {
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'assay-test', '-f', file]);
  return (await readFile(`${file}.pub`, 'utf8')).trim().split(' ').slice(0, 2).join(' ');
}

/** Starts sshd on a free port; install it with scripts/setup-ssh.sh (Debian: openssh-server). */
export async function startSshd(): Promise<Sshd> {
  const dir = await mkdtemp(path.join(tmpdir(), 'assay-sshd-'));
  const port = await freePort();
  const hostKey = path.join(dir, 'host_ed25519');
  const keyFile = path.join(dir, 'client_ed25519');
  const hostPublicKey = await ed25519Key(hostKey);
  await writeFile(path.join(dir, 'authorized_keys'), `${await ed25519Key(keyFile)}\n`, { mode: 0o600 });
  const knownHostsFile = path.join(dir, 'known_hosts');
  await writeFile(knownHostsFile, `[${host}]:${port} ${hostPublicKey}\n`);
  const config = path.join(dir, 'sshd_config');
  await writeFile(
    config,
    [
      `Port ${port}`,
      `ListenAddress ${host}`,
      `HostKey ${hostKey}`,
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
      'AuthenticationMethods publickey',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin prohibit-password',
      'UsePAM no',
      // The key files live below /tmp, which is world-writable.
      'StrictModes no',
      'AllowTcpForwarding no',
      'AllowAgentForwarding no',
      'X11Forwarding no',
      'PermitTTY no',
      'UseDNS no',
      'PrintMotd no',
      'PrintLastLog no',
      'LogLevel INFO',
      '',
    ].join('\n'),
  );
  // sshd running as root needs its privilege separation directory, which a package's service unit makes.
  if (process.getuid?.() === 0) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const server = spawnProcessGroup(SSHD, ['-D', '-e', '-f', config], {
    name: 'sshd',
    cleanupPaths: [dir],
  });
  await waitUntilReady(server, () => acceptsTcp(host, port));
  return {
    target: `${userInfo().username}@${host}`,
    port,
    keyFile,
    knownHostsFile,
    hostPublicKey,
    pid: server.pid,
    dir,
    output: server.output,
    stop: server.stop,
  };
}
