// A run's console log (POST/GET …/runs/{r}/logs, GET …/logs.txt): idempotent chunks by first seq, pages,
// the follow's long-poll, the end and the grace, the per-run cap, compression at rest, and who may reach a
// log; on the embedded PGlite and on PostgreSQL.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { metric } from '../support/http-api.ts';
import { committedExperiment, createRun, runningRun } from '../support/fixtures.ts';
import { startTestService, type Api, type TestService } from '../support/service.ts';

interface Line {
  seq: number;
  stream: 'stdout' | 'stderr';
  time: string;
  text: string;
}
interface Page {
  lines: Line[];
  next_after: number;
  complete: boolean;
  dropped: { lines: number; bytes: number; after_seq?: number };
}

const T0 = Date.parse('2026-11-27T17:00:00.000Z');
/** Lines `from`…`from + count - 1` as the runner sends them: odd seqs on stderr, text naming the seq. */
function lines(from: number, count: number, text = (seq: number) => `line ${seq}`) {
  return Array.from({ length: count }, (_, i) => ({
    stream: (from + i) % 2 === 1 ? 'stderr' : 'stdout',
    time: new Date(T0 + (from + i) * 1000).toISOString(),
    text: text(from + i),
  }));
}

const append = (api: Api, key: string, path: string, first: number, count: number) =>
  api.as(key).post(`${path}/logs`, { first_seq: first, lines: lines(first, count) });

