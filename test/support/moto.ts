import { freePort } from './free-port.ts';
import { spawnProcessGroup } from './process-group.ts';
import { waitUntilReady } from './readiness.ts';
import { resolveTool } from './tool-paths.ts';

export type Moto = {
  endpoint: string;
  /** Leader of the server's process group. */
  pid: number;
  stop(): Promise<void>;
};

const host = '127.0.0.1';

/** Starts moto_server, an in-memory endpoint for the AWS APIs (the EC2 provider's tests use its EC2 API). */
export async function startMoto(): Promise<Moto> {
  const port = await freePort();
  const server = spawnProcessGroup(resolveTool('moto_server'), ['-H', host, '-p', String(port)], {
    name: 'moto_server',
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
  });
  const endpoint = `http://${host}:${port}`;
  await waitUntilReady(server, async () => {
    const response = await fetch(`${endpoint}/moto-api/`, { signal: AbortSignal.timeout(2_000) });
    await response.body?.cancel();
    return response.ok;
  });
  return { endpoint, pid: server.pid, stop: server.stop };
}
