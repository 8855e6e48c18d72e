// The environment snapshot a runner sends with start: what a person needs to reproduce or debug the run.
import { execFile } from 'node:child_process';
import { realpath, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const PROBE_TIMEOUT_MS = 3000;

/** What the snapshot leaves out. */
export interface EnvironmentSnapshotOptions {
  /**
   * A file of the program taking the snapshot (`assay run`'s own): when the command names no file and the
   * working directory lies in the repository holding it, that repository is the runner's, not the
   * program's, and its git fields are left out.
   */
  runnerFile?: string;
}

/**
 * OS, CPU, memory, Node, Python when present, the program's git repository, GPUs when nvidia-smi is
 * present. The repository is the one holding the file the command names (`python path/to/train.py`,
 * `./run.sh`: the first argument that is a file, unless `-c` or `-m` comes first), else the working
 * directory's: its top directory, commit, whether a tracked file changed, branch, and remote URL without
 * credentials (the upstream's remote, else `origin`, else the first). Best effort and bounded: a missing or hanging tool leaves its field out, never delays the run
 * long. A managed run's runner takes it on every start, so it starts as few programs as it can: `python` only
 * when there is no `python3` (each may be a pyenv shim, a shell script costing ~50 ms of CPU), and one `git
 * status` for both the commit and whether tracked files changed. `env` is a plain record, not
 * NodeJS.ProcessEnv: this signature is in the published declarations, which must typecheck
 * without @types/node.
 */
export async function environmentSnapshot(
  command: readonly string[] = process.argv,
  cwd: string = process.cwd(),
  env: Record<string, string | undefined> = process.env,
  options: EnvironmentSnapshotOptions = {},
): Promise<Record<string, unknown>> {
  const program = await programDir(command, cwd);
  const [python, gitRepo, gpus] = await Promise.all([
    probe('python3', ['--version'], cwd, env).then(
      (found) => found ?? probe('python', ['--version'], cwd, env),
    ),
    gitRepository(program.dir, env).then(async (repo) =>
      repo && !program.named && (await holds(repo.root, options.runnerFile)) ? undefined : repo,
    ),
    probe('nvidia-smi', ['-L'], cwd, env),
  ]);
  const snapshot: Record<string, unknown> = {
    os: process.platform,
    os_release: os.release(),
    arch: process.arch,
    hostname: os.hostname(),
    cpus: os.availableParallelism(),
    memory_bytes: os.totalmem(),
    node: process.versions.node,
    python: python?.replace(/^Python\s+/i, ''),
    git_repo: gitRepo?.root,
    git_commit: gitRepo?.commit,
    git_dirty: gitRepo?.dirty,
    git_branch: gitRepo?.branch,
    git_remote: gitRepo?.remote,
    gpus: gpus?.split('\n').filter((line) => line.trim() !== ''),
    cwd,
    command,
  };
  // JSON would drop undefined anyway; leaving them out keeps the object honest in logs too.
  return Object.fromEntries(Object.entries(snapshot).filter(([, v]) => v !== undefined));
}

/** The directory of the file the command runs, and whether the command named one (else: `cwd`). */
async function programDir(command: readonly string[], cwd: string): Promise<{ dir: string; named: boolean }> {
  const [first, ...args] = command;
  const candidates: string[] = [];
  if (first?.includes('/')) candidates.push(first);
  else
    for (const arg of args.slice(0, 8)) {
      if (arg === '-c' || arg === '-m' || arg === '-e') break; // code on the command line, or a module
      if (!arg.startsWith('-')) candidates.push(arg);
    }
  for (const candidate of candidates) {
    const file = path.resolve(cwd, candidate);
    if (
      await stat(file).then(
        (s) => s.isFile(),
        () => false,
      )
    )
      return { dir: path.dirname(file), named: true };
    if (candidate === first) break;
  }
  return { dir: cwd, named: false };
}

/** Whether `file` lies under `dir` (both by their real paths). */
async function holds(dir: string, file: string | undefined): Promise<boolean> {
  if (file === undefined) return false;
  const real = await realpath(file).catch(() => undefined);
  const root = await realpath(dir).catch(() => dir);
  return real !== undefined && (real === root || real.startsWith(root + path.sep));
}

interface GitRepository {
  root: string;
  commit: string;
  dirty: boolean;
  branch?: string;
  remote?: string;
}

/**
 * The repository holding `dir`, from `git status --porcelain=v2 --branch` (headers start with "# ": the
 * commit is `# branch.oid`, "(initial)" before the first commit, the branch `# branch.head`, "(detached)"
 * off one; every other line is a changed entry), `git rev-parse --show-toplevel` and the remotes' URLs.
 * Nothing outside a repository or before its first commit.
 */
async function gitRepository(
  dir: string,
  env: Record<string, string | undefined>,
): Promise<GitRepository | undefined> {
  const [status, root, remotes] = await Promise.all([
    probe('git', ['status', '--porcelain=v2', '--branch', '--untracked-files=no'], dir, env),
    probe('git', ['rev-parse', '--show-toplevel'], dir, env),
    probe('git', ['config', '--get-regexp', '^remote\\..*\\.url$'], dir, env),
  ]);
  if (status === undefined || !root) return undefined;
  const lines = status.split('\n').filter((line) => line !== '');
  const header = (name: string) =>
    lines.find((line) => line.startsWith(`# branch.${name} `))?.slice(`# branch.${name} `.length);
  const commit = header('oid');
  if (commit === undefined || !/^[0-9a-f]{40,64}$/.test(commit)) return undefined;
  const head = header('head');
  const urls = new Map<string, string>();
  for (const line of (remotes ?? '').split('\n')) {
    const match = /^remote\.(.+)\.url (.+)$/.exec(line);
    if (match) urls.set(match[1]!, match[2]!);
  }
  const upstream = header('upstream')?.split('/')[0];
  const remote = urls.get(upstream ?? '') ?? urls.get('origin') ?? urls.values().next().value;
  return {
    root,
    commit,
    dirty: lines.some((line) => !line.startsWith('# ')),
    ...(head && head !== '(detached)' ? { branch: head } : {}),
    ...(remote ? { remote: withoutCredentials(remote) } : {}),
  };
}

/**
 * A remote URL fit to record: `https://user:token@host/x` → `https://host/x` (for http, https and ftp the
 * whole user part goes, since a token alone may stand there), `ssh://git:secret@host/x` → `ssh://git@host/x`;
 * a query, which may carry a token, goes too. `git@host:x` has no secret and stays.
 */
export function withoutCredentials(url: string): string {
  const match = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*@)?([^?#]*)/i.exec(url);
  if (!match) return url;
  const [, scheme, userinfo, rest] = match;
  let user = '';
  if (userinfo && !/^(https?|ftps?)$/i.test(scheme!)) user = `${userinfo.slice(0, -1).split(':')[0]}@`;
  return `${scheme}://${user}${rest}`;
}

function probe(
  file: string,
  args: string[],
  cwd: string,
  env: Record<string, string | undefined>,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { cwd, env, timeout: PROBE_TIMEOUT_MS, killSignal: 'SIGKILL', windowsHide: true },
      (error, stdout, stderr) => {
        // Old Pythons print their version on stderr.
        resolve(error ? undefined : String(stdout).trim() || String(stderr).trim() || '');
      },
    );
  });
}
