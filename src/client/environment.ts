// The environment snapshot a runner sends with start: what a person needs to reproduce or debug the run.
import { execFile } from 'node:child_process';
import os from 'node:os';

const PROBE_TIMEOUT_MS = 3000;

/**
 * OS, CPU, memory, Node, Python when present, the git commit when in a repository, GPUs when nvidia-smi is
 * present. Best effort and bounded: a missing or hanging tool leaves its field out, never delays the run
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
): Promise<Record<string, unknown>> {
  const [python, git, gpus] = await Promise.all([
    probe('python3', ['--version'], cwd, env).then(
      (found) => found ?? probe('python', ['--version'], cwd, env),
    ),
    probe('git', ['status', '--porcelain=v2', '--branch', '--untracked-files=no'], cwd, env),
    probe('nvidia-smi', ['-L'], cwd, env),
  ]);
  const { commit, dirty } = gitState(git);
  const snapshot: Record<string, unknown> = {
    os: process.platform,
    os_release: os.release(),
    arch: process.arch,
    hostname: os.hostname(),
    cpus: os.availableParallelism(),
    memory_bytes: os.totalmem(),
    node: process.versions.node,
    python: python?.replace(/^Python\s+/i, ''),
    git_commit: commit,
    git_dirty: dirty,
    gpus: gpus?.split('\n').filter((line) => line.trim() !== ''),
    cwd,
    command,
  };
  // JSON would drop undefined anyway; leaving them out keeps the object honest in logs too.
  return Object.fromEntries(Object.entries(snapshot).filter(([, v]) => v !== undefined));
}

/**
 * The commit and whether a tracked file differs from it, from `git status --porcelain=v2 --branch`: headers
 * start with "# " (the commit is `# branch.oid`, "(initial)" before the first commit), every other line is a
 * changed entry. Nothing outside a repository or before its first commit.
 */
function gitState(status: string | undefined): { commit?: string; dirty?: boolean } {
  if (status === undefined) return {};
  const lines = status.split('\n').filter((line) => line !== '');
  const commit = lines.find((line) => line.startsWith('# branch.oid '))?.slice('# branch.oid '.length);
  if (commit === undefined || !/^[0-9a-f]{40,64}$/.test(commit)) return {};
  return { commit, dirty: lines.some((line) => !line.startsWith('# ')) };
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
