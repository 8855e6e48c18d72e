import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, freePorts } from './free-port.ts';
import { spawnProcessGroup, type ProcessGroup } from './process-group.ts';
import { waitUntilReady } from './readiness.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');

export interface AssayServer {
  url: string;
  process: ProcessGroup;
  /**
   * The key `assay admin bootstrap-key` takes from the data directory, if this start bootstrapped an admin.
   */
  bootstrapKey: string | undefined;
  stop(): Promise<void>;
}

/**
 * Runs `assay server` as a real process, exactly as `npm start` does, on a free port; `args` follow `server`
 * (e.g. `--workers 2`). One process unless the test asks for HTTP workers: the suite starts many servers on a
 * shared machine, and the default on PostgreSQL would fork one per core.
 */
export async function startAssayServer(
  env: Record<string, string>,
  args: string[] = [],
): Promise<AssayServer> {
  const port = Number(env.PORT ?? (await freePort()));
  // The embedded Temporal dev server defaults to 7233/8233: servers of parallel tests each get their own.
  const [temporalPort, temporalUiPort] = await freePorts(2);
  const child = spawnProcessGroup(
    process.execPath,
    [path.join(repoRoot, 'bin/assay.js'), 'server', ...args],
    {
      name: 'assay server',
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        ASSAY_WORKERS: '1',
        ASSAY_TEMPORAL_PORT: String(temporalPort),
        ASSAY_TEMPORAL_UI_PORT: String(temporalUiPort),
        ...env,
        PORT: String(port),
      },
      stopGraceMs: 5_000,
    },
  );
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(child, async () => (await fetch(`${url}/readyz`)).ok, {
    timeoutMs: 90_000,
    intervalMs: 200,
  });
  const bootstrapKey = /bootstrap admin key written to /.test(child.output())
    ? await takeBootstrapKey(env)
    : undefined;
  return { url, process: child, bootstrapKey, stop: () => child.stop() };
}

/** `assay admin bootstrap-key` with the server's environment: the key, once; undefined when there is none. */
export async function takeBootstrapKey(env: Record<string, string>): Promise<string | undefined> {
  const cli = path.join(repoRoot, 'bin/assay.js');
  const result = await promisify(execFile)(process.execPath, [cli, 'admin', 'bootstrap-key'], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
  }).catch((err: { code?: number; stderr?: string }) => {
    if (err.code === 1) return undefined;
    throw err;
  });
  return result?.stdout.trim();
}

export { repoRoot };
