// Where the Slurm commands run: on this host (a login node) or over SSH on one. The provider only ever
// speaks argv to a SlurmShell, so both paths run the same sbatch, squeue, sacct and scancel.
import { execFile } from 'node:child_process';

export type ShellResult = { stdout: string; stderr: string; code: number };

export interface SlurmShell {
  /**
   * Runs one Slurm command (argv, never a shell line) with optional stdin; resolves with its exit code, and
   * rejects only when it could not be run at all or timed out (a status check that says nothing).
   */
  run(argv: readonly string[], options?: { stdin?: string; timeoutMs?: number }): Promise<ShellResult>;
}

/** The commands on this host's PATH. */
export function localSlurmShell(env: NodeJS.ProcessEnv = process.env): SlurmShell {
  return {
    run(argv, options = {}) {
      return new Promise((resolve, reject) => {
        const child = execFile(
          argv[0]!,
          argv.slice(1),
          { env, timeout: options.timeoutMs ?? 30_000, maxBuffer: 16 * 1024 * 1024 },
          (error, stdout, stderr) => {
            if (error && (typeof error.code !== 'number' || error.killed)) {
              reject(new Error(`${argv[0]} could not run: ${error.message}`));
              return;
            }
            resolve({ stdout, stderr, code: typeof error?.code === 'number' ? error.code : 0 });
          },
        );
        // A command that exits without reading its stdin (squeue, scancel) closes the pipe: EPIPE then is no
        // failure of the command, and unheard it would crash the worker.
        child.stdin?.on('error', () => undefined);
        child.stdin?.end(options.stdin ?? '');
      });
    },
  };
}
