// The database's own limit: pgbench running the very statement(s) the service's heartbeat sends.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Principal } from '../../src/server/auth/principal.ts';
import type { Db, Queryable } from '../../src/server/db/database.ts';
import { heartbeats } from '../../src/server/runs/run-service.ts';
import { cpuAccount, cpuSplit, type CpuSnapshot } from './cpu-account.ts';
import type { PhaseResult } from './load.ts';
import { Latencies } from './stats.ts';
import { PG_HOST, PG_PORT } from './postgres.ts';

const USER = '00000000-0000-4000-8000-00000000000u';
const EXPERIMENT = '00000000-0000-4000-8000-00000000000e';
const R = -424242;

/**
 * pgbench's SQL for one parameter: the run number and the ids become pgbench variables, the rest literals.
 */
function pgbenchValue(value: unknown): string {
  if (value === USER) return ':user';
  if (value === EXPERIMENT) return ':exp';
  if (value === R) return ':r';
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return `'{${value.join(',')}}'`;
  return `'${String(value).replace(/'/g, "''")}'`;
}

/**
 * The statements a lone heartbeat (`heartbeats()` in run-service.ts) sends, captured by calling it on a
 * recording database, so the script follows the service's SQL wherever it goes. Parameters $1…$n become
 * pgbench variables or literals.
 */
export async function heartbeatScript(variation: number, runs: number): Promise<string> {
  const statements: string[] = [];
  const record: Queryable['query'] = async (sql, params = []) => {
    statements.push(
      sql
        .replace(/\$(\d+)/g, (_, i: string) => pgbenchValue(params[Number(i) - 1]))
        .replace(/\s+/g, ' ')
        .trim(),
    );
    return [{ state: 'running', cancel_requested: false, last_heartbeat_at: new Date() }] as never[];
  };
  const db: Db = {
    driver: 'postgres',
    query: record,
    transaction: (fn) => fn({ inTransaction: true, query: record, exec: async () => {} }),
    listen: () => ({ close: async () => {} }),
    close: async () => {},
  };
  const principal: Principal = {
    userId: USER,
    via: 'user',
    keyId: null,
    scopes: new Set(),
    isAdmin: true,
    runId: null,
  };
  // Alone in its window, as pgbench sends it, a heartbeat takes the service's one-run statement.
  await heartbeats(db)(principal, { experimentId: EXPERIMENT, n: variation, r: R });
  // pgbench reads one statement per line (or up to the semicolon); its
  // variables are substituted per transaction.
  return [`\\set r random(1, ${runs})`, ...statements.map((s) => `${s};`)].join('\n') + '\n';
}

/** pgbench of this machine's PostgreSQL, preferring the newest server's own. */
export async function findPgbench(): Promise<string | undefined> {
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = (await readdir(base))
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) if (existsSync(`${base}/${v}/bin/pgbench`)) return `${base}/${v}/bin/pgbench`;
  }
  return ['/usr/bin/pgbench', '/usr/local/bin/pgbench'].find((p) => existsSync(p));
}

export interface PgbenchResult extends PhaseResult {
  clients: number;
  /** pgbench's own figure over the whole run (no warm-up excluded). */
  reportedTps: number;
}

/**
 * `pgbench -c clients -j 2 -T seconds -M prepared` with the heartbeat script on `database`; the
 * per-transaction log gives the same window (warm-up excluded) and percentiles as the HTTP phases. Killed if
 * it overruns.
 */
export async function runPgbench(
  pgbench: string,
  database: string,
  script: string,
  vars: { user: string; exp: string },
  clients: number,
  seconds: number,
  signal: AbortSignal,
): Promise<PgbenchResult> {
  const dir = await mkdtemp(path.join(tmpdir(), 'assay-pgbench-'));
  try {
    await writeFile(path.join(dir, 'heartbeat.sql'), script);
    const args = [
      '-h',
      PG_HOST,
      '-p',
      String(PG_PORT),
      '-U',
      'postgres',
      '-n',
      '-c',
      String(clients),
      '-j',
      String(Math.min(2, clients)),
      '-T',
      String(seconds),
      '-M',
      'prepared',
      '-f',
      path.join(dir, 'heartbeat.sql'),
      '-D',
      `user=${vars.user}`,
      '-D',
      `exp=${vars.exp}`,
      '-l',
      `--log-prefix=${path.join(dir, 'log')}`,
      database,
    ];
    // pgbench runs in a process group of its own, so the CPU account can tell its CPU (the client's) apart.
    const child = spawn(pgbench, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let text = '';
    child.stdout.on('data', (c: Buffer) => (text += c.toString()));
    child.stderr.on('data', (c: Buffer) => (text += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), (seconds + 60) * 1000);
    // Detached, it misses a Ctrl-C to the benchmark: pass the abort on.
    const stop = () => child.kill('SIGINT');
    signal.addEventListener('abort', stop, { once: true });
    const exited = new Promise<string>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) =>
        code === 0 ? resolve(text) : reject(new Error(`pgbench exited with ${code}:\n${text}`)),
      );
    }).finally(() => {
      clearTimeout(timer);
      signal.removeEventListener('abort', stop);
    });
    const started = performance.now();
    const snapshots: CpuSnapshot[] = [];
    const cpu = await cpuAccount(child.pid!, database).catch(() => undefined);
    // Backends exit with pgbench, taking their CPU times along: the
    // last snapshot before the end is what counts.
    const sampler = setInterval(
      () =>
        void cpu?.snapshot().then(
          (s) => snapshots.push(s),
          () => {},
        ),
      1_000,
    );
    const output = await exited.finally(async () => {
      clearInterval(sampler);
      await cpu?.close();
    });
    const runS = (performance.now() - started) / 1000;
    const failed = Number(/number of failed transactions: (\d+)/.exec(output)?.[1] ?? 0);
    const reportedTps = Number(/tps = ([\d.]+)/.exec(output)?.[1] ?? Number.NaN);
    // Log lines: client_id transaction_no latency_us script_no end_epoch_s end_us
    const ends: number[] = [];
    const lats: number[] = [];
    for (const file of (await readdir(dir)).filter((f) => f.startsWith('log'))) {
      for (const line of (await readFile(path.join(dir, file), 'utf8')).split('\n')) {
        const f = line.split(' ');
        if (f.length < 6) continue;
        lats.push(Number(f[2]) / 1000);
        ends.push(Number(f[4]) * 1000 + Number(f[5]) / 1000);
      }
    }
    // A loop, not Math.min(...): a spread of a few hundred thousand arguments overflows the stack.
    let start = Number.POSITIVE_INFINITY;
    ends.forEach((end, i) => (start = Math.min(start, end - lats[i]!)));
    const from = start + Math.min(2_000, seconds * 100);
    const to = start + seconds * 1000;
    const window = new Latencies();
    ends.forEach((end, i) => {
      if (end >= from && end < to) window.add(lats[i]!);
    });
    // Between the first and the last snapshot, at pgbench's steady rate;
    // the "server" of the split is pgbench itself.
    const [first, last] = [snapshots[1], snapshots.at(-2)];
    const sampled =
      first && last && last.atMs > first.atMs
        ? cpuSplit(first, last, (ends.length * (last.atMs - first.atMs)) / 1000 / runS)
        : undefined;
    return {
      cpu: sampled,
      clients,
      count: window.count,
      perSecond: window.count / ((to - from) / 1000),
      p50Ms: window.quantile(0.5),
      p99Ms: window.quantile(0.99),
      errors: failed,
      firstError: undefined,
      reportedTps,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
