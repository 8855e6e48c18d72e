// Runner traffic: N simulated runners doing the real lifecycle against our service on PostgreSQL, side by
// side with the MLflow tracking server doing its nearest equivalent and with pgbench running the heartbeat's
// own UPDATE (the database's limit). Prints figures (not a test); every phase has a deadline; loopback only.
// Run: node bench/runner-traffic.ts [--runners 100,1000] [--seconds 20] [--skip-mlflow] [--skip-pgbench]
//   [--cpu-prof] [--heartbeat-runs 1000] [--heartbeats-only] [--assay-root <checkout>]
//   [--compare-root <checkout>] [--workers 1,2] [--pairs 3] [--guard] [--out <file>]
// --heartbeat-runs: the heartbeat phase's connections beat over that many running runs (pgbench's clients
// too); --heartbeats-only: no lifecycle phase; --assay-root: the server of another checkout; --compare-root:
// that checkout's server measured too, right before ours in the same run (a before/after under the
// same load); --workers: our server at each of these `assay server --workers N` (default 1 and the core
// count), each followed by pgbench on its database, --pairs times over, with the median of the pairs'
// ours/pgbench; --guard: a short run (64 runners over 1,000 runs, 5 s, the core count's workers, one pair,
// no MLflow) that prints the ratio for bench/guard.ts.
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { assayTarget, PGBENCH_VARIATION, startAssay } from './runner-traffic/assay.ts';
import { heartbeatPhase, lifecyclePhase, type RunnerTarget } from './runner-traffic/load.ts';
import {
  ensureMlflow,
  MLFLOW_WORKERS,
  mlflowTarget,
  mlflowVersion,
  startMlflow,
} from './runner-traffic/mlflow.ts';
import { findPgbench, heartbeatScript, runPgbench } from './runner-traffic/pgbench.ts';
import {
  createDatabase,
  databaseUrl,
  dropDatabase,
  freeConnections,
  serverFacts,
} from './runner-traffic/postgres.ts';
import { pairsSummary, section, type Row, type ServerFigures } from './runner-traffic/report.ts';
import { printGuard } from './support/guard.ts';
import { cpuAccount } from './runner-traffic/cpu-account.ts';
import { groupUsage, rssSampler } from './runner-traffic/stats.ts';
import type { ProcessGroup } from '../test/support/process-group.ts';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/** The checkout's commit, short, marked when its tree has changes. */
async function commitOf(dir: string): Promise<string> {
  const git = (...args: string[]) =>
    promisify(execFile)('git', ['-C', dir, ...args]).then((r) => r.stdout.trim());
  const [head, dirty] = await Promise.all([
    git('rev-parse', '--short', 'HEAD'),
    git('status', '--porcelain', '--untracked-files=no'),
  ]);
  return dirty ? `${head} with changes` : head;
}

