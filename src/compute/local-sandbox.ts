// The local provider's sandbox: each instance runs as an unprivileged user (ASSAY_LOCAL_RUN_AS) inside
// bubblewrap, seeing a read-only system, the runner's code and its own working dir, and nothing of the
// service (its data dir, database socket, secrets, environment or processes). Detected once per process.
import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../settings/config-error.ts';
import type { Env } from '../settings/env-values.ts';
import { readSetting } from '../settings/read-setting.ts';
import { CODE_ROOT } from './runner-bundle.ts';

export type RunAs = { readonly name: string; readonly uid: number; readonly gid: number };

export type LocalSandbox =
  | { readonly mode: 'bwrap'; readonly runAs: RunAs; readonly bwrap: string; readonly setpriv: string }
  /** `reason`: why commands run as the service's own user, for the operator (log, refusal). */
  | { readonly mode: 'none'; readonly reason: string };

const detected = new Map<string, LocalSandbox>();

/**
 * The sandbox ASSAY_LOCAL_SANDBOX asks for and this machine allows. `on` without it is a ConfigError naming
 * what to install or set; `auto` without it is no sandbox, with the reason.
 */
export function localSandbox(env: Env): LocalSandbox {
  const setting = readSetting(env, 'ASSAY_LOCAL_SANDBOX') as 'auto' | 'on' | 'off';
  const user = readSetting(env, 'ASSAY_LOCAL_RUN_AS');
  const key = `${setting}\0${user}\0${env.PATH ?? ''}`;
  let sandbox = detected.get(key);
  if (!sandbox) {
    sandbox =
      setting === 'off' ? { mode: 'none', reason: 'ASSAY_LOCAL_SANDBOX=off' } : detect(user, env.PATH ?? '');
    detected.set(key, sandbox);
  }
  if (setting === 'on' && sandbox.mode === 'none')
    throw new ConfigError(`ASSAY_LOCAL_SANDBOX=on, but the sandbox cannot run here: ${sandbox.reason}`);
  return sandbox;
}

function detect(user: string, PATH: string): LocalSandbox {
  const bwrap = which('bwrap', PATH);
  if (!bwrap) return { mode: 'none', reason: 'bubblewrap is not installed: apt-get install bubblewrap' };
  const setpriv = which('setpriv', PATH);
  if (!setpriv) return { mode: 'none', reason: 'setpriv is not installed: apt-get install util-linux' };
  if (process.getuid?.() !== 0)
    return {
      mode: 'none',
      reason: 'the service does not run as root, so it cannot run commands as ASSAY_LOCAL_RUN_AS',
    };
  const runAs = lookUpUser(user);
  if (!runAs)
    return { mode: 'none', reason: `user ${user} does not exist: run scripts/setup-local-sandbox.sh` };
  if (runAs.uid === 0) return { mode: 'none', reason: `ASSAY_LOCAL_RUN_AS=${user} is root` };
  const sandbox = { mode: 'bwrap' as const, runAs, bwrap, setpriv };
  // The probe is an instance's start: the runner's Node, as the user, in the sandbox.
  const probe = spawnSync(
    bwrap,
    sandboxArgs(sandbox, {
      argv: [process.execPath, '-e', `process.exit(process.getuid() === ${runAs.uid} ? 0 : 3)`],
    }),
    { encoding: 'utf8', timeout: 20_000, env: { PATH: '/usr/bin:/bin' } },
  );
  if (probe.status !== 0) {
    const said = `${probe.error?.message ?? ''} ${probe.stderr ?? ''}`.trim().split('\n')[0];
    return {
      mode: 'none',
      reason: `bubblewrap could not start the runner as ${user} (${said || `exit ${probe.status}`}): is ${CODE_ROOT} readable by ${user}?`,
    };
  }
  return sandbox;
}

function which(name: string, PATH: string): string | undefined {
  for (const dir of [...PATH.split(':'), '/usr/bin', '/bin', '/usr/sbin', '/sbin']) {
    if (!dir) continue;
    const file = path.join(dir, name);
    if (existsSync(file)) return file;
  }
  return undefined;
}

function lookUpUser(name: string): RunAs | undefined {
  const found = spawnSync('getent', ['passwd', name], { encoding: 'utf8' });
  const fields = found.status === 0 ? found.stdout.trim().split(':') : [];
  if (fields.length < 4) return undefined;
  return { name, uid: Number(fields[2]), gid: Number(fields[3]) };
}

export type SandboxedCommand = {
  /** The command, run as the user in the sandbox. */
  argv: string[];
  /** Its working dir, the one writable place (bound at the same path); `/` when undefined. */
  cwd?: string;
  /** Directories never to show, even inside the runner's code (the service's data dir). */
  hidden?: string[];
  /** GPU ids whose device nodes the instance sees. */
  gpuIds?: readonly number[];
};

