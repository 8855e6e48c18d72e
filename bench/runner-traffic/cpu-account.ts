// Where the CPU went during a phase: the server, its database's
// PostgreSQL backends, this load client, the rest.
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { databaseUrl } from './postgres.ts';
import { groupUsage } from './stats.ts';

/** USER_HZ, the unit of /proc CPU times. */
const TICKS_PER_S = 100;

export interface CpuSnapshot {
  atMs: number;
  server: { cpuS: number; runS: number; waitS: number };
  /** CPU seconds of each backend serving the target's database, by pid. */
  backends: Map<number, number>;
  clientS: number;
  machineS: number;
}

export interface CpuSplit {
  /** Cores kept busy over the phase (1.0 = one core flat out); `other` is everything else on the machine. */
  cores: { server: number; postgres: number; client: number; other: number };
  /** CPU milliseconds per completed operation. */
  msPerOp: { server: number; postgres: number; client: number };
  /** Of the time the server's main threads were runnable, the share spent waiting for a core. */
  serverWaiting: number;
}

async function processCpuS(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
  } catch {
    return undefined;
  }
}

async function machineBusyS(): Promise<number> {
  // cpu  user nice system idle iowait irq softirq steal …
  const f = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return (f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + f[7]!) / TICKS_PER_S;
}

/**
 * Takes snapshots for one server (its process group) and its database (backends found via pg_stat_activity).
 */
export async function cpuAccount(serverPgid: number, database: string) {
  const admin = new pg.Client({ connectionString: databaseUrl('postgres'), connectionTimeoutMillis: 10_000 });
  await admin.connect();
  return {
    async snapshot(): Promise<CpuSnapshot> {
      const { rows } = await admin.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE datname = $1',
        [database],
      );
      const backends = new Map<number, number>();
      for (const { pid } of rows) {
        const s = await processCpuS(pid);
        if (s !== undefined) backends.set(pid, s);
      }
      const { cpuS, runS, waitS } = await groupUsage(serverPgid);
      const self = process.cpuUsage();
      return {
        atMs: performance.now(),
        server: { cpuS, runS, waitS },
        backends,
        clientS: (self.user + self.system) / 1e6,
        machineS: await machineBusyS(),
      };
    },
    close: () => admin.end(),
  };
}

export type CpuAccount = Awaited<ReturnType<typeof cpuAccount>>;

/** The CPU between two snapshots, split by owner, per second and per operation. */
export function cpuSplit(before: CpuSnapshot, after: CpuSnapshot, operations: number): CpuSplit {
  const seconds = (after.atMs - before.atMs) / 1000;
  const server = after.server.cpuS - before.server.cpuS;
  // Backends that started during the phase count whole; ones that
  // ended during it are lost (pools keep theirs).
  let postgres = 0;
  for (const [pid, s] of after.backends) postgres += s - (before.backends.get(pid) ?? 0);
  const client = after.clientS - before.clientS;
  const machine = after.machineS - before.machineS;
  const ops = Math.max(1, operations);
  const wait = after.server.waitS - before.server.waitS;
  const run = after.server.runS - before.server.runS;
  return {
    cores: {
      server: server / seconds,
      postgres: postgres / seconds,
      client: client / seconds,
      other: Math.max(0, machine - server - postgres - client) / seconds,
    },
    msPerOp: {
      server: (1000 * server) / ops,
      postgres: (1000 * postgres) / ops,
      client: (1000 * client) / ops,
    },
    serverWaiting: wait / Math.max(1e-9, wait + run),
  };
}