/** Every line of the log, paging with `query`. */
async function readAll(api: Api, key: string, path: string, query = '') {
  const all: Line[] = [];
  let afterSeq = 0;
  for (;;) {
    const res = await api.as(key).get<Page>(`${path}/logs?after=${afterSeq}${query}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    all.push(...res.body.lines);
    if (res.body.next_after === afterSeq) return { lines: all, page: res.body };
    afterSeq = res.body.next_after;
  }
}

async function waiting(api: Api, n: number): Promise<void> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(20))
    if ((await metric(api, 'assay_run_log_waiting')) === n) return;
  assert.fail(`the service never held ${n} waiting log follow(s)`);
}

for (const backend of ['PGlite', 'PostgreSQL'] as const) {
  describe(`run logs (${backend})`, () => {
    let t: TestService;
    let key: string;
    let experimentId: string;

    before(async () => {
      t = await startTestService({ pglite: backend === 'PGlite' });
      key = (await t.createUser()).key;
      experimentId = (await committedExperiment(t, key)).id;
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(20))
        if ((await metric(t, 'assay_run_log_listener_up')) === 1) break;
    });
    after(() => t?.close());

    it('stores chunks in seq order; a resent or overlapping chunk stores nothing twice', async () => {
      const run = await runningRun(t, key, experimentId);
      const first = await append(t, key, run.path, 1, 5);
      assert.deepEqual([first.status, first.body], [200, { last_seq: 5, dropped: { lines: 0, bytes: 0 } }]);
      assert.equal((await append(t, key, run.path, 1, 5)).body.last_seq, 5, 'the same chunk again');
      assert.equal((await append(t, key, run.path, 3, 6)).body.last_seq, 8, 'overlapping: 3…8 over 1…5');
      assert.equal((await append(t, key, run.path, 9, 2)).body.last_seq, 10);
      // A gap (12 before 11), then its filler overlapping both sides.
      assert.equal((await append(t, key, run.path, 12, 2)).body.last_seq, 13);
      assert.equal((await append(t, key, run.path, 10, 4)).body.last_seq, 13);
      const { lines: got, page } = await readAll(t, key, run.path);
      assert.deepEqual(
        got.map((l) => l.seq),
        Array.from({ length: 13 }, (_, i) => i + 1),
      );
      assert.deepEqual(got[0], {
        seq: 1,
        stream: 'stderr',
        time: '2026-11-27T17:00:01.000Z',
        text: 'line 1',
      });
      assert.deepEqual(got[11]!.text, 'line 12');
      // A runner's clock with an offset: answered in UTC, as every time the API gives.
      const offset = await t.as(key).post(`${run.path}/logs`, {
        first_seq: 14,
        lines: [{ stream: 'stdout', time: '2026-11-27T19:00:00.5+02:00', text: 'ünïcode ✓' }],
      });
      assert.equal(offset.status, 200, JSON.stringify(offset.body));
      const [line14] = (await t.as(key).get<Page>(`${run.path}/logs?after=13`)).body.lines;
      assert.deepEqual(line14, {
        seq: 14,
        stream: 'stdout',
        time: '2026-11-27T17:00:00.500Z',
        text: 'ünïcode ✓',
      });
      assert.equal(page.complete, false, 'the run is still running');
    });

    it('pages with after and limit, and filters by stream', async () => {
      const run = await runningRun(t, key, experimentId);
      await append(t, key, run.path, 1, 30);
      await append(t, key, run.path, 31, 30);
      const page = await t.as(key).get<Page>(`${run.path}/logs?after=10&limit=7`);
      assert.deepEqual(
        page.body.lines.map((l) => l.seq),
        [11, 12, 13, 14, 15, 16, 17],
      );
      assert.equal(page.body.next_after, 17);
      const stderr = await readAll(t, key, run.path, '&stream=stderr&limit=4');
      assert.equal(stderr.lines.length, 30);
      assert.ok(stderr.lines.every((l) => l.stream === 'stderr' && l.seq % 2 === 1));
      const stdout = await readAll(t, key, run.path, '&stream=stdout');
      assert.deepEqual(
        stdout.lines.map((l) => l.seq),
        Array.from({ length: 30 }, (_, i) => 2 * (i + 1)),
      );
      // Past the end: nothing, next_after stays.
      const end = await t.as(key).get<Page>(`${run.path}/logs?after=60`);
      assert.deepEqual([end.body.lines, end.body.next_after], [[], 60]);
    });

    it('a follow wakes as soon as a chunk is stored, and completes once the run ended', async () => {
      const run = await runningRun(t, key, experimentId);
      await append(t, key, run.path, 1, 3);
      const began = Date.now();
      const follow = t.as(key).get<Page>(`${run.path}/logs?after=3&wait_s=30`);
      await waiting(t, 1);
      assert.equal((await append(t, key, run.path, 4, 2)).status, 200);
      const woken = await follow;
      assert.deepEqual(
        woken.body.lines.map((l) => l.seq),
        [4, 5],
      );
      assert.ok(Date.now() - began < 30_000, 'answered only when wait_s ran out');
      assert.equal(woken.body.complete, false);
      // The run ends during the next follow: it answers complete, with no line.
      const next = t.as(key).get<Page>(`${run.path}/logs?after=5&wait_s=30`);
      await waiting(t, 1);
      assert.equal((await t.as(key).post(`${run.path}/succeed`)).status, 200);
      const ended = await next;
      assert.deepEqual([ended.body.lines, ended.body.next_after, ended.body.complete], [[], 5, true]);
      // Lines stored later, within the grace, are read; complete again once they are answered.
      assert.equal((await append(t, key, run.path, 6, 1)).status, 200);
      const late = await t.as(key).get<Page>(`${run.path}/logs?after=5`);
      assert.deepEqual([late.body.lines.map((l) => l.seq), late.body.complete], [[6], true]);
      const partial = await t.as(key).get<Page>(`${run.path}/logs?after=0&limit=2`);
      assert.equal(partial.body.complete, false, 'lines are left to answer');
    });

    it('refuses a pending run (409), bad bodies and queries (4xx), and reaches only visible runs', async () => {
      const pending = await createRun(t, key, experimentId);
      const early = await append(t, key, pending.path, 1, 1);
      assert.deepEqual([early.status, early.body.error.code], [409, 'run_not_started']);
      const run = await runningRun(t, key, experimentId);
      const bad: unknown[] = [
        {},
        { first_seq: 0, lines: lines(1, 1) },
        { first_seq: 1, lines: [] },
        { first_seq: 1, lines: [{ stream: 'stdin', time: new Date().toISOString(), text: 'x' }] },
        { first_seq: 1, lines: [{ stream: 'stdout', time: 'yesterday', text: 'x' }] },
        { first_seq: 1, lines: [{ stream: 'stdout', time: new Date().toISOString() }] },
        { first_seq: 1, lines: lines(1, 1), extra: true },
        {
          first_seq: 1,
          lines: [{ stream: 'stdout', time: new Date().toISOString(), text: 'é'.repeat(40_000) }],
        },
        { first_seq: Number.MAX_SAFE_INTEGER, lines: lines(1, 2) },
        'not json',
      ];
      for (const body of bad) {
        const res =
          typeof body === 'string'
            ? await t.request('POST', `${run.path}/logs`, {
                key,
                rawBody: body,
                headers: { 'content-type': 'application/json' },
              })
            : await t.as(key).post(`${run.path}/logs`, body);
        // The service's rule: a body that is not JSON is 400, JSON the schema refuses 422 (validation_failed).
        assert.ok(
          [400, 422].includes(res.status),
          `${JSON.stringify(body).slice(0, 80)}: ${res.status} ${JSON.stringify(res.body)}`,
        );
        assert.equal(typeof res.body.error.code, 'string');
      }
      for (const query of ['after=-1', 'limit=0', 'limit=5001', 'stream=stdin', 'wait_s=61', 'after=x']) {
        const res = await t.as(key).get(`${run.path}/logs?${query}`);
        assert.equal(res.status, 400, `${query}: ${JSON.stringify(res.body)}`);
      }
      assert.equal((await t.as(key).get(`${run.path}/logs`)).body.lines.length, 0, 'nothing was stored');

      // A worker key appends to and reads its own run only; another user sees no run at all.
      const other = await runningRun(t, key, experimentId);
      const minted = await t.as(key).post('/api-keys', {
        description: 'worker',
        kind: 'worker',
        scopes: ['runs:read', 'runs:write'],
        run: { experiment_id: experimentId, n: 1, r: Number(run.path.split('/').pop()) },
      });
      assert.equal(minted.status, 201, JSON.stringify(minted.body));
      const worker = minted.body.key as string;
      assert.equal((await append(t, worker, run.path, 1, 2)).status, 200);
      assert.equal((await t.as(worker).get(`${run.path}/logs`)).body.lines.length, 2);
      assert.equal((await append(t, worker, other.path, 1, 2)).status, 404);
      assert.equal((await t.as(worker).get(`${other.path}/logs`)).status, 404);
      assert.equal((await t.as(worker).get(`${other.path}/logs.txt`)).status, 404);
      const stranger = (await t.createUser()).key;
      assert.equal((await append(t, stranger, run.path, 3, 2)).status, 404);
      assert.equal((await t.as(stranger).get(`${run.path}/logs`)).status, 404);
      assert.equal((await t.as(stranger).get(`${run.path}/logs.txt`)).status, 404);
      assert.equal((await t.as(key).get(`${other.path}/logs`)).body.lines.length, 0, "the other run's log");
      assert.equal((await t.as(key).get(`${run.path}/logs`)).body.lines.length, 2);
    });

    it('downloads the whole log as text, one line per log line', async () => {
      const run = await runningRun(t, key, experimentId);
      await append(t, key, run.path, 1, 3);
      const res = await t.as(key).get(`${run.path}/logs.txt`);
      assert.equal(res.status, 200);
      assert.match(String(res.headers['content-type']), /^text\/plain/);
      assert.match(String(res.headers['content-disposition']), /^attachment; filename=".+\.txt"/);
      assert.equal(
        res.body,
        '2026-11-27T17:00:01.000Z stderr | line 1\n' +
          '2026-11-27T17:00:02.000Z stdout | line 2\n' +
          '2026-11-27T17:00:03.000Z stderr | line 3\n',
      );
    });

    it('keeps the log compressed at rest', async () => {
      const run = await runningRun(t, key, experimentId);
      const text = (seq: number) =>
        `step ${seq} loss=${(1 / seq).toFixed(6)} lr=0.001 | ${'#'.repeat(seq % 40)}`;
      for (let first = 1; first <= 1000; first += 100) {
        const res = await t
          .as(key)
          .post(`${run.path}/logs`, { first_seq: first, lines: lines(first, 100, text) });
        assert.equal(res.status, 200);
      }
      const [size] = await t.service.db.query<{ raw: string; stored: string }>(
        `SELECT sum(c.raw_bytes) AS raw, sum(octet_length(c.body)) AS stored
           FROM run_log_chunks c WHERE c.run_id = $1`,
        [run.id],
      );
      const raw = Array.from({ length: 1000 }, (_, i) => Buffer.byteLength(text(i + 1)) + 1).reduce(
        (a, b) => a + b,
      );
      assert.equal(Number(size!.raw), raw);
      assert.ok(Number(size!.stored) * 3 < raw, `stored ${size!.stored} bytes of ${raw} bytes of text`);
    });
  });
}

for (const backend of ['PGlite', 'PostgreSQL'] as const) {
  describe(`run logs past the cap and the grace (${backend})`, () => {
    let t: TestService;
    before(async () => {
      // A 1 MiB cap: 512 KiB of head and 512 KiB of tail; a run takes lines 1 ms after it ended, no longer.
      t = await startTestService({
        pglite: backend === 'PGlite',
        env: { ASSAY_RUN_LOG_MAX_MB: '1', ASSAY_METRICS_GRACE_S: '0.001' },
      });
    });
    after(() => t?.close());

    it('keeps the head and the tail, drops whole chunks between, and says how much', async () => {
      const e = await committedExperiment(t, t.adminKey);
      const run = await runningRun(t, t.adminKey, e.id);
      // 20 chunks of 10 lines of 10,000 bytes (with the line break): 5 fit the head's 524,288 bytes, the
      // newest 5 the tail's.
      const text = (seq: number) => `${seq}:`.padEnd(9_999, 'x');
      let last: { last_seq: number; dropped: Page['dropped'] } | undefined;
      for (let first = 1; first <= 200; first += 10) {
        const res = await t
          .as(t.adminKey)
          .post(`${run.path}/logs`, { first_seq: first, lines: lines(first, 10, text) });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        last = res.body;
      }
      const dropped = { lines: 100, bytes: 1_000_000, after_seq: 50 };
      assert.deepEqual(last, { last_seq: 200, dropped });
      // A resent chunk the cap dropped stays dropped.
      const resent = await t
        .as(t.adminKey)
        .post(`${run.path}/logs`, { first_seq: 71, lines: lines(71, 10, text) });
      assert.deepEqual(resent.body, { last_seq: 200, dropped });
      const { lines: kept, page } = await readAll(t, t.adminKey, run.path, '&limit=17');
      assert.deepEqual(
        kept.map((l) => l.seq),
        [...Array.from({ length: 50 }, (_, i) => i + 1), ...Array.from({ length: 50 }, (_, i) => i + 151)],
      );
      assert.equal(kept[60]!.text, text(161));
      assert.deepEqual(page.dropped, dropped);
      const txt = await t.as(t.adminKey).get(`${run.path}/logs.txt`);
      const rows = String(txt.body).split('\n');
      assert.equal(rows.length, 102, 'the kept lines, the marker and the final line break');
      assert.equal(rows[50], '[… 100 lines (1.0 MB) dropped …]');
      assert.equal(rows[49], `2026-11-27T17:00:50.000Z stdout | ${text(50)}`);
      assert.equal(rows[51], `2026-11-27T17:02:31.000Z stderr | ${text(151)}`);
      const [size] = await t.service.db.query<{ raw: string; n: string }>(
        `SELECT sum(raw_bytes) AS raw, count(*) AS n FROM run_log_chunks WHERE run_id = $1`,
        [run.id],
      );
      assert.deepEqual([Number(size!.raw), Number(size!.n)], [1_000_000, 10], 'the dropped chunks are gone');
    });

    it('takes lines for the grace after the run ended, then 409 run_ended; the log stays readable', async () => {
      const e = await committedExperiment(t, t.adminKey);
      const run = await runningRun(t, t.adminKey, e.id);
      assert.equal((await append(t, t.adminKey, run.path, 1, 2)).status, 200);
      assert.equal((await t.as(t.adminKey).post(`${run.path}/fail`, { reason: 'crash' })).status, 200);
      await sleep(20);
      const late = await append(t, t.adminKey, run.path, 3, 2);
      assert.deepEqual([late.status, late.body.error.code], [409, 'run_ended']);
      const page = await t.as(t.adminKey).get<Page>(`${run.path}/logs?wait_s=5`);
      assert.deepEqual([page.body.lines.length, page.body.next_after, page.body.complete], [2, 2, true]);
    });
  });
}

describe('run log follows across two replicas on one PostgreSQL', () => {
  let a: TestService;
  let b: TestService;
  before(async () => {
    a = await startTestService();
    b = await startTestService({ replicaOf: a });
    for (const s of [a, b])
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(20))
        if ((await metric(s, 'assay_run_log_listener_up')) === 1) break;
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  it('a follow on one replica wakes when the other stores a chunk', async () => {
    const e = await committedExperiment(a, a.adminKey);
    const run = await runningRun(a, a.adminKey, e.id);
    const began = Date.now();
    const follow = b.as(a.adminKey).get<Page>(`${run.path}/logs?wait_s=60`);
    await waiting(b, 1);
    assert.equal((await append(a, a.adminKey, run.path, 1, 3)).status, 200);
    const page = await follow;
    assert.deepEqual(
      page.body.lines.map((l) => l.text),
      ['line 1', 'line 2', 'line 3'],
    );
    assert.ok(Date.now() - began < 60_000, 'answered only when wait_s ran out');
    assert.equal(await metric(b, 'assay_run_log_waiting'), 0);
  });
});
