// 1,000 simulated runners heartbeating against `assay server` for a bounded time: zero errors, RSS flat.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { startAssayServer, type AssayServer } from '../support/assay-server.ts';
import { LoadClient, percentile, sleep } from '../support/load-client.ts';
import { createTestDatabase } from '../support/postgres.ts';
import { mib, RssSampler } from '../support/process-rss.ts';
import { pendingRuns, simulateRunner } from '../support/simulated-runners.ts';

const RUNNERS = Number(process.env.ASSAY_LOAD_RUNNERS ?? 1000);
const SECONDS = Number(process.env.ASSAY_LOAD_SECONDS ?? 120);
// Warm-up: every runner started and a quarter of the run behind us (JIT, pools, caches filled).
const WARM_SECONDS = Math.min(30, SECONDS / 4);
// Flat: the end may exceed the warm figure by 15% plus 40 MiB, never more. "Warm" is the highest RSS of the
// warm-up window (the level the service settles at), not one sample that may fall just after a major
// collection. V8 grows its heap reserve in a sawtooth under steady load (measured: up to ~65 MiB above warm
// before a major GC gives it back), which the 40 MiB absorbs; a leak of ~1 KiB per heartbeat (~90 MiB after
// warm-up) still fails.
const flatLimit = (warm: number) => warm * 1.15 + 40 * 1024 * 1024;

/**
 * V8 heap in use, from the service's own /metrics (context for the RSS figures, which include the
 * heap's reserve).
 */
async function heapUsed(url: string): Promise<number> {
  const metrics = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  return Number(/^nodejs_heap_size_used_bytes (\S+)$/m.exec(metrics)?.[1]);
}

test(
  `${RUNNERS} runners heartbeating for ${SECONDS} s: zero errors, every run succeeds, service RSS flat`,
  { timeout: (SECONDS + 150) * 1000 },
  async (t) => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'assay-load-'));
    const database = await createTestDatabase();
    let server: AssayServer | undefined;
    let client: LoadClient | undefined;
    let rss: RssSampler | undefined;
    try {
      server = await startAssayServer({
        DATABASE_URL: database.url,
        ASSAY_DATA_DIR: dataDir,
        ASSAY_ORCHESTRATOR: 'off',
        ASSAY_LOG_LEVEL: 'warn',
      });
      rss = new RssSampler(server.process.pid);
      const start = rss.mark('start');
      client = new LoadClient(server.url, server.bootstrapKey!, { connections: 64 });
      const { experimentId, paths } = await pendingRuns(client, RUNNERS);

      const latencies: number[] = [];
      const begun = Date.now();
      const endAt = begun + SECONDS * 1000;
      const runners = Promise.all(
        paths.map((runPath) =>
          simulateRunner(client!, runPath, {
            heartbeatMs: 1000,
            startDelayMs: Math.random() * 2000,
            next: () => (Date.now() < endAt ? 'beat' : 'succeed'),
            onHeartbeat: (answer) => latencies.push(answer.ms),
          }),
        ),
      );
      await sleep(WARM_SECONDS * 1000);
      rss.mark('warm');
      const warm = rss.peakBetween(begun, Date.now());
      const heapAtWarm = await heapUsed(server.url);
      const heartbeatsAtWarm = latencies.length;
      const reports = await runners;
      const end = rss.mark('end');
      const heapAtEnd = await heapUsed(server.url);
      const elapsed = (Date.now() - begun) / 1000;
      rss.stop();

      const errors = reports.flatMap((r) => r.errors);
      const heartbeats = reports.reduce((sum, r) => sum + r.heartbeats, 0);
      t.diagnostic(
        `RSS start ${mib(start)}, warm ${mib(warm)} (highest in the first ${WARM_SECONDS} s of load; ${mib(rss.marks.get('warm')!)} at its end), end ${mib(end)}, peak ${mib(rss.peak)}; flat limit ${mib(flatLimit(warm))}`,
      );
      t.diagnostic(
        `RSS every 10 s (MiB): ${rss.trajectory()}; V8 heap used ${mib(heapAtWarm)} at warm, ${mib(heapAtEnd)} at the end`,
      );
      t.diagnostic(
        `${heartbeats} heartbeats in ${elapsed.toFixed(0)} s (${(heartbeats / elapsed).toFixed(0)}/s; ${heartbeats - heartbeatsAtWarm} after warm-up)`,
      );
      t.diagnostic(
        `heartbeat latency p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${percentile(latencies, 100).toFixed(1)} ms`,
      );
      t.diagnostic(
        `errors: ${errors.length}${errors.length ? ` (first: ${errors.slice(0, 5).join('; ')})` : ''}`,
      );

      assert.deepEqual(errors, [], 'no non-2xx answer and no network error');
      assert.equal(
        reports.filter((r) => r.end === 'succeeded').length,
        RUNNERS,
        'every runner got its succeed acknowledged',
      );
      // A floor, not a target: the machine is shared, so the rate is reported above and only a collapse
      // fails here.
      assert.ok(
        heartbeats >= RUNNERS * SECONDS * 0.5,
        `at least one heartbeat per runner every 2 s on average (${heartbeats})`,
      );
      const detail = await client.call('GET', `/experiments/${experimentId}`);
      assert.deepEqual(detail.body.run_counts, { pending: 0, running: 0, succeeded: RUNNERS, failed: 0 });
      assert.ok(
        end <= flatLimit(warm),
        `RSS grew from ${mib(warm)} after warm-up to ${mib(end)} at the end (limit ${mib(flatLimit(warm))})`,
      );
    } finally {
      rss?.stop();
      await client?.close();
      await server?.stop();
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  },
);
