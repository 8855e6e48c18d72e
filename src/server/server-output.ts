// What `assay server` prints besides its log, whether one process serves or a primary and its workers do.
import type { DestinationStream } from 'pino';
import { bootstrapKeyPath } from './admin/bootstrap-key-file.ts';

/**
 * A person at a terminal sees the key at once (the first-run flow of the embedded default); anything else
 * (container logs, files, log shippers) gets only the path of the mode-600 file that holds it.
 * Deliberately outside the structured log either way.
 */
export function announceBootstrapKey(key: string, dataDir: string): void {
  const file = bootstrapKeyPath(dataDir);
  process.stdout.write(
    process.stdout.isTTY
      ? `bootstrap admin key: ${key}\n(also in ${file} until \`assay admin bootstrap-key\` takes it)\n`
      : `bootstrap admin key written to ${file}; take it with \`assay admin bootstrap-key\`\n`,
  );
}

/** Synchronous, so the log lines and the plain lines written around them reach the terminal in order. */
export async function terminalLogStream(): Promise<DestinationStream> {
  const pretty = (await import('pino-pretty')).default;
  return pretty({ sync: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' });
}

/** The last lines a first start shows: where the UI is and what to sign in with. */
export function announceWebUi(publicUrl: string, bootstrapped: boolean): void {
  const credential = bootstrapped
    ? 'the bootstrap admin key printed above'
    : "an API key (on a fresh data directory, `npx assay admin bootstrap-key` prints the first admin's)";
  process.stdout.write(`\nWeb UI: open ${publicUrl}/ui/ and sign in with ${credential}.\n`);
}

/** The one-line summary of a start, logged once it listens. */
export function listeningFields(
  address: string,
  o: { database: string; publicUrl: string; temporalUi: string | undefined; workers: number },
) {
  return {
    address,
    database: o.database,
    docs: `${address}/docs`,
    ui: `${o.publicUrl}/ui/`,
    temporalUi: o.temporalUi,
    ...(o.workers > 1 ? { workers: o.workers } : {}),
  };
}
