// `assay server` under faults: killed -9 under load and restarted, and its PostgreSQL killed for a
// few seconds.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import pg from 'pg';
import { checkAcknowledged, runWriter, type WriteLog } from '../support/acknowledged-writes.ts';
import { eventually, within } from '../support/bounded-waits.ts';
import { startAssayServer, type AssayServer } from '../support/assay-server.ts';
import { LoadClient, sleep, type Answer } from '../support/load-client.ts';
import { createTestDatabase } from '../support/postgres.ts';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.ts';
import { pendingRuns, simulateRunner, type RunnerReport } from '../support/simulated-runners.ts';

const baseEnv = { ASSAY_ORCHESTRATOR: 'off', ASSAY_LOG_LEVEL: 'warn' };

describe('kill -9 of the service under load, then a restart', () => {
  const KEEP_GOING = 150;
  const STOPPED = 50;

  test(
    'every acknowledged write survives; runners that kept going succeed; the stopped ones fail heartbeat_timeout',
    { timeout: 180_000 },
    async (t) => {
      const dataDir = await mkdtemp(path.join(tmpdir(), 'assay-faults-'));
      const database = await createTestDatabase();
      const env = {
        ...baseEnv,
        DATABASE_URL: database.url,
        ASSAY_DATA_DIR: dataDir,
        ASSAY_WATCHDOG_TIMEOUT_S: '3',
        ASSAY_WATCHDOG_INTERVAL_S: '0.5',
      };
      let server: AssayServer | undefined;
      let client: LoadClient | undefined;
      const db = new pg.Client({ connectionString: database.url });
      let stopped = true;
      // Set on the way out: simulated runners still retrying give up at once.
      let abandon = false;
      try {
        server = await startAssayServer(env);
        const port = new URL(server.url).port;
        client = new LoadClient(server.url, server.bootstrapKey!, { connections: 64, timeoutMs: 10_000 });
        await db.connect();
        const { experimentId, paths } = await pendingRuns(client, KEEP_GOING + STOPPED, 'faults');

        // The load: 200 runners heartbeating every ~0.5 s (retrying through the outage) and 4 writers.
        let killed = false;
        let finishing = false;
        stopped = false;
        const retryUntil = Date.now() + 120_000;
        const runners: Promise<RunnerReport>[] = paths.map((runPath, i) =>
          simulateRunner(client!, runPath, {
            heartbeatMs: 500,
            startDelayMs: Math.random() * 500,
            retryUntil: () => retryUntil,
            next: () => (abandon || (i >= KEEP_GOING && killed) ? 'vanish' : finishing ? 'succeed' : 'beat'),
          }),
        );
        const log: WriteLog = { acks: [], networkErrors: [], refusals: [] };
        const writers = Promise.all(
          [1, 2, 3, 4].map((w) => runWriter(client!, log, `writer-${w}`, () => stopped)),
        );
        // Runs of the runners' experiment matching a condition, straight from the database.
        const runsWhere = async (condition: string) =>
          (
            await db.query(`SELECT count(*)::int AS n FROM runs WHERE experiment_id = $1 AND ${condition}`, [
              experimentId,
            ])
          ).rows[0].n as number;
        await eventually(
          async () => (await runsWhere("state = 'running'")) === paths.length,
          20_000,
          'every runner started',
        );
        await sleep(4_000);

        // The crash: the 50 stopped runners send nothing from now on; the whole process group dies at once.
        const acksBeforeKill = log.acks.length;
        killed = true;
        process.kill(-server.process.pid, 'SIGKILL');
        await within(server.stop(), 10_000, 'the killed service exiting');
        const killedAt = Date.now();
        server = await startAssayServer({ ...env, PORT: port });
        const readyAt = Date.now();
        t.diagnostic(
          `killed with ${acksBeforeKill} writes acknowledged; back up (same port, same database) after ${readyAt - killedAt} ms`,
        );

        // Past the watchdog's timeout: the stopped runs fail, the others keep heartbeating.
        const failedIn = await eventually(
          async () => (await runsWhere("failure_reason = 'heartbeat_timeout'")) >= STOPPED,
          20_000,
          'the watchdog failing the stopped runs',
        );
        await sleep(1_000);
        stopped = true;
        finishing = true;
        const reports = await within(Promise.all(runners), 60_000, 'the runners');
        await within(writers, 30_000, 'the writers');

        const keptGoing = reports.slice(0, KEEP_GOING);
        const stoppedRuns = reports.slice(KEEP_GOING);
        const retries = keptGoing.reduce((sum, r) => sum + r.retries, 0);
        t.diagnostic(
          `watchdog failed the stopped runs ${failedIn} ms after the restart; kept-going runners retried ${retries} calls through the outage`,
        );
        assert.deepEqual(
          keptGoing.flatMap((r) => r.errors),
          [],
          'runners that kept going: every call answered 2xx in the end',
        );
        assert.deepEqual(
          keptGoing.map((r) => r.end),
          Array(KEEP_GOING).fill('succeeded'),
        );
        assert.deepEqual(
          stoppedRuns.map((r) => r.end),
          Array(STOPPED).fill('vanished'),
        );

        const rows = new Map(
          (
            await db.query(
              'SELECT r, state, failure_reason, last_heartbeat_at FROM runs WHERE experiment_id = $1',
              [experimentId],
            )
          ).rows.map((row) => [`/runs/${row.r}`, row]),
        );
        let heartbeatsChecked = 0;
        for (const [i, report] of reports.entries()) {
          const row = rows.get(report.path.slice(report.path.lastIndexOf('/runs/')))!;
          assert.ok(row, `${report.path} is in the database`);
          const expected = i < KEEP_GOING ? ['succeeded', null] : ['failed', 'heartbeat_timeout'];
          assert.deepEqual([row.state, row.failure_reason], expected, report.path);
          // The newest acknowledged heartbeat (or start) is in the database, even when acknowledged just
          // before the kill.
          assert.ok(
            row.last_heartbeat_at.getTime() >= Date.parse(report.lastAckedHeartbeatAt!),
            `${report.path}: last heartbeat ${row.last_heartbeat_at.toISOString()} < acknowledged ${report.lastAckedHeartbeatAt}`,
          );
          heartbeatsChecked += report.heartbeats;
        }

        const { checked, problems } = await checkAcknowledged(db, log.acks);
        t.diagnostic(
          `acknowledged writes checked: ${Object.entries(checked)
            .map(([k, v]) => `${v} ${k}`)
            .join(', ')}; ${heartbeatsChecked} heartbeats (newest per run compared)`,
        );
        assert.deepEqual(problems, [], 'every acknowledged write is in the database');
        assert.ok(
          log.acks.length > acksBeforeKill && checked.experiments > 4,
          'the writers wrote before and after the kill',
        );
        assert.deepEqual(log.refusals, [], 'the writers got no non-2xx answer');
        const late = log.networkErrors.filter((e) => e.sentAt >= readyAt);
        assert.deepEqual(
          late.map((e) => e.message),
          [],
          'no request sent after the restart went unanswered',
        );
        t.diagnostic(`writers: ${log.networkErrors.length} requests unanswered during the outage`);
      } finally {
        stopped = true;
        abandon = true;
        await client?.close();
        await server?.stop();
        await db.end().catch(() => {});
        await database.drop();
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  );
});

describe('PostgreSQL killed for a few seconds', () => {
  test(
    '/readyz goes red, requests answer 503 database_unavailable within 5 s, and the service recovers by itself',
    { timeout: 120_000 },
    async (t) => {
      // A runner heartbeats through the outage (retrying its 503s): the outage must not count as its silence.
      const watchdog = { ASSAY_WATCHDOG_TIMEOUT_S: '3', ASSAY_WATCHDOG_INTERVAL_S: '0.5' };
      const dataDir = await mkdtemp(path.join(tmpdir(), 'assay-faults-pg-'));
      let postgres: PrivatePostgres | undefined;
      let server: AssayServer | undefined;
      let client: LoadClient | undefined;
      let abandon = false;
      try {
        postgres = await startPrivatePostgres();
        server = await startAssayServer({
          ...baseEnv,
          ...watchdog,
          DATABASE_URL: postgres.url,
          ASSAY_DATA_DIR: dataDir,
        });
        const pid = server.process.pid;
        client = new LoadClient(server.url, server.bootstrapKey!, { timeoutMs: 15_000 });
        const { experimentId, paths } = await pendingRuns(client, 2, 'db-outage');
        const run = paths[0]!;
        let finishing = false;
        const retryUntil = Date.now() + 60_000;
        const runner = simulateRunner(client, paths[1]!, {
          heartbeatMs: 500,
          retryUntil: () => retryUntil,
          next: () => (abandon ? 'vanish' : finishing ? 'succeed' : 'beat'),
        });
        assert.equal((await client.call('GET', `${run}/config`)).status, 200);
        assert.equal((await client.call('POST', `${run}/start`, { environment: {} })).status, 200);
        const readyz = async () => (await client!.call('GET', '/readyz')).status;
        // What a client does all the time: read, create, heartbeat.
        const calls = (): Promise<Answer>[] => [
          client!.call('GET', '/experiments'),
          client!.call('POST', '/experiments', { name: 'during the outage' }),
          client!.call('POST', `${run}/heartbeat`),
          client!.call('GET', `/experiments/${experimentId}`),
        ];
        assert.equal(await readyz(), 200);
        await sleep(1_000);

        await postgres.kill();
        const red = await eventually(async () => (await readyz()) === 503, 5_000, '/readyz answering 503');
        t.diagnostic(`/readyz red ${red} ms after the postmaster was killed`);
        const answers: Answer[] = [];
        const downUntil = Date.now() + 5_000;
        while (Date.now() < downUntil) answers.push(...(await Promise.all(calls())));
        const statuses = answers.map((a) => `${a.status} ${a.body?.error?.code}`);
        assert.deepEqual(
          [...new Set(statuses)],
          ['503 database_unavailable'],
          `every request answers 503 while the database is down: ${statuses.join(', ')}`,
        );
        const slowest = Math.max(...answers.map((a) => a.ms));
        assert.ok(slowest <= 5_000, `every request answers within 5 s (slowest ${slowest.toFixed(0)} ms)`);
        t.diagnostic(
          `${answers.length} requests during the outage: all 503 database_unavailable, slowest ${slowest.toFixed(0)} ms`,
        );

        await postgres.start();
        const green = await eventually(
          async () => (await readyz()) === 200,
          15_000,
          '/readyz answering 200 again',
        );
        // Two watchdog intervals, well inside its timeout: the run whose heartbeats got 503s is
        // still running.
        await sleep(1_000);
        const after = await Promise.all(calls());
        assert.deepEqual(
          after.map((a) => a.status),
          [200, 201, 200, 200],
          JSON.stringify(after.map((a) => a.body)),
        );
        await sleep(3_500);
        finishing = true;
        const heartbeating = await within(runner, 30_000, 'the runner');
        assert.deepEqual(
          [heartbeating.end, heartbeating.errors],
          ['succeeded', []],
          'the runner that heartbeated through the outage succeeds',
        );
        assert.equal(server.process.pid, pid);
        assert.ok(server.process.isRunning(), 'the same service process, never restarted');
        t.diagnostic(
          `/readyz green ${green} ms after PostgreSQL came back; requests succeed without a service restart`,
        );
      } finally {
        abandon = true;
        await client?.close();
        await server?.stop();
        await postgres?.cleanup();
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  );
});