const { values } = parseArgs({
  options: {
    runners: { type: 'string', default: '100,1000' },
    seconds: { type: 'string', default: '20' },
    'skip-mlflow': { type: 'boolean', default: false },
    'skip-pgbench': { type: 'boolean', default: false },
    'cpu-prof': { type: 'boolean', default: false },
    'heartbeat-runs': { type: 'string' },
    'heartbeats-only': { type: 'boolean', default: false },
    'assay-root': { type: 'string' },
    'compare-root': { type: 'string' },
    workers: { type: 'string' },
    pairs: { type: 'string', default: '1' },
    guard: { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/results/runner-traffic.md' },
  },
});
if (values.guard) {
  Object.assign(values, {
    runners: '64',
    seconds: '5',
    'heartbeat-runs': '1000',
    'heartbeats-only': true,
    'skip-mlflow': true,
    pairs: '1',
  });
  values.workers ??= String(os.availableParallelism());
}
const workerCounts = [
  ...new Set((values.workers ?? `1,${os.availableParallelism()}`).split(',').map((s) => Number(s.trim()))),
];
const pairs = Number(values.pairs);
if (workerCounts.some((n) => !Number.isInteger(n) || n < 1 || n > 64) || !(pairs >= 1 && pairs <= 9))
  throw new Error('--workers takes counts from 1 to 64 (comma-separated), --pairs 1 to 9');
const runnerCounts = values.runners.split(',').map((s) => Number(s.trim()));
const seconds = Number(values.seconds);
const heartbeatRuns = values['heartbeat-runs'] === undefined ? undefined : Number(values['heartbeat-runs']);
if (
  runnerCounts.some((n) => !Number.isInteger(n) || n < 1 || n > 5000) ||
  !(seconds >= 2 && seconds <= 600) ||
  (heartbeatRuns !== undefined &&
    (!Number.isInteger(heartbeatRuns) ||
      runnerCounts.some((n) => heartbeatRuns < n || heartbeatRuns > 20000)))
) {
  throw new Error(
    '--runners takes counts from 1 to 5000 (comma-separated), --seconds 2 to 600, --heartbeat-runs at least the most runners, up to 20000',
  );
}
const repoRoot = path.resolve(import.meta.dirname, '..');
const assayRoot = path.resolve(values['assay-root'] ?? repoRoot);
const compareRoot = values['compare-root'] === undefined ? undefined : path.resolve(values['compare-root']);
const profileDir = path.join(repoRoot, 'bench/results/profiles');

// Bounded: Ctrl-C or the overall deadline aborts the load loops; the
// finally blocks stop servers and drop databases.
const abort = new AbortController();
const budgetS = runnerCounts.length * workerCounts.length * pairs * (6 * seconds + 900);
const deadline = setTimeout(() => {
  console.error(`runner-traffic: over its ${budgetS} s budget; stopping`);
  abort.abort();
  setTimeout(() => process.exit(2), 60_000).unref();
}, budgetS * 1000);
deadline.unref();
process.on('SIGINT', () => {
  if (abort.signal.aborted) process.exit(130);
  console.error(
    'runner-traffic: interrupted; stopping servers and dropping databases (Ctrl-C again to quit at once)',
  );
  abort.abort();
});
const checkAborted = () => {
  if (abort.signal.aborted) throw new Error('aborted');
};

const databases = new Set<string>();
async function freshDatabase(label: string): Promise<string> {
  const name = await createDatabase(label);
  databases.add(name);
  return name;
}
async function dropAll(): Promise<void> {
  for (const name of databases) {
    await dropDatabase(name).catch((error: unknown) =>
      console.error(`could not drop ${name}: ${String(error)}`),
    );
    databases.delete(name);
  }
}

/** Both load phases against one server, with its process group's RSS sampled throughout. */
async function measureServer<Run>(
  label: string,
  server: ProcessGroup,
  database: string,
  target: RunnerTarget<Run>,
  runners: number,
  lifecycleRequests: number,
): Promise<ServerFigures> {
  const rssIdle = (await groupUsage(server.pid)).rss;
  const sampler = rssSampler(server.pid);
  const cpu = await cpuAccount(server.pid, database);
  try {
    const over = heartbeatRuns === undefined ? '' : ` over ${heartbeatRuns} running runs`;
    console.log(`  ${label}: heartbeat phase (${runners} runners${over}, ${seconds} s)`);
    const heartbeats = await heartbeatPhase(target, runners, seconds, abort.signal, cpu, heartbeatRuns);
    checkAborted();
    if (values['heartbeats-only'])
      return { label, heartbeats, rssIdle, rssPeak: sampler.peak(), lifecycleRequests };
    console.log(`  ${label}: lifecycle phase (${runners} runners, ${seconds} s)`);
    const lifecycles = await lifecyclePhase(
      target as RunnerTarget<unknown>,
      runners,
      seconds,
      abort.signal,
      cpu,
    );
    checkAborted();
    return { label, heartbeats, lifecycles, rssIdle, rssPeak: sampler.peak(), lifecycleRequests };
  } finally {
    sampler.stop();
    await cpu.close();
  }
}

/**
 * Our server of `root` through both phases; `compared` (the
 * --compare-root server) is measured without pgbench.
 */
async function assayRow(
  row: Row,
  pgbench: string | undefined,
  workers: number,
  root = assayRoot,
  compared?: string,
): Promise<void> {
  const n = row.runners;
  const db = await freshDatabase('assay');
  // The HTTP workers inherit the flags: each writes a profile of its own, named by its pid.
  const name = workers > 1 ? [] : [`--cpu-prof-name=assay-${n}-runners.cpuprofile`];
  const flags = values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, ...name] : [];
  if (values['cpu-prof']) await mkdir(profileDir, { recursive: true });
  const server = await startAssay(databaseUrl(db), flags, { ASSAY_WORKERS: String(workers) }, root);
  let pgbenchSetup: { user: string; exp: string } | undefined;
  try {
    const target = await assayTarget(server, n);
    try {
      const figures = await measureServer(
        `${compared ? `Assay ${compared}` : 'Assay'} (--workers ${workers})`,
        server.process,
        db,
        target,
        n,
        5,
      );
      if (compared) {
        row.compared = figures;
        return;
      }
      row.assay = figures;
      if (pgbench) {
        await target.prepareForPgbench(heartbeatRuns ?? n);
        pgbenchSetup = { user: target.userId, exp: target.experimentId };
      }
    } finally {
      await target.close();
    }
  } finally {
    await server.process.stop();
  }
  checkAborted();
  if (compared) {
    await dropDatabase(db);
    databases.delete(db);
    return;
  }
  if (!pgbench) row.pgbench = { skipped: 'pgbench: skipped (--skip-pgbench, or no pgbench binary found)' };
  else if (pgbenchSetup) {
    // Our service's pool is closed by now; other users of the shared server keep theirs, so leave a margin.
    const { max, used, free } = await freeConnections();
    const clients = Math.max(1, Math.min(n, free));
    if (clients < n)
      console.log(
        `  pgbench: ${clients} clients, not ${n}: max_connections = ${max}, ${used} in use by others, margin of 10 kept`,
      );
    console.log(`  pgbench: heartbeat UPDATE, ${clients} clients, ${seconds} s`);
    row.pgbench = await runPgbench(
      pgbench,
      db,
      await heartbeatScript(PGBENCH_VARIATION, heartbeatRuns ?? n),
      pgbenchSetup,
      clients,
      seconds,
      abort.signal,
    );
  }
  await dropDatabase(db);
  databases.delete(db);
}

