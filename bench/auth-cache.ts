// Auth cache: runners heartbeating at a real cadence (each runner its own worker key, one beat per interval),
// against this tree's service and against a `--before` tree (the code before the long auth cache, exported
// with `git archive`), each on a fresh PostgreSQL database in the same run. Counts what each heartbeat costs
// the database beyond the heartbeat itself: API keys read to authenticate (the service's own counter), and,
// from PostgreSQL's statistics, index scans and updates of `api_keys` and transactions committed per
// heartbeat. The default cadence (5 s) stands for a runner's 30 s: above the old 3 s cache, below the new
// 300 s one.
// Run: node bench/auth-cache.ts --before <tree> [--before-name <commit>] [--runners 200] [--interval 5]
//   [--seconds 40]
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Pool } from 'undici';
import { freePort } from '../test/support/free-port.ts';
import { spawnProcessGroup, type ProcessGroup } from '../test/support/process-group.ts';
import { waitUntilReady } from '../test/support/readiness.ts';
import { JsonHttp, mapLimit } from './runner-traffic/http.ts';
import { createDatabase, databaseUrl, dropDatabase, serverFacts } from './runner-traffic/postgres.ts';
import { Latencies } from './runner-traffic/stats.ts';

const { values } = parseArgs({
  options: {
    before: { type: 'string' },
    'before-name': { type: 'string', default: 'the --before tree' },
    runners: { type: 'string', default: '200' },
    interval: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '40' },
    out: { type: 'string', default: 'bench/results/auth-cache.md' },
  },
});
const runners = Number(values.runners);
const intervalMs = Number(values.interval) * 1000;
const phaseMs = Number(values.seconds) * 1000;
if (!values.before) throw new Error('--before <tree>: a checkout of the code to compare against');
if (!(runners >= 1 && runners <= 2000 && intervalMs >= 500 && phaseMs >= 2 * intervalMs))
  throw new Error('--runners 1 to 2000, --interval ≥ 0.5 s, --seconds ≥ two intervals');
const here = path.resolve(import.meta.dirname, '..');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// Idle backends flush their statistics within 10 s (PostgreSQL's PGSTAT_IDLE_INTERVAL); exiting ones at once.
const STATS_SETTLE_MS = 11_000;

async function startServer(
  root: string,
  dbUrl: string,
): Promise<{ url: string; proc: ProcessGroup; key: string }> {
  const port = await freePort();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'assay-bench-auth-'));
  const proc = spawnProcessGroup(process.execPath, [path.join(root, 'bin/assay.js'), 'server'], {
    name: 'assay server',
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      DATABASE_URL: dbUrl,
      ASSAY_DATA_DIR: dataDir,
      ASSAY_LOG_LEVEL: 'warn',
      ASSAY_ORCHESTRATOR: 'off',
      // One cache to count lookups of, as in the figures on record (HTTP workers hold one each).
      ASSAY_WORKERS: '1',
    },
    cleanupPaths: [dataDir],
    stopGraceMs: 10_000,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(proc, async () => (await fetch(`${url}/readyz`)).ok, { timeoutMs: 90_000 });
  const key = (await readFile(path.join(dataDir, 'bootstrap-admin-key'), 'utf8').catch(() => '')).trim();
  if (!key) {
    await proc.stop();
    throw new Error(`no bootstrap admin key in ${dataDir}; the server said:\n${proc.output()}`);
  }
  return { url, proc, key };
}

interface DbStats {
  keyScans: number;
  keyUpdates: number;
  commits: number;
}
async function dbStats(client: pg.Client): Promise<DbStats> {
  const { rows } = await client.query<{ scans: string; updates: string; commits: string }>(
    `SELECT COALESCE(t.idx_scan, 0) + t.seq_scan AS scans, t.n_tup_upd AS updates, d.xact_commit AS commits
       FROM pg_stat_user_tables t, pg_stat_database d
      WHERE t.relname = 'api_keys' AND d.datname = current_database()`,
  );
  const r = rows[0]!;
  return { keyScans: Number(r.scans), keyUpdates: Number(r.updates), commits: Number(r.commits) };
}

async function keyLookups(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('assay_auth_key_lookups_total '));
  return Number(line?.split(' ')[1] ?? Number.NaN);
}

interface Figures {
  label: string;
  beats: number;
  errors: number;
  latencies: Latencies;
  lookups: number;
  stats: DbStats;
}

