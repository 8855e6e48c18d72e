import { connect } from 'node:net';
import type { ProcessGroup } from './process-group.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether something on host:port accepts a TCP connection right now. */
export function acceptsTcp(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Polls `probe` until it returns true, failing early if the server dies and at the deadline otherwise;
 * either failure stops the server and carries its output, which is where the reason is.
 */
export async function waitUntilReady(
  server: ProcessGroup,
  probe: () => Promise<boolean>,
  { timeoutMs = 30_000, intervalMs = 100 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (!server.isRunning()) {
      const how = await server.exited;
      await server.stop();
      throw new Error(`${server.name} ${how} before it was ready; its output:\n${server.output()}`);
    }
    try {
      if (await probe()) return;
    } catch (error) {
      lastError = error;
    }
    await sleep(intervalMs);
  }
  await server.stop();
  const last = lastError instanceof Error ? ` (last probe error: ${lastError.message})` : '';
  throw new Error(
    `${server.name} was not ready after ${timeoutMs} ms${last}; its output:\n${server.output()}`,
  );
}
