/**
 * On the first SIGINT or SIGTERM, logs and runs `steps` (the shutdown, in order), then exits 0, or 1 when a
 * step fails or the whole does not finish within `timeoutMs` and a 15 s margin: closing the orchestrator or
 * the database must not hang the exit either.
 */
export function onShutdownSignal(
  log: { info(o: object, m: string): void; error(o: object, m: string): void },
  timeoutMs: number,
  steps: () => Promise<void>,
): void {
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal, timeoutMs }, 'shutting down');
    setTimeout(() => {
      log.error({}, 'shutdown did not finish in time; exiting');
      process.exit(1);
    }, timeoutMs + 15_000).unref();
    steps()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}