async function measure(label: string, root: string): Promise<Figures> {
  const dbName = await createDatabase('authcache');
  const dbUrl = databaseUrl(dbName);
  const server = await startServer(root, dbUrl);
  const stats = new pg.Client({ connectionString: dbUrl });
  try {
    const admin = new JsonHttp(server.url, 32, { authorization: `Bearer ${server.key}` });
    const experiment = await admin.call<{ id: string }>('POST', '/experiments', {
      name: 'auth-cache',
      hypothesis: 'heartbeats skip the key read',
    });
    await admin.call('POST', `/experiments/${experiment.id}/variations`, { config_yaml: 'lr: 0.1\n' });
    await admin.call('POST', `/experiments/${experiment.id}/commit`);
    const base = `/experiments/${experiment.id}/variations/1/runs`;
    // Each runner: its run started, and a worker key of its own, as a managed run's runner holds.
    const fleet = await mapLimit(Array.from({ length: runners }), 16, async () => {
      const { r } = await admin.call<{ r: number }>('POST', base);
      await admin.call('GET', `${base}/${r}/config`);
      await admin.call('POST', `${base}/${r}/start`, { environment: { os: 'linux' } });
      const { key } = await admin.call<{ key: string }>('POST', '/api-keys', {
        description: 'runner',
        kind: 'worker',
        scopes: ['runs:read', 'runs:write'],
        run: { experiment_id: experiment.id, n: 1, r },
      });
      return { path: `${base}/${r}/heartbeat`, key };
    });
    await admin.close();
    // Heartbeats carry each runner's own key, so they go out on a plain pool rather than a one-key JsonHttp.
    const raw = new Pool(server.url, { connections: Math.min(runners, 128) });
    const send = async (runner: (typeof fleet)[number]) => {
      const res = await raw.request({
        method: 'POST',
        path: runner.path,
        headers: { authorization: `Bearer ${runner.key}`, 'content-type': 'application/json' },
        body: '{}',
      });
      await res.body.text();
      return res.statusCode;
    };
    // Warm-up: every runner's first beat reads its key on either tree.
    await mapLimit(fleet, 32, send);
    await stats.connect();
    await sleep(STATS_SETTLE_MS);
    const before = await dbStats(stats);
    const lookupsBefore = await keyLookups(server.url);
    const latencies = new Latencies();
    let beats = 0;
    let errors = 0;
    const end = Date.now() + phaseMs;
    await Promise.all(
      fleet.map(async (runner, i) => {
        // Spread over the interval, then one beat per interval, as runners started at different moments do.
        await sleep((i / fleet.length) * intervalMs);
        while (Date.now() < end) {
          const started = performance.now();
          const status = await send(runner).catch(() => 0);
          latencies.add(performance.now() - started);
          if (status === 200) beats++;
          else errors++;
          await sleep(Math.max(0, intervalMs - (performance.now() - started)));
        }
      }),
    );
    const lookups = (await keyLookups(server.url)) - lookupsBefore;
    await raw.close();
    // Stopping the server flushes its backends' statistics.
    await server.proc.stop();
    await sleep(1000);
    const after = await dbStats(stats);
    return {
      label,
      beats,
      errors,
      latencies,
      lookups,
      stats: {
        keyScans: after.keyScans - before.keyScans,
        keyUpdates: after.keyUpdates - before.keyUpdates,
        commits: after.commits - before.commits,
      },
    };
  } finally {
    await stats.end().catch(() => {});
    await server.proc.stop();
    await dropDatabase(dbName);
  }
}

const load = os
  .loadavg()
  .map((l) => l.toFixed(2))
  .join(' ');
const facts = await serverFacts();
const results: Figures[] = [];
results.push(await measure(`before (${values['before-name']}, 3 s cache)`, path.resolve(values.before)));
results.push(await measure('after (300 s cache, revocations broadcast)', here));

const per = (n: number, f: Figures) => (f.beats ? (n / f.beats).toFixed(3) : '—');
const ms = (v: number) => `${v.toFixed(1)} ms`;
const rows = results.map(
  (f) =>
    `| ${f.label} | ${f.beats.toLocaleString('en')} | ${per(f.lookups, f)} | ${per(f.stats.keyScans, f)} | ${per(f.stats.keyUpdates, f)} | ${per(f.stats.commits, f)} | ${ms(f.latencies.quantile(0.5))} / ${ms(f.latencies.quantile(0.99))} | ${f.errors} |`,
);
const [b, a] = results as [Figures, Figures];
const ratio = (x: number, y: number) => (y === 0 ? '∞' : (x / y).toFixed(1));
const block = [
  '# Auth cache',
  '',
  `Run ${new Date().toISOString()} with \`node bench/auth-cache.ts --before <tree of ${values['before-name']}> --runners ${runners} --interval ${intervalMs / 1000} --seconds ${phaseMs / 1000}\`.`,
  '',
  `- ${os.cpus().length} × ${os.cpus()[0]?.model.split(' ').slice(0, 2).join(' ')}, ${Math.round(os.totalmem() / 2 ** 30)} GiB; Node ${process.version}; ${facts}`,
  `- load average at start: ${load} (the client, the servers and PostgreSQL share these cores)`,
  `- ${runners} runners, each with its own worker key and running run, one heartbeat every ${intervalMs / 1000} s (standing for a runner's 30 s: above the old 3 s cache, below the new 300 s) for ${phaseMs / 1000} s, after a warm-up beat each; "before" is the tree before the long auth cache, both on fresh databases in this run.`,
  '- Per heartbeat: API keys the service read to authenticate (`assay_auth_key_lookups_total`), index/sequential scans and row updates of `api_keys` (`pg_stat_user_tables`: the key read and the `last_used_at` write), transactions committed in the database (`pg_stat_database`, everything the service did).',
  '',
  '| Service | Heartbeats | Key reads / beat | `api_keys` scans / beat | `api_keys` updates / beat | Commits / beat | Heartbeat p50 / p99 | Errors |',
  '|---|--:|--:|--:|--:|--:|--:|--:|',
  ...rows,
  '',
  `- per heartbeat, before → after: commits ${(b.stats.commits / b.beats).toFixed(2)} → ${(a.stats.commits / a.beats).toFixed(2)} (${ratio(b.stats.commits / b.beats, a.stats.commits / a.beats)}× fewer); key reads ${per(b.lookups, b)} → ${per(a.lookups, a)}; \`api_keys\` scans ${per(b.stats.keyScans, b)} → ${per(a.stats.keyScans, a)} (what is left is the cache's re-check, one query per ASSAY_AUTH_RECHECK_S for all cached keys)`,
  `- heartbeat latency p50 before/after: ${ratio(b.latencies.quantile(0.5), a.latencies.quantile(0.5))}× (on a machine this loaded, latencies are indicative only; the counts above are not timing-dependent)`,
  '',
].join('\n');
process.stdout.write(block);
await writeFile(path.join(here, values.out), block);
