// `assay run` while the service is away for a whole minute (issue #25's measure): the command keeps printing
// unhindered, its lines wait on the runner's side, and every one reaches the run's log once, in order, when
// the service is back. Its own file: the minute runs beside the other files instead of after them.
import assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client, type LogLine } from '../../src/client/index.ts';
import { repoRoot, spawnCli, tempHome, waitFor } from '../support/cli.ts';
import { committedExperiment, createRun } from '../support/fixtures.ts';
import { startRecordingProxy, type RecordingProxy } from '../support/recording-proxy.ts';
import { startTestService, type TestService } from '../support/service.ts';

const SCRIPT = path.join(repoRoot, 'test/cli/fixtures/output.py');
const OUTAGE_MS = 60_000;

describe('assay run: the service away for a minute', () => {
  let t: TestService;
  let key: string;
  let home: string;
  let experimentId: string;
  let client: Client;
  let proxy: RecordingProxy;
  let down = false;

  before(async () => {
    t = await startTestService({ listen: true });
    key = (await t.createUser()).key;
    home = await tempHome();
    experimentId = (await committedExperiment(t, key)).id;
    client = new Client({ serverUrl: t.url, apiKey: key });
    // Every request of the runner's meets a dropped connection while the service is "down".
    proxy = await startRecordingProxy(t.url!, { intercept: () => (down ? 'reset' : undefined) });
  });
  after(async () => {
    client.close();
    await proxy.close();
    await t.close();
    await rm(home, { recursive: true, force: true });
  });

  it('a line every 0.1 s through a 60 s outage: the command never waits, every line is stored once, in order', async () => {
    const { r } = await createRun(t, key, experimentId);
    const cwd = path.join(home, `run-${r}`);
    await mkdir(cwd, { recursive: true });
    const { child, result } = spawnCli(
      ['run', '--experiment', experimentId, '--variation', '1', '--run', String(r)].concat([
        '--',
        'python3',
        SCRIPT,
        'ticks',
        '.',
      ]),
      { home, cwd, env: { SERVICE_SERVER_URL: proxy.url, SERVICE_API_KEY: key } },
    );
    let printed = '';
    child.stdout!.on('data', (d: Buffer) => (printed += d));
    const logOf = async () => {
      const lines: LogLine[] = [];
      for (let after = 0; ;) {
        const page = await client.runs.logs(experimentId, 1, r, { after, limit: 5000 });
        lines.push(...page.lines);
        if (page.lines.length === 0) return lines;
        after = page.next_after;
      }
    };
    await waitFor(
      'the first tick stored',
      async () => ((await logOf()).length > 0 ? true : undefined),
      30_000,
    );

    down = true;
    const wentDown = Date.now();
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    const refused = proxy.requests.filter((q) => q.endsWith('/logs (reset)')).length;
    down = false;
    const cameBack = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await writeFile(path.join(cwd, 'up'), '');
    const { code, stderr } = await result;
    assert.equal(code, 0, stderr);
    assert.ok(refused >= 10, `the runner kept trying through the outage (${refused} log requests refused)`);

    const lines = await logOf();
    const texts = lines.map((l) => l.text);
    // What the terminal saw is what the log holds: nothing lost, nothing twice, in order.
    assert.deepEqual(texts, printed.trimEnd().split('\n'));
    assert.deepEqual(
      lines.map((l) => l.seq),
      lines.map((_, i) => i + 1),
    );
    assert.equal(texts.at(-1), 'ticks done');
    const ticks = texts.slice(0, -1).map((text) => {
      const [, i, ms] = /^tick (\d+) (\d+)$/.exec(text)!;
      return { i: Number(i), ms: Number(ms) };
    });
    assert.deepEqual(
      ticks.map((tick) => tick.i),
      ticks.map((_, i) => i),
    );
    // The command printed all through the minute (a write that waited on the shipper would leave a gap).
    const during = ticks.filter((tick) => tick.ms > wentDown && tick.ms < cameBack);
    assert.ok(during.length >= 300, `${during.length} lines printed during the outage`);
    const gaps = ticks.slice(1).map((tick, i) => tick.ms - ticks[i]!.ms);
    assert.ok(Math.max(...gaps) < 5_000, `the longest pause between two prints: ${Math.max(...gaps)} ms`);
  });
});
