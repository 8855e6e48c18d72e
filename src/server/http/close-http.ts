import type { FastifyInstance } from 'fastify';

/**
 * Stops taking connections and lets the requests in flight finish; past `timeoutMs` it closes the connections
 * still open, so one hung request cannot hold a shutdown forever. Resolves true when everything finished
 * in time.
 */
export async function closeHttp(app: FastifyInstance, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const closed = app.close().then(() => true as const);
  // A keep-alive connection whose request just finished would otherwise idle until the deadline.
  const idle = setInterval(() => app.server.closeIdleConnections(), 100);
  const inTime = await Promise.race([closed, deadline]);
  clearTimeout(timer);
  clearInterval(idle);
  if (!inTime) {
    app.server.closeAllConnections();
    await closed;
  }
  return inTime;
}
