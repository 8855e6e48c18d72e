// `assay runs logs EXP N R`: prints a run's console log (stderr lines on stderr), pages through it, follows
// it until the run has ended, and says where the service's cap dropped lines.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { runCli, spawnCli, tempHome, waitFor } from '../support/cli.ts';
import { committedExperiment, runningRun } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

/** Lines from…from+count-1: every third on stderr. */
function lines(from: number, count: number, text = (seq: number) => `line ${seq}`) {
  return Array.from({ length: count }, (_, i) => ({
    stream: (from + i) % 3 === 0 ? 'stderr' : 'stdout',
    time: new Date(Date.UTC(2026, 10, 27, 17, 0, from + i)).toISOString(),
    text: text(from + i),
  }));
}
const texts = (from: number, to: number, keep: (seq: number) => boolean) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i)
    .filter(keep)
    .map((seq) => `line ${seq}\n`)
    .join('');

describe('assay runs logs', () => {
  let t: TestService;
  let key: string;
  let home: string;
  let experimentId: string;
  const env = () => ({ SERVICE_SERVER_URL: t.url, SERVICE_API_KEY: key });
  const append = async (path: string, first: number, count: number, text?: (seq: number) => string) => {
    const res = await t.as(key).post(`${path}/logs`, { first_seq: first, lines: lines(first, count, text) });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  };
  const cli = (run: { path: string }, ...args: string[]) =>
    runCli(['runs', 'logs', experimentId, '1', run.path.split('/').pop()!, ...args], { home, env: env() });

  before(async () => {
    // A 1 MiB cap, so a test can pass it.
    t = await startTestService({ listen: true, env: { ASSAY_RUN_LOG_MAX_MB: '1' } });
    key = (await t.createUser()).key;
    home = await tempHome();
    experimentId = (await committedExperiment(t, key)).id;
  });
  after(async () => {
    await t?.close();
    await rm(home, { recursive: true, force: true });
  });

  it('prints the log, stderr lines on stderr, across pages; --stream and --after choose lines', async () => {
    const run = await runningRun(t, key, experimentId);
    // More lines than one page holds (5,000).
    for (let first = 1; first <= 6000; first += 1500) await append(run.path, first, 1500);
    const all = await cli(run);
    assert.equal(all.code, 0, all.stderr);
    assert.equal(
      all.stdout,
      texts(1, 6000, (s) => s % 3 !== 0),
    );
    assert.equal(
      all.stderr,
      texts(1, 6000, (s) => s % 3 === 0),
    );
    const stderr = await cli(run, '--stream', 'stderr', '--after', '5990');
    assert.deepEqual(
      [stderr.code, stderr.stdout, stderr.stderr],
      [0, '', texts(5991, 6000, (s) => s % 3 === 0)],
    );
    const bad = await cli(run, '--stream', 'stdin');
    assert.equal(bad.code, 2, 'a usage error');
    const missing = await runCli(['runs', 'logs', experimentId, '1', '999'], { home, env: env() });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /not found/);
  });

  it('--follow prints lines as they are stored and exits 0 once the run has ended', async () => {
    const run = await runningRun(t, key, experimentId);
    await append(run.path, 1, 2);
    const { child, result } = spawnCli(
      ['runs', 'logs', experimentId, '1', run.path.split('/').pop()!, '-f'],
      {
        home,
        env: env(),
      },
    );
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d));
    await waitFor('the first lines', () => (out === 'line 1\nline 2\n' ? true : undefined), 30_000);
    await append(run.path, 3, 3);
    await waitFor(
      'the next lines',
      () => (out === 'line 1\nline 2\nline 4\nline 5\n' ? true : undefined),
      30_000,
    );
    assert.equal((await t.as(key).post(`${run.path}/succeed`)).status, 200);
    const done = await result;
    assert.deepEqual(
      [done.code, done.stdout, done.stderr],
      [0, 'line 1\nline 2\nline 4\nline 5\n', 'line 3\n'],
    );
  });

  it('--follow --stream stderr follows only the stderr lines, past stdout-only chunks, until the run ends', async () => {
    const run = await runningRun(t, key, experimentId);
    await append(run.path, 1, 3); // line 3 on stderr
    const { child, result } = spawnCli(
      ['runs', 'logs', experimentId, '1', run.path.split('/').pop()!, '--follow', '--stream', 'stderr'],
      { home, env: env() },
    );
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d));
    await waitFor('the first stderr line', () => (err === 'line 3\n' ? true : undefined), 30_000);
    await append(run.path, 4, 2); // stdout only: nothing to print, the follow goes on
    await append(run.path, 6, 4); // line 6 and line 9 on stderr
    await waitFor(
      'the next stderr lines',
      () => (err === 'line 3\nline 6\nline 9\n' ? true : undefined),
      30_000,
    );
    assert.equal((await t.as(key).post(`${run.path}/succeed`)).status, 200);
    const done = await result;
    assert.deepEqual([done.code, done.stdout, done.stderr], [0, '', 'line 3\nline 6\nline 9\n']);
  });

  it('says where the cap dropped lines', async () => {
    const run = await runningRun(t, key, experimentId);
    // 20 chunks of 10 lines of 10,000 bytes: the first 5 and the last 5 are kept, 100 lines dropped.
    const long = (seq: number) => `line ${seq} `.padEnd(9_999, '.');
    for (let first = 1; first <= 200; first += 10) await append(run.path, first, 10, long);
    const res = await cli(run, '--stream', 'stdout');
    assert.equal(res.code, 0, res.stderr);
    const printed = res.stdout.split('\n').map((l) => l.replace(/ \.+$/, ''));
    const kept = (from: number, to: number) =>
      Array.from({ length: to - from + 1 }, (_, i) => from + i)
        .filter((s) => s % 3 !== 0)
        .map((s) => `line ${s}`);
    assert.deepEqual(printed, [...kept(1, 50), '[… 100 lines dropped …]', ...kept(151, 200), '']);
  });
});