async function mlflowRow(row: Row): Promise<void> {
  if (values['skip-mlflow']) {
    row.mlflow = { skipped: 'MLflow: skipped (--skip-mlflow)' };
    return;
  }
  const missing = ensureMlflow();
  if (missing) {
    row.mlflow = { skipped: `MLflow: not installed: ${missing}` };
    return;
  }
  const db = await freshDatabase('mlflow');
  console.log('  MLflow: starting (its migrations take a while on an empty database)');
  const server = await startMlflow(databaseUrl(db));
  try {
    const target = await mlflowTarget(server, row.runners);
    try {
      row.mlflow = await measureServer(
        `MLflow (${MLFLOW_WORKERS} workers)`,
        server.process,
        db,
        target,
        row.runners,
        3,
      );
    } finally {
      await target.close();
    }
  } finally {
    await server.process.stop();
  }
  await dropDatabase(db);
  databases.delete(db);
}

async function main(): Promise<void> {
  const started = new Date();
  const pgbench = values['skip-pgbench'] ? undefined : await findPgbench();
  const cpu = os.cpus();
  const machine = [
    `${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Linux ${os.release()}`,
    `Node ${process.version}; ${await serverFacts()}; MLflow ${values['skip-mlflow'] ? '(skipped)' : `${await mlflowVersion()} with ${MLFLOW_WORKERS} uvicorn workers (its default)`}`,
    `load average at start: ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')} (the client, the servers and PostgreSQL share these cores)`,
  ];
  const header = [
    '# Runner traffic',
    '',
    `Run ${started.toISOString()} with \`node bench/runner-traffic.ts ${process.argv.slice(2).join(' ')}\`${values['assay-root'] ? ` (the server from ${values['assay-root']}, ${await commitOf(assayRoot)})` : ` at ${await commitOf(repoRoot)}`}${compareRoot ? `, compared with the server of ${await commitOf(compareRoot)}` : ''}.`,
    '',
    ...machine.map((m) => `- ${m}`),
    '- Assay lifecycle: POST …/runs, GET …/config, POST start, POST heartbeat, POST succeed (5 requests); MLflow: runs/create, runs/log-metric, runs/update FINISHED (3).',
    heartbeatRuns === undefined
      ? '- Heartbeat phase: each runner begins its own run, then heartbeats in a closed loop; lifecycle phase: each runner runs whole lifecycles back to back.'
      : `- Heartbeat phase: ${heartbeatRuns} runs are begun, then each runner (one connection) heartbeats a run drawn at random among them in a closed loop, as each pgbench client does over as many runs${values['heartbeats-only'] ? '; no lifecycle phase' : ''}.`,
    "  Figures count requests that end inside the phase after a warm-up (2 s, or a tenth of a shorter phase); RSS is the server's whole process group (MLflow: its uvicorn workers too).",
    '',
  ].join('\n');
  console.log(header);
  const sections: string[] = [];
  try {
    for (const runners of runnerCounts) {
      const measured: { workers: number; row: Row }[] = [];
      for (let pair = 1; pair <= pairs; pair++) {
        for (const workers of workerCounts) {
          checkAborted();
          const row: Row = { runners };
          const of = pairs > 1 ? ` (pair ${pair} of ${pairs})` : '';
          console.log(`${runners} runners, assay server --workers ${workers}${of}:`);
          if (compareRoot) {
            const label = await commitOf(compareRoot);
            await assayRow(row, pgbench, workers, compareRoot, label).catch((error: unknown) => {
              checkAborted();
              row.compared = { skipped: `Assay ${label}: failed: ${String(error).slice(0, 500)}` };
              console.error(row.compared.skipped);
            });
          }
          // One server failing must not lose the others' figures: its row says why instead.
          await assayRow(row, pgbench, workers).catch((error: unknown) => {
            checkAborted();
            row.assay = { skipped: `Assay: failed: ${String(error).slice(0, 500)}` };
            row.pgbench ??= {
              skipped: 'pgbench: not run, as the Assay phases that prepare its rows failed',
            };
            console.error(row.assay.skipped);
          });
          // MLflow once per runner count, beside the first pair of our default.
          if (pair === 1 && workers === workerCounts.at(-1))
            await mlflowRow(row).catch((error: unknown) => {
              checkAborted();
              row.mlflow = { skipped: `MLflow: failed: ${String(error).slice(0, 500)}` };
              console.error(row.mlflow.skipped);
            });
          const text = section(row, seconds, heartbeatRuns);
          sections.push(text);
          console.log(`\n${text}`);
          measured.push({ workers, row });
        }
      }
      const summary = pairsSummary(runners, measured);
      sections.push(summary.text);
      console.log(`\n${summary.text}`);
      if (values.guard)
        for (const { workers, ratio } of summary.ratios)
          printGuard({
            name: 'runner-traffic/heartbeats-per-pgbench',
            ratio,
            higherIsBetter: true,
            what: `Assay heartbeats/s ÷ pgbench tx/s, ${runners} clients over ${heartbeatRuns} runs, assay server --workers ${workers}`,
          });
    }
  } finally {
    await dropAll();
  }
  // The guard's short run prints its ratio; the figures on record stay those of a whole run.
  if (values.guard) return;
  const outFile = path.resolve(repoRoot, values.out);
  await mkdir(path.dirname(outFile), { recursive: true });
  await writeFile(outFile, `${header}\n${sections.join('\n')}`);
  console.log(`written to ${path.relative(repoRoot, outFile)}`);
}

try {
  await main();
} catch (error) {
  if (!abort.signal.aborted) throw error;
  console.error('runner-traffic: stopped early; servers stopped, databases dropped, no results written');
  process.exitCode = 130;
} finally {
  clearTimeout(deadline);
}
