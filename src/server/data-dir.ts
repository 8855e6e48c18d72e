import { chmod, lstat, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { ServiceConfig } from './config.ts';

// Everything under ASSAY_DATA_DIR is the service's alone: the embedded database (emails and key hashes reach
// its WAL), the storage secret, the bootstrap key, Temporal's state and uploaded objects. PGlite creates its
// files 0666 whatever the umask, so a private directory above them is what keeps other users out, and the
// modes of an older tree are repaired at every start.

const PRIVATE_DIR = 0o700;
const PRIVATE_FILE = 0o600;

/** Creates the directory (and missing parents) private to the service's user; an existing one is made so. */
export async function makePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR });
  // A directory of another owner cannot be changed; the walk at start says so.
  await chmod(dir, PRIVATE_DIR).catch(notPermitted);
}

/**
 * Takes group and other bits off every directory and file under `dir` (itself included), symlinks left alone;
 * answers how many entries it changed, and how many it could not (another user's). Entries that vanish while
 * it walks (temporary files) are skipped.
 */
export async function repairPrivateModes(dir: string): Promise<{ fixed: number; refused: number }> {
  const counts = { fixed: 0, refused: 0 };
  const visit = async (entry: string): Promise<void> => {
    const stat = await lstat(entry).catch(ignoreMissing);
    if (!stat || stat.isSymbolicLink()) return;
    if ((stat.mode & 0o077) !== 0) {
      const owner = stat.mode & 0o700;
      const changed = await chmod(entry, owner | (stat.isDirectory() ? PRIVATE_DIR : PRIVATE_FILE)).then(
        () => true,
        (err: NodeJS.ErrnoException) => ignoreMissing(err) ?? notPermitted(err),
      );
      if (changed) counts.fixed++;
      else if (changed === false) counts.refused++;
    }
    if (!stat.isDirectory()) return;
    const names = (await readdir(entry).catch(ignoreMissing)) ?? [];
    for (const name of names) await visit(path.join(entry, name));
  };
  await visit(dir);
  return counts;
}

function ignoreMissing(err: NodeJS.ErrnoException): undefined {
  if (err.code === 'ENOENT') return undefined;
  throw err;
}

function notPermitted(err: NodeJS.ErrnoException): false {
  if (err.code === 'EPERM') return false;
  throw err;
}

/**
 * Once per start, after the database, the storage and the bootstrap key file exist: the data directory made
 * private, and the local object store's directory when it lies elsewhere. Logs how many entries it changed.
 */
export async function repairDataDirModes(
  config: Pick<ServiceConfig, 'dataDir' | 'storage'>,
  log: { warn(o: object, m: string): void },
): Promise<void> {
  const dirs = [config.dataDir];
  const storageDir = config.storage.kind === 'local' ? config.storage.dir : undefined;
  if (storageDir && path.relative(config.dataDir, storageDir).startsWith('..')) dirs.push(storageDir);
  for (const dir of dirs) {
    const { fixed, refused } = await repairPrivateModes(dir);
    if (fixed > 0)
      log.warn(
        { dir, fixed },
        `data directory: made ${fixed} entries other users could reach private (0700/0600)`,
      );
    if (refused > 0)
      log.warn(
        { dir, refused },
        `data directory: ${refused} entries other users can reach belong to another user; chown them`,
      );
  }
}
