import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The first admin's key is handed over in a file of the data directory, readable by the service's user only,
 * never through the logs: container logs are kept, shipped and read by more people than the operator.
 */
export function bootstrapKeyPath(dataDir: string): string {
  return path.join(dataDir, 'bootstrap-admin-key');
}

/** Writes (or replaces a stale) key file with mode 600. */
export async function writeBootstrapKeyFile(dataDir: string, key: string): Promise<string> {
  const file = bootstrapKeyPath(dataDir);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await writeFile(file, `${key}\n`, { mode: 0o600 });
  // `mode` applies only when the file is created; a stale file from an earlier attempt keeps its own.
  await chmod(file, 0o600);
  return file;
}

/** Reads the key and, unless `keep`, deletes the file so the key exists nowhere but with its taker. */
export async function takeBootstrapKeyFile(dataDir: string, opts: { keep?: boolean } = {}) {
  const file = bootstrapKeyPath(dataDir);
  let key: string;
  try {
    key = (await readFile(file, 'utf8')).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { file, key: undefined };
    throw err;
  }
  if (!opts.keep) await rm(file, { force: true });
  return { file, key };
}
