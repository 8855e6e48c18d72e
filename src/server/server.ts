import { loadConfig, type ServiceConfig } from './config.ts';
import { createService } from './service.ts';

/** Runs the service until SIGINT or SIGTERM, then drains requests and closes the database. */
export async function runServer(config: ServiceConfig = loadConfig()): Promise<void> {
  const service = await createService(config);
  if (service.bootstrapKey) {
    // Deliberately outside the structured log: it is shown once, to the operator, and never logged.
    process.stdout.write(`bootstrap admin key: ${service.bootstrapKey}\n`);
  }
  const address = await service.app.listen({ host: config.host, port: config.port });
  service.app.log.info({ address, database: service.db.driver, docs: `${address}/docs` }, `Assay listening on ${address}`);
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    service.app.log.info({ signal }, 'shutting down');
    service
      .close()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        service.app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}
