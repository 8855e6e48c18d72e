import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { within } from './bounded-waits.ts';
import { freePort } from './free-port.ts';
import { spawnProcessGroup, type ProcessGroup } from './process-group.ts';
import { waitUntilReady } from './readiness.ts';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A PostgreSQL server of the test's own, which it may kill (the shared one at 5432 is never touched):
 * trust auth, 127.0.0.1 only, its socket and data in a temp dir. `kill()` SIGKILLs the postmaster alone, as a
 * crash would; `start()` brings it back on the same port and data directory (crash recovery included).
 */
export interface PrivatePostgres {
  readonly port: number;
  /** Connection string of the `postgres` database as the `postgres` superuser. */
  readonly url: string;
  isRunning(): boolean;
  kill(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Stops the server (whatever its state) and removes its directory. */
  cleanup(): Promise<void>;
}

/** The newest PostgreSQL under /usr/lib/postgresql (Debian's layout), or PG_BIN_DIR. */
function binDir(): string {
  if (process.env.PG_BIN_DIR) return process.env.PG_BIN_DIR;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin/initdb')))
    : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) throw new Error(`no PostgreSQL binaries under ${root}/*/bin (set PG_BIN_DIR)`);
  return path.join(root, newest, 'bin');
}

/**
 * initdb and postgres refuse to run as root: as root, run them as the `postgres` OS user (setpriv execs, so
 * pids stay).
 */
function asPostgresUser(): { prefix: string[]; uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return {
    prefix: ['setpriv', '--reuid=postgres', '--regid=postgres', '--init-groups', '--'],
    uid: id('-u'),
    gid: id('-g'),
  };
}

/** Whether any process of the group is still alive (zombies do not count: they hold no shared memory). */
function groupAlive(pgid: number): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z') return true;
    } catch {
      // The process ended while we looked.
    }
  }
  return false;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  const user = asPostgresUser();
  const root = await mkdtemp(path.join(tmpdir(), 'assay-private-pg-'));
  const dataDir = path.join(root, 'data');
  const command = (binary: string, args: string[]) =>
    (user
      ? [user.prefix[0]!, [...user.prefix.slice(1), path.join(bin, binary), ...args]]
      : [path.join(bin, binary), args]) as [string, string[]];
  let group: ProcessGroup | undefined;

  const killGroup = async () => {
    if (!group) return;
    await within(group.stop(), 15_000, 'stopping the private postgres');
    // Backends orphaned by a killed postmaster still hold its shared memory, which a new postmaster refuses.
    const deadline = Date.now() + 10_000;
    while (groupAlive(group.pid)) {
      if (Date.now() > deadline)
        throw new Error(`processes of the private postgres group ${group.pid} outlived SIGKILL`);
      await sleep(50);
    }
    group = undefined;
  };

  try {
    if (user) await chown(root, user.uid, user.gid);
    await run(
      ...command('initdb', [
        '-D',
        dataDir,
        '-U',
        'postgres',
        '--auth=trust',
        '-E',
        'UTF8',
        '--locale=C',
        '--no-sync',
        '--no-instructions',
      ]),
      { timeout: 60_000 },
    );
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
  const port = await freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;

  const start = async () => {
    await killGroup();
    // fsync off: a killed postmaster keeps the OS page cache, which is all these tests need.
    const args = [
      '-D',
      dataDir,
      '-p',
      String(port),
      '-k',
      root,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=off',
    ];
    group = spawnProcessGroup(...command('postgres', args), { name: 'private postgres', stopGraceMs: 5_000 });
    await waitUntilReady(
      group,
      async () => {
        const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
        try {
          await client.connect();
          await client.query('SELECT 1');
          return true;
        } finally {
          await client.end().catch(() => {});
        }
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
  };

  const stop = async () => {
    // SIGINT is PostgreSQL's fast shutdown (SIGTERM, which the group stop sends, waits for clients to leave).
    if (group?.isRunning()) {
      process.kill(group.pid, 'SIGINT');
      await within(group.exited, 10_000, 'fast shutdown of the private postgres').catch(() => {});
    }
    await killGroup();
  };

  try {
    await start();
  } catch (error) {
    await killGroup().catch(() => {});
    await rm(root, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    url,
    isRunning: () => group?.isRunning() ?? false,
    async kill() {
      if (!group?.isRunning()) throw new Error('the private postgres is not running');
      process.kill(group.pid, 'SIGKILL');
      await within(group.exited, 10_000, 'the postmaster exiting after SIGKILL');
    },
    start,
    stop,
    async cleanup() {
      try {
        await stop();
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    },
  };
}
