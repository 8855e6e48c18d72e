// The environment snapshot a runner sends with start: what a person needs to reproduce or debug the run.
import { execFile } from 'node:child_process';
import os from 'node:os';

const PROBE_TIMEOUT_MS = 3000;

/**
 * OS, CPU, memory, Node, Python when present, the git commit when in a repository, GPUs when nvidia-smi is
 * present. Best effort and bounded: a missing or hanging tool leaves its field out, never delays the run long.
 */
export async function environmentSnapshot(
  command: readonly string[] = process.argv,
  cwd: string = process.cwd(),
): Promise<Record<string, unknown>> {
  const [python3, python, commit, status, gpus] = await Promise.all([
    probe('python3', ['--version'], cwd),
    probe('python', ['--version'], cwd),
    probe('git', ['rev-parse', 'HEAD'], cwd),
    probe('git', ['status', '--porcelain', '--untracked-files=no'], cwd),
    probe('nvidia-smi', ['-L'], cwd),
  ]);
  const snapshot: Record<string, unknown> = {
    os: process.platform,
    os_release: os.release(),
    arch: process.arch,
    hostname: os.hostname(),
    cpus: os.availableParallelism(),
    memory_bytes: os.totalmem(),
    node: process.versions.node,
    python: (python3 ?? python)?.replace(/^Python\s+/i, ''),
    git_commit: commit,
    git_dirty: commit === undefined || status === undefined ? undefined : status !== '',
    gpus: gpus?.split('\n').filter((line) => line.trim() !== ''),
    cwd,
    command,
  };
  // JSON would drop undefined anyway; leaving them out keeps the object honest in logs too.
  return Object.fromEntries(Object.entries(snapshot).filter(([, v]) => v !== undefined));
}

function probe(file: string, args: string[], cwd: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { cwd, timeout: PROBE_TIMEOUT_MS, killSignal: 'SIGKILL', windowsHide: true },
      (error, stdout, stderr) => {
        // Old Pythons print their version on stderr.
        resolve(error ? undefined : String(stdout).trim() || String(stderr).trim() || '');
      },
    );
  });
}