// The system, read-only; the usual merged-/usr links are links again.
const SYSTEM = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/opt'];
const NVIDIA_SHARED = ['/dev/nvidiactl', '/dev/nvidia-uvm', '/dev/nvidia-uvm-tools', '/dev/nvidia-modeset'];

/**
 * bwrap's arguments for a command. bwrap itself runs as root (it needs no user namespace) and gives the
 * command the capabilities to switch users only, which setpriv uses at once and drops with the rest.
 */
export function sandboxArgs(
  sandbox: Extract<LocalSandbox, { mode: 'bwrap' }>,
  command: SandboxedCommand,
): string[] {
  const args: string[] = [
    // A PID namespace of its own: /proc shows the run's processes only, and once its init (bwrap) is killed
    // the kernel kills every other, even one that left the process group. No --die-with-parent: the instance
    // outlives the worker that started it, as a plain process group does. No --new-session either: it would
    // put the run in a process group of its own, out of terminate's reach; the instance has no terminal to
    // inject input into (stdin is /dev/null, the spawn is a session leader without one).
    ...['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--hostname', 'assay-run'],
  ];
  const mounts: { dest: string; tree: boolean }[] = [{ dest: '/', tree: false }];
  // Directories bwrap makes on the way to a mount point are 0700 root: made here 0755 instead.
  const makeParents = (dest: string) => {
    const parts = dest.split('/').filter(Boolean);
    for (let i = 1; i < parts.length; i++) {
      const dir = '/' + parts.slice(0, i).join('/');
      const under = mounts
        .filter((m) => dir === m.dest || dir.startsWith(m.dest === '/' ? '/' : `${m.dest}/`))
        .sort((a, b) => b.dest.length - a.dest.length)[0]!;
      if (under.dest === dir || under.tree) continue;
      args.push('--perms', '0755', '--dir', dir);
      mounts.push({ dest: dir, tree: false });
    }
  };
  const bind = (flag: string, source: string, dest = source) => {
    makeParents(dest);
    args.push(flag, source, dest);
    mounts.push({ dest, tree: true });
  };
  for (const dir of SYSTEM) {
    const link = readLink(dir);
    if (link !== undefined) args.push('--symlink', link, dir);
    else if (existsSync(dir)) bind('--ro-bind', dir);
  }
  // A resolv.conf linked into /run (systemd-resolved): that one file, not /run.
  const resolv = realpath('/etc/resolv.conf');
  if (resolv && !resolv.startsWith('/etc/')) bind('--ro-bind', resolv);
  args.push('--proc', '/proc', '--dev', '/dev', '--perms', '1777', '--tmpfs', '/tmp');
  mounts.push({ dest: '/proc', tree: true }, { dest: '/dev', tree: true }, { dest: '/tmp', tree: false });
  for (const device of command.gpuIds?.length ? NVIDIA_SHARED : [])
    args.push('--dev-bind-try', device, device);
  for (const id of command.gpuIds ?? []) args.push('--dev-bind-try', `/dev/nvidia${id}`, `/dev/nvidia${id}`);
  // The runner's code: Node and the repository (or installed package) it runs from, read-only.
  for (const code of codePaths()) bind('--ro-bind', code);
  // Hidden wherever a bound tree shows it: the repository's ./.assay-data, or a service installed in /opt.
  const shown = (dir: string) =>
    mounts.some((m) => m.tree && m.dest !== '/dev' && (dir === m.dest || dir.startsWith(`${m.dest}/`)));
  for (const hidden of (command.hidden ?? []).map((dir) => realpath(dir) ?? dir)) {
    if (!shown(hidden)) continue;
    makeParents(hidden);
    args.push('--perms', '0755', '--tmpfs', hidden);
    mounts.push({ dest: hidden, tree: false });
  }
  if (command.cwd) bind('--bind', command.cwd);
  args.push('--chdir', command.cwd ?? '/');
  args.push('--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID', '--cap-add', 'CAP_SETPCAP', '--');
  const { uid, gid } = sandbox.runAs;
  args.push(
    sandbox.setpriv,
    `--reuid=${uid}`,
    `--regid=${gid}`,
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--no-new-privs',
    ...command.argv,
  );
  return args;
}

/** Node's directory and the code root, minus those inside another or inside the system. */
function codePaths(): string[] {
  const node = path.dirname(realpath(process.execPath) ?? process.execPath);
  const roots = [...new Set([realpath(CODE_ROOT) ?? CODE_ROOT, node])];
  const covered = (p: string, by: string) => p === by || p.startsWith(`${by}/`);
  return roots.filter(
    (p, i) => !SYSTEM.some((s) => covered(p, s)) && !roots.some((other, j) => j !== i && covered(p, other)),
  );
}

function readLink(file: string): string | undefined {
  try {
    const real = realpathSync(file);
    return real === file ? undefined : path.relative(path.dirname(file), real);
  } catch {
    return undefined;
  }
}

function realpath(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}
