// The Slurm commands on a login node over SSH: the provider's argv, quoted word by word for the remote
// shell, so nothing a launch block holds is ever read by that shell as code. The host must be the one the
// operator's known_hosts lists, and one connection is kept open and reused so a status check costs a
// round trip rather than a handshake.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { SlurmSubmission } from './slurm-config.ts';
import type { ShellResult, SlurmShell } from './slurm-shell.ts';

export type SshSubmission = Extract<SlurmSubmission, { kind: 'ssh' }>;

export type SshShellOptions = {
  /** Keep one connection open (ssh ControlMaster) and run each command over it; default true. */
  reuse?: boolean;
  /** How long the kept connection outlives its last command, in seconds; default 300. */
  persistS?: number;
  /** ssh ConnectTimeout in seconds; default 10. */
  connectTimeoutS?: number;
};

export type SshSlurmShell = SlurmShell & {
  /** Ends the kept connection; commands run after it open a new one. */
  close(): Promise<void>;
};

const MAX_OUTPUT = 16 * 1024 * 1024;
// sshd's MaxSessions (10 by default) bounds the sessions one kept connection carries at a time.
const MAX_IN_FLIGHT = 8;
// A socket path must fit sockaddr_un (104 bytes on some systems): the directory plus 40 hex of %C.
const MAX_CONTROL_DIR = 60;

/** One argv word as a POSIX shell reads it back unchanged: bare when it is plainly safe, else single-quoted. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Runs argv on the SSH target; needs `ssh` (openssh-client) on this host. */
export function sshSlurmShell(submission: SshSubmission, options: SshShellOptions = {}): SshSlurmShell {
  const reuse = options.reuse ?? true;
  let controlDir: string | undefined;
  const controlPath = () => {
    if (controlDir === undefined) {
      const base = tmpdir().length <= MAX_CONTROL_DIR - 20 ? tmpdir() : '/tmp';
      // mkdtemp makes it 0700: nobody else on this host can speak through the kept connection.
      controlDir = mkdtempSync(path.join(base, 'assay-ssh-'));
    }
    return path.join(controlDir, '%C');
  };
  const base = (): string[] => [
    '-i',
    submission.keyFile,
    ...(submission.port === undefined ? [] : ['-p', String(submission.port)]),
    '-T',
    '-x',
    '-a',
    '-o',
    'BatchMode=yes',
    '-o',
    'StrictHostKeyChecking=yes',
    '-o',
    `UserKnownHostsFile=${submission.knownHostsFile}`,
    '-o',
    'GlobalKnownHostsFile=/dev/null',
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'ClearAllForwardings=yes',
    '-o',
    `ConnectTimeout=${options.connectTimeoutS ?? 10}`,
    '-o',
    'ServerAliveInterval=15',
    '-o',
    'ServerAliveCountMax=3',
    // Keeps stderr the remote command's own (no "Permanently added…"); failures are still reported.
    '-o',
    'LogLevel=ERROR',
    ...(reuse
      ? [
          '-o',
          'ControlMaster=auto',
          '-o',
          `ControlPath=${controlPath()}`,
          '-o',
          `ControlPersist=${options.persistS ?? 300}`,
        ]
      : ['-o', 'ControlMaster=no', '-o', 'ControlPath=none']),
  ];
  // ssh gets no more of the worker's environment than it needs, so no SendEnv in an ssh_config can carry
  // the worker's secrets to the login node; without SSH_AUTH_SOCK no agent is asked either.
  const env = Object.fromEntries(
    ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'TMPDIR']
      .filter((name) => process.env[name] !== undefined)
      .map((name) => [name, process.env[name]]),
  );

  let inFlight = 0;
  const waiting: (() => void)[] = [];
  const slot = async () => {
    if (inFlight >= MAX_IN_FLIGHT) await new Promise<void>((resolve) => waiting.push(resolve));
    inFlight++;
  };
  const release = () => {
    inFlight--;
    waiting.shift()?.();
  };

  const runOnce = (argv: readonly string[], stdin: string | undefined, timeoutMs: number) =>
    new Promise<ShellResult>((resolve, reject) => {
      const child = spawn('ssh', [...base(), '--', submission.target, argv.map(shellWord).join(' ')], {
        env,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      let settled = false;
      const fail = (message: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        child.kill('SIGKILL');
        reject(new Error(message));
      };
      const timer = setTimeout(
        () => fail(`${argv[0]} over ssh to ${where(submission)} timed out after ${timeoutMs} ms`),
        timeoutMs,
      );
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        if (stdout.length > MAX_OUTPUT) fail(`${argv[0]} over ssh wrote more than ${MAX_OUTPUT} bytes`);
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr = (stderr + chunk).slice(-MAX_OUTPUT);
      });
      child.once('error', (error) => fail(`ssh could not run: ${error.message}`));
      child.once('close', (code, signal) => {
        if (settled) return;
        if (code === null) return fail(`ssh to ${where(submission)} was killed by ${signal}`);
        // 255 is ssh's own failure (connection, host key, authentication): the command may not have run.
        if (code === 255) return fail(sshFailure(submission, stderr));
        settled = true;
        clearTimeout(timer);
        resolve({ stdout, stderr, code });
      });
      // A remote command that never reads stdin closes it early; that is not a failure.
      child.stdin.on('error', () => {});
      child.stdin.end(stdin ?? '');
    });

  return {
    async run(argv, { stdin, timeoutMs = 30_000 } = {}) {
      if (argv.length === 0) throw new Error('no command to run over ssh');
      await slot();
      try {
        return await runOnce(argv, stdin, timeoutMs);
      } finally {
        release();
      }
    },
    async close() {
      if (controlDir === undefined) return;
      const dir = controlDir;
      controlDir = undefined;
      await new Promise<void>((resolve) =>
        execFile(
          'ssh',
          [
            '-o',
            `ControlPath=${path.join(dir, '%C')}`,
            '-O',
            'exit',
            ...portArgs(submission),
            '--',
            submission.target,
          ],
          { env, timeout: 10_000 },
          () => resolve(),
        ),
      );
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const portArgs = (s: SshSubmission) => (s.port === undefined ? [] : ['-p', String(s.port)]);

const where = (s: SshSubmission) => (s.port === undefined ? s.target : `${s.target}:${s.port}`);

/** What went wrong in ssh itself, naming the setting the operator fixes. */
function sshFailure(submission: SshSubmission, stderr: string): string {
  const said = stderr.trim().split('\n').slice(-3).join(' / ').slice(0, 500);
  if (/host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|host key is known/i.test(stderr))
    return (
      `ssh to ${where(submission)} refused: its host key is not the one ASSAY_SLURM_KNOWN_HOSTS ` +
      `(${submission.knownHostsFile}) lists for it; add the login node's key there (ssh-keyscan, checked ` +
      `against the cluster's published fingerprint). ssh said: ${said}`
    );
  if (/permission denied|UNPROTECTED PRIVATE KEY/i.test(stderr))
    return (
      `ssh to ${where(submission)} refused the key ASSAY_SLURM_SSH_KEY (${submission.keyFile}) ` +
      `(not authorized there, or readable by others here). ssh said: ${said}`
    );
  return `ssh to ${where(submission)} failed (ASSAY_SLURM_SSH): ${said || 'exit code 255'}`;
}
