// `assay run` ships what a Python program writes to ASSAY_METRICS_FILE; `assay runs metrics` shows it.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { repoRoot, runCli, tempHome } from '../support/cli.ts';
import { committedExperiment, createRun } from '../support/fixtures.ts';
import { startRecordingProxy, type RecordingProxy } from '../support/recording-proxy.ts';
import { startTestService, type TestService } from '../support/service.ts';

const SCRIPT = path.join(repoRoot, 'test/cli/fixtures/metrics.py');

describe('assay run with a program that writes metrics', () => {
  let t: TestService;
  let key: string;
  let home: string;
  let experimentId: string;
  let proxy: RecordingProxy;
  const env = () => ({ SERVICE_SERVER_URL: proxy.url, SERVICE_API_KEY: key });
  let succeeded: { r: number; path: string };

  before(async () => {
    t = await startTestService({ listen: true });
    key = (await t.createUser()).key;
    home = await tempHome();
    experimentId = (await committedExperiment(t, key)).id;
    proxy = await startRecordingProxy(t.url!);
  });
  after(async () => {
    await proxy.close();
    await t.close();
    await rm(home, { recursive: true, force: true });
  });

  async function assayRun(exitCode: number) {
    const run = await createRun(t, key, experimentId);
    const result = await runCli(
      ['run', '--experiment', experimentId, '--variation', '1', '--run', String(run.r)].concat([
        '--outputs',
        path.join(home, `outputs-${run.r}`),
        '--',
        'python3',
        SCRIPT,
        String(exitCode),
      ]),
      { home, env: env() },
    );
    return { run, result };
  }

  const series = async (runPath: string, key_: string) =>
    (await t.as(key).get(`${runPath}/metrics/${encodeURIComponent(key_)}?limit=10000`)).body as {
      count: number;
      points: { step: number; value: number | string; timestamp: string }[];
    };

  /** Every metrics POST of the run reached the service before its final move (each waits for its answer). */
  function assertMetricsBeforeEnd(runPath: string, move: 'succeed' | 'fail') {
    const mine = proxy.requests.filter((r) => r.includes(`${runPath}/`));
    const end = mine.indexOf(`POST ${runPath}/${move}`);
    const lastMetrics = mine.findLastIndex((r) => r === `POST ${runPath}/metrics`);
    assert.ok(end > 0, mine.join('\n'));
    assert.ok(lastMetrics >= 0 && lastMetrics < end, mine.join('\n'));
  }

  it('stores every well-formed line, NaN and Infinity included, reports bad lines by number, and succeeds', async () => {
    const { run, result } = await assayRun(0);
    succeeded = run;
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /ASSAY_METRICS_FILE line 2 skipped: not JSON/);
    assert.match(result.stderr, /ASSAY_METRICS_FILE line 7 skipped: invalid metric key "bad key!"/);
    assert.doesNotMatch(result.stderr, /line (1|3|4|5|6|8) skipped/);
    assert.equal((await t.as(key).get(run.path)).body.state, 'succeeded');

    const keys = (await t.as(key).get(`${run.path}/metrics`)).body.items.map((i: { key: string }) => i.key);
    assert.deepEqual(keys, ['acc', 'burst', 'grad', 'loss']);
    const loss = await series(run.path, 'loss');
    assert.deepEqual(
      loss.points.map((p) => [p.step, p.value]),
      [
        [0, 1],
        [2, 'NaN'],
        [3, 'NaN'],
        [4, 0.25],
        [5, 0.2],
      ],
    );
    assert.equal(new Date(loss.points[2]!.timestamp).toISOString(), '2026-01-02T03:04:05.500Z');
    assert.deepEqual(
      (await series(run.path, 'acc')).points.map((p) => p.value),
      [0.5, 'Infinity'],
    );
    assert.deepEqual(
      (await series(run.path, 'grad')).points.map((p) => p.value),
      ['-Infinity'],
    );
    // The burst written just before the exit, its last line without a newline: all there, before succeed.
    const burst = await series(run.path, 'burst');
    assert.equal(burst.count, 2500);
    assert.deepEqual([burst.points.at(-1)?.step, burst.points.at(-1)?.value], [2599, 1299.5]);
    assertMetricsBeforeEnd(run.path, 'succeed');
  });

  it('stores the last points of a command that fails before the run fails', async () => {
    const { run, result } = await assayRun(3);
    assert.equal(result.code, 3, result.stderr);
    const body = (await t.as(key).get(run.path)).body;
    assert.deepEqual([body.state, body.failure_reason], ['failed', 'crash']);
    assert.equal((await series(run.path, 'burst')).count, 2500);
    assertMetricsBeforeEnd(run.path, 'fail');
  });

  it('assay runs metrics: a table of every key, --json, and one key’s points', async () => {
    const cli = (...args: string[]) =>
      runCli(['runs', 'metrics', experimentId, '1', String(succeeded.r), ...args], { home, env: env() });

    const table = await cli();
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^KEY\s+COUNT\s+LAST STEP\s+LAST\s+MIN\s+MAX$/);
    assert.match(lines[1]!, /^acc\s+2\s+2\s+Infinity\s+0\.5\s+Infinity$/);
    assert.match(lines[2]!, /^burst\s+2500\s+2599\s+1299\.5\s+50\s+1299\.5$/);
    assert.match(lines[3]!, /^grad\s+1\s+2\s+-Infinity\s+-Infinity\s+-Infinity$/);
    assert.match(lines[4]!, /^loss\s+5\s+5\s+0\.2\s+0\.2\s+1$/);

    const json = await cli('--json');
    assert.equal(json.code, 0, json.stderr);
    const items = JSON.parse(json.stdout).items as { key: string; count: number }[];
    assert.deepEqual(
      items.map((i) => [i.key, i.count]),
      [
        ['acc', 2],
        ['burst', 2500],
        ['grad', 1],
        ['loss', 5],
      ],
    );

    const points = await cli('--key', 'loss');
    assert.equal(points.code, 0, points.stderr);
    const rows = points.stdout.trimEnd().split('\n');
    assert.match(rows[0]!, /^STEP\s+VALUE\s+TIME$/);
    assert.deepEqual(
      rows.slice(1).map((r) => r.split(/\s+/).slice(0, 2)),
      [
        ['0', '1'],
        ['2', 'NaN'],
        ['3', 'NaN'],
        ['4', '0.25'],
        ['5', '0.2'],
      ],
    );

    // Every point of a key that spans pages, then the server's downsampled form.
    const all = JSON.parse((await cli('--key', 'burst', '--json')).stdout);
    assert.equal(all.points.length, 2500);
    assert.equal(all.downsampled, false);
    const chart = JSON.parse((await cli('--key', 'burst', '--max-points', '50', '--json')).stdout);
    assert.equal(chart.downsampled, true);
    assert.ok(chart.points.length > 0 && chart.points.length <= 50, String(chart.points.length));

    const usage = await cli('--max-points', '50');
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--max-points goes with --key/);
  });
});
