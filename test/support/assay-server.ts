import path from 'node:path';
import { freePort, freePorts } from './free-port.ts';
import { spawnProcessGroup, type ProcessGroup } from './process-group.ts';
import { waitUntilReady } from './readiness.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');

export interface AssayServer {
  url: string;
  process: ProcessGroup;
  /** The key from the `bootstrap admin key:` line, if this start printed one. */
  bootstrapKey: string | undefined;
  stop(): Promise<void>;
}

/** Runs `assay server` as a real process, exactly as `npm start` does, on a free port. */
export async function startAssayServer(env: Record<string, string>): Promise<AssayServer> {
  const port = Number(env.PORT ?? (await freePort()));
  // The embedded Temporal dev server defaults to 7233/8233: servers of parallel tests each get their own.
  const [temporalPort, temporalUiPort] = await freePorts(2);
  const child = spawnProcessGroup(process.execPath, [path.join(repoRoot, 'bin/assay.js'), 'server'], {
    name: 'assay server',
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ASSAY_TEMPORAL_PORT: String(temporalPort),
      ASSAY_TEMPORAL_UI_PORT: String(temporalUiPort),
      ...env,
      PORT: String(port),
    },
    stopGraceMs: 5_000,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(child, async () => (await fetch(`${url}/readyz`)).ok, {
    timeoutMs: 90_000,
    intervalMs: 200,
  });
  const bootstrapKey = /bootstrap admin key: (sk_user_\S+)/.exec(child.output())?.[1];
  return { url, process: child, bootstrapKey, stop: () => child.stop() };
}

export { repoRoot };
