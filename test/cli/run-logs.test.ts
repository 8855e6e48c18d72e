// `assay run` passes the command's output through and ships it as the run's console log: lines with their
// stream, partial lines, progress bars, long lines, bad UTF-8, a flood, and a service that goes away.
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

describe('assay run: the console log', () => {
  let t: TestService;
  let key: string;
  let home: string;
  let experimentId: string;
  let client: Client;
  let proxy: RecordingProxy;
  /** What the proxy does to a request now: pass it on, or fail it as an unreachable service would. */
  let fault: (url: string, method: string) => 'reset' | 'lost' | undefined = () => undefined;

  before(async () => {
    t = await startTestService({ listen: true });
    key = (await t.createUser()).key;
    home = await tempHome();
    experimentId = (await committedExperiment(t, key)).id;
    client = new Client({ serverUrl: t.url, apiKey: key });
    proxy = await startRecordingProxy(t.url!, { intercept: (req) => fault(req.url ?? '', req.method ?? '') });
  });
  after(async () => {
    client.close();
    await proxy.close();
    await t.close();
    await rm(home, { recursive: true, force: true });
  });

  async function assayRun(args: string[], env: Record<string, string> = {}) {
    const { r } = await createRun(t, key, experimentId);
    const cwd = path.join(home, `run-${r}`);
    await mkdir(cwd, { recursive: true });
    const spawned = spawnCli(
      [
        'run',
        '--experiment',
        experimentId,
        '--variation',
        '1',
        '--run',
        String(r),
        '--',
        'python3',
        SCRIPT,
        ...args,
      ],
      { home, cwd, env: { SERVICE_SERVER_URL: proxy.url, SERVICE_API_KEY: key, ...env } },
    );
    return { r, cwd, ...spawned };
  }

  /** Every line of the run's log, page by page. */
  async function logOf(r: number): Promise<{ lines: LogLine[]; complete: boolean }> {
    const lines: LogLine[] = [];
    for (let after = 0; ;) {
      const page = await client.runs.logs(experimentId, 1, r, { after, limit: 5000 });
      lines.push(...page.lines);
      if (page.lines.length === 0) return { lines, complete: page.complete };
      after = page.next_after;
    }
  }

  function assertNumbered(lines: LogLine[]) {
    assert.deepEqual(
      lines.map((l) => l.seq),
      lines.map((_, i) => i + 1),
    );
  }

  it('passes the output through at once and unchanged, and logs it line by line with its stream', async () => {
    const { r, child, result } = await assayRun(['mixed']);
    let seen = '';
    child.stdout!.on('data', (d: Buffer) => (seen += d.toString('latin1')));
    // The partial line reaches the terminal while the program still waits to finish it.
    await waitFor('the partial line on stdout', () => (seen.includes('partial') ? true : undefined));
    assert.doesNotMatch(seen, / rest/);
    const { code, stdout, stderr } = await result;
    assert.equal(code, 0, stderr);
    assert.equal(
      stdout,
      `first line\npartial rest\n${'x'.repeat(200_000)}\nbad \ufffd\ufffd bytes \ufffd\nlast line`,
    );
    // stderr is the command's, \r and all, besides the runner's own `assay:` lines.
    assert.equal(stderr.split('\rprogress').length - 1, 201);
    assert.match(stderr, /a warning\n/);

    // Every chunk was stored before the run succeeded.
    const mine = proxy.requests.filter((q) => q.includes(`/runs/${r}/`));
    const end = mine.indexOf(`POST /experiments/${experimentId}/variations/1/runs/${r}/succeed`);
    assert.ok(end > 0 && mine.findLastIndex((q) => q.endsWith(`/runs/${r}/logs`)) < end, mine.join('\n'));
    const { lines, complete } = await logOf(r);
    assert.equal(complete, true);
    assertNumbered(lines);
    const progress = lines.filter((l) => l.text.startsWith('progress'));
    // One line redrawn for about a second: its final state, at most one intermediate one.
    assert.ok(progress.length >= 1 && progress.length <= 2, JSON.stringify(progress));
    assert.equal(progress.at(-1)!.text, 'progress 100%');
    assert.equal(progress.at(-1)!.stream, 'stderr');
    const rest = lines.filter((l) => !l.text.startsWith('progress'));
    assert.deepEqual(
      rest.map((l) => [l.stream, l.text.length > 100 ? `${l.text[0]}×${l.text.length}` : l.text]),
      [
        ['stdout', 'first line'],
        ['stderr', 'a warning'],
        ['stdout', 'partial'],
        ['stdout', ' rest'],
        ['stdout', 'x×65536'],
        ['stdout', 'x×65536'],
        ['stdout', 'x×65536'],
        ['stdout', 'x×3392'],
        ['stdout', 'bad \ufffd\ufffd bytes \ufffd'],
        ['stdout', 'last line'],
      ],
    );
    // The progress bar sits between the partial line's rest and the long line.
    assert.ok(lines.indexOf(progress.at(-1)!) === lines.indexOf(rest[4]!) - 1);
    for (const line of lines) assert.ok(!Number.isNaN(Date.parse(line.time)));
    // The partial line's time is when it began, its rest's when that came.
    const [partial, restLine] = [rest[2]!, rest[3]!];
    assert.ok(
      Date.parse(restLine.time) - Date.parse(partial.time) >= 2000,
      `${partial.time} ${restLine.time}`,
    );
  });

  it('a program printing 100,000 lines as fast as it can: every line arrives once, in order', async () => {
    const { r, result } = await assayRun(['many', '100000']);
    const { code, stdout, stderr } = await result;
    assert.equal(code, 0, stderr);
    assert.equal(stdout.split('\n').length - 1, 100_000);
    const { lines } = await logOf(r);
    assert.equal(lines.length, 100_001);
    assertNumbered(lines);
    const printed = lines.filter((l) => l.stream === 'stdout');
    assert.equal(printed.length, 100_000);
    printed.forEach((l, i) => assert.equal(l.text, `line ${i}`));
    // Its stderr line, printed after the last stdout line, may be read before it: two pipes have no common order.
    assert.match(lines.find((l) => l.stream === 'stderr')!.text, /^printed in [\d.]+ s$/);
  });

  it('keeps the lines while the service is away, spilling them to disk, and sends each once when it is back', async () => {
    const lost: string[] = [];
    // Two chunks' answers are lost after the service stored them (one before the outage, one after): their
    // resends store nothing twice.
    const loseTwo = (url: string, method: string) => {
      if (method === 'POST' && url.endsWith('/logs') && lost.length < 2) {
        lost.push(url);
        return 'lost';
      }
      return undefined;
    };
    fault = loseTwo;
    const { r, cwd, child, result } = await assayRun(['outage', '.', '20000'], {
      ASSAY_RUN_LOG_MEMORY_MB: '0.25',
    });
    let seen = '';
    child.stdout!.on('data', (d: Buffer) => (seen += d));
    await waitFor('the first line', () => (seen.includes('before the outage') ? true : undefined));
    await waitFor('the first line stored', async () =>
      (await logOf(r)).lines.some((l) => l.text === 'before the outage') ? true : undefined,
    );
    fault = () => 'reset';
    await writeFile(path.join(cwd, 'down'), '');
    await waitFor('the burst', () => (seen.includes('burst done') ? true : undefined), 60_000);
    // Long enough for the runner to try and fail a few times.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const refused = proxy.requests.filter((q) => q.endsWith('/logs (reset)')).length;
    fault = loseTwo;
    await writeFile(path.join(cwd, 'up'), '');
    const { code, stderr } = await result;
    assert.equal(code, 0, stderr);
    assert.ok(refused >= 1, 'no log chunk met the outage');
    assert.equal(lost.length, 2);
    fault = () => undefined;
    assert.equal(stderr.match(/could not send the command's output yet/g)?.length, 1, stderr);

    const { lines } = await logOf(r);
    assertNumbered(lines);
    const texts = lines.map((l) => l.text);
    const burst = Array.from(
      { length: 20_000 },
      (_, i) => `burst ${String(i).padStart(6, '0')} ${'.'.repeat(40)}`,
    );
    assert.deepEqual(texts, ['before the outage', ...burst, 'burst done', 'after the outage']);
  });

  it('past its disk bound drops the oldest unsent lines, says so once, and marks the gap in the log', async () => {
    fault = () => undefined;
    const { r, cwd, child, result } = await assayRun(['outage', '.', '30000'], {
      ASSAY_RUN_LOG_MEMORY_MB: '0.1',
      ASSAY_RUN_LOG_DISK_MB: '1',
    });
    let seen = '';
    child.stdout!.on('data', (d: Buffer) => (seen += d));
    await waitFor('the first line stored', async () =>
      (await logOf(r)).lines.some((l) => l.text === 'before the outage') ? true : undefined,
    );
    fault = () => 'reset';
    await writeFile(path.join(cwd, 'down'), '');
    await waitFor('the burst', () => (seen.includes('burst done') ? true : undefined), 60_000);
    fault = () => undefined;
    await writeFile(path.join(cwd, 'up'), '');
    const { code, stderr } = await result;
    assert.equal(code, 0, stderr);
    assert.equal(stderr.match(/dropping its oldest unsent lines/g)?.length, 1, stderr);

    const { lines } = await logOf(r);
    assertNumbered(lines);
    const marker = lines.findIndex((l) => l.text.startsWith('[assay: '));
    assert.ok(marker > 0, 'no line marks the gap');
    const dropped = Number(/^\[assay: (\d+) line\(s\)/.exec(lines[marker]!.text)?.[1]);
    assert.equal(lines[marker]!.stream, 'stderr');
    const kept = lines.filter((l) => l.text.startsWith('burst ') && l.text !== 'burst done');
    assert.ok(dropped > 0);
    assert.equal(kept.length + dropped, 30_000);
    // What is kept: the lines sent before the outage, then the newest ones, in order.
    const numbers = kept.map((l) => Number(l.text.split(' ')[1]));
    const head = numbers.filter((n, i) => n === i);
    assert.deepEqual(
      numbers.slice(head.length),
      Array.from({ length: kept.length - head.length }, (_, i) => head.length + dropped + i),
    );
    assert.equal(lines.at(-1)!.text, 'after the outage');
  });
});
