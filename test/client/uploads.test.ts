import assert from 'node:assert/strict';
import { appendFileSync, unlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import { Client, UploadError } from '../../src/client/index.ts';
import { committedExperiment, runningRun } from '../support/fixtures.ts';
import { finalizeCalls, maxConcurrent, storagePuts } from '../support/request-log.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { downloadedDigests, randomFile } from '../support/upload-files.ts';

const KIB = 1024;

describe('uploads through the crash-safe uploader (local storage)', () => {
  let t: TestService;
  let key: string;
  let dir: string;
  const clients: Client[] = [];
  const client = (o: { maxUploadWorkers?: number; store?: string } = {}) => {
    const c = new Client({
      serverUrl: t.url,
      apiKey: key,
      uploadStorePath: path.join(dir, o.store ?? 'uploads.db'),
      maxUploadWorkers: o.maxUploadWorkers,
    });
    clients.push(c);
    return c;
  };

  before(async () => {
    // Components over 256 KiB go in 64 KiB parts, so a 1 MiB file is a real multipart upload.
    t = await startTestService({
      listen: true,
      env: {
        ASSAY_MULTIPART_THRESHOLD_BYTES: String(256 * KIB),
        ASSAY_MULTIPART_PART_BYTES: String(64 * KIB),
      },
    });
    key = (await t.createUser()).key;
    dir = await mkdtemp(path.join(tmpdir(), 'assay-uploads-'));
  });
  after(async () => {
    for (const c of clients) c.close();
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('upload() returns the ready asset; files of 0 bytes, 1 KB and 1 MiB (multipart) come back byte for byte', async () => {
    const files = [
      await randomFile(dir, 'empty.bin', 0),
      await randomFile(dir, 'small.txt', 1000),
      await randomFile(dir, 'big.bin', 1024 * KIB + 123),
    ];
    const logFrom = t.logs.length;
    const asset = await client().upload({
      kind: 'output',
      name: 'three sizes',
      files: files.map((f) => ({ path: f.path })),
    });
    assert.equal(asset.state, 'ready');
    assert.deepEqual(Object.fromEntries(Object.entries(asset.components).map(([n, c]) => [n, c.size])), {
      'empty.bin': 0,
      'small.txt': 1000,
      'big.bin': 1024 * KIB + 123,
    });
    assert.deepEqual(
      await downloadedDigests(client(), asset.id),
      Object.fromEntries(files.map((f) => [path.basename(f.path), f.sha256])),
    );
    const puts = storagePuts(t.logs, logFrom);
    assert.equal(
      [...puts.keys()].filter((k) => k.startsWith(`${asset.id}/big.bin#`)).length,
      17,
      'the big file went in 17 parts of 64 KiB',
    );
    assert.ok(
      [...puts.values()].every((n) => n === 1),
      'each part once',
    );
    assert.equal(finalizeCalls(t.logs, logFrom).get(asset.id), 1);
  });

  it('uploadAsync() returns before any byte moves, reports progress, and `done` resolves with the ready asset', async () => {
    const file = await randomFile(dir, 'async.bin', 512 * KIB);
    const logFrom = t.logs.length;
    const handle = client().uploadAsync({
      kind: 'output',
      name: 'async',
      files: [{ path: file.path, name: 'weights.bin', contentType: 'application/x-weights' }],
    });
    assert.equal(storagePuts(t.logs, logFrom).size, 0, 'nothing sent yet when uploadAsync returns');
    assert.deepEqual(handle.progress(), { bytesDone: 0, bytesTotal: 512 * KIB });
    const asset = await handle.done;
    assert.equal(asset.state, 'ready');
    assert.equal(asset.components['weights.bin']!.content_type, 'application/x-weights');
    assert.deepEqual(handle.progress(), { bytesDone: 512 * KIB, bytesTotal: 512 * KIB });
    assert.deepEqual(await downloadedDigests(client(), asset.id), { 'weights.bin': file.sha256 });
  });

  for (const workers of [1, 3]) {
    it(`maxUploadWorkers: ${workers} bounds the PUTs in flight at the storage`, async () => {
      const c = client({ maxUploadWorkers: workers });
      const files = await Promise.all(
        [1, 2, 3, 4].map((i) => randomFile(dir, `w${workers}-${i}.bin`, 1024 * KIB)),
      );
      const logFrom = t.logs.length;
      await Promise.all(
        files.map((f) => c.uploadAsync({ kind: 'output', name: f.path, files: [{ path: f.path }] }).done),
      );
      assert.equal(storagePuts(t.logs, logFrom).size, 4 * 16);
      // 64 PUTs sent by `workers` workers: the server sees exactly that many at once, never more.
      assert.equal(
        maxConcurrent(t.logs, (r) => r.method === 'PUT' && r.path.startsWith('/storage/'), logFrom),
        workers,
      );
    });
  }

  it("Run.succeed() waits for the run's pending uploads before it moves the run", async () => {
    const e = await committedExperiment(t, key);
    const { r } = await runningRun(t, key, e.id);
    const c = client();
    const file = await randomFile(dir, 'checkpoint.bin', 1024 * KIB);
    const order: string[] = [];
    const handle = c.uploadAsync({
      kind: 'checkpoint',
      name: 'step 100',
      run: { experimentId: e.id, n: 1, r },
      files: [{ path: file.path }],
    });
    void handle.done.then(() => order.push('upload ready'));
    const run = await c.run(e.id, 1, r).succeed();
    order.push('run succeeded');
    assert.equal(run.state, 'succeeded');
    assert.deepEqual(order, ['upload ready', 'run succeeded']);
    assert.equal((await c.assets.get((await handle.done).id)).run_id, run.id);
  });

  it('Run.succeed() raises UploadError naming the failed uploads (file deleted, file changed) and leaves the run running', async () => {
    const e = await committedExperiment(t, key);
    const { r } = await runningRun(t, key, e.id);
    const c = client();
    const link = { kind: 'output', run: { experimentId: e.id, n: 1, r } };
    const good = c.uploadAsync({
      ...link,
      name: 'good',
      files: [{ path: (await randomFile(dir, 'good.bin', 300 * KIB)).path }],
    });
    const deletedFile = await randomFile(dir, 'deleted.bin', 300 * KIB);
    const deleted = c.uploadAsync({ ...link, name: 'deleted', files: [{ path: deletedFile.path }] });
    unlinkSync(deletedFile.path);
    const changedFile = await randomFile(dir, 'changed.bin', 300 * KIB);
    const changed = c.uploadAsync({ ...link, name: 'changed', files: [{ path: changedFile.path }] });
    appendFileSync(changedFile.path, 'more bytes than were registered');

    const error = await c
      .run(e.id, 1, r)
      .succeed()
      .then(
        () => assert.fail('succeed must raise'),
        (err: unknown) => err,
      );
    assert.ok(error instanceof UploadError, String(error));
    assert.deepEqual([...error.uploadIds].sort(), [deleted.id, changed.id].sort());
    assert.match(error.message, /deleted\.bin was deleted after it was registered/);
    assert.match(error.message, /changed\.bin changed after it was registered/);
    assert.equal((await good.done).state, 'ready', 'the good upload finished all the same');
    assert.equal((await c.runs.get(e.id, 1, r)).state, 'running');
  });

  it('rejects a missing file or duplicate component names at once, registering nothing', async () => {
    const c = client();
    assert.throws(
      () => c.uploadAsync({ kind: 'output', name: 'x', files: [{ path: path.join(dir, 'nope.bin') }] }),
      (err: Error) => err instanceof UploadError && /nope\.bin/.test(err.message),
    );
    const a = await randomFile(dir, 'dup.bin', 10);
    assert.throws(
      () => c.uploadAsync({ kind: 'output', name: 'x', files: [{ path: a.path }, { path: a.path }] }),
      /both named "dup\.bin"/,
    );
    await assert.rejects(c.upload({ kind: 'output', name: 'x', files: [] }), UploadError);
  });

  it('resume() leaves alone an upload that a live uploader holds, and takes over one it let go of', async () => {
    const a = client({ store: 'shared.db' });
    const b = client({ store: 'shared.db' });
    const file = await randomFile(dir, 'held.bin', 1024 * KIB);
    const held = a.uploadAsync({ kind: 'output', name: 'held', files: [{ path: file.path }] });
    assert.deepEqual(await b.resumeUploads(), [], 'held by a live uploader');
    await held.done;
    assert.deepEqual(await b.resumeUploads(), [], 'done uploads are not listed');

    // A closed uploader lets go: its upload fails with UploadError and another client finishes it.
    const next = await randomFile(dir, 'interrupted.bin', 2048 * KIB);
    const logFrom = t.logs.length;
    const interrupted = a.uploadAsync({ kind: 'output', name: 'interrupted', files: [{ path: next.path }] });
    while (interrupted.progress().bytesDone < 256 * KIB)
      await new Promise((resolve) => setTimeout(resolve, 5));
    a.close();
    await assert.rejects(interrupted.done, UploadError);
    const [resumed, ...rest] = await b.resumeUploads();
    assert.equal(rest.length, 0);
    assert.equal(resumed!.id, interrupted.id);
    const asset = await resumed!.done;
    assert.deepEqual(await downloadedDigests(b, asset.id), { 'interrupted.bin': next.sha256 });
    assert.equal(finalizeCalls(t.logs, logFrom).get(asset.id), 1);
  });

  it('a resumed upload that was finalized before the process died is not finalized again', async () => {
    const c = client({ store: 'finalizing.db' });
    const file = await randomFile(dir, 'final.bin', 1000);
    const handle = c.uploadAsync({ kind: 'output', name: 'final', files: [{ path: file.path }] });
    const asset = await handle.done;
    c.close();
    // The kill landed after the server finalized but before the store recorded it.
    const db = new DatabaseSync(path.join(dir, 'finalizing.db'));
    db.prepare(`UPDATE uploads SET state = 'finalizing' WHERE id = ?`).run(handle.id);
    db.close();
    const logFrom = t.logs.length;
    const [resumed] = await client({ store: 'finalizing.db' }).resumeUploads();
    assert.equal((await resumed!.done).id, asset.id);
    assert.equal(
      finalizeCalls(t.logs, logFrom).get(asset.id),
      undefined,
      'asked for the asset, did not finalize it twice',
    );
  });
});

describe('uploads to S3 (SeaweedFS)', () => {
  let t: TestService;
  let dir: string;
  let c: Client;
  before(async () => {
    t = await startTestService({
      storage: 's3',
      env: {
        ASSAY_MULTIPART_THRESHOLD_BYTES: String(6 * 1024 * KIB),
        ASSAY_MULTIPART_PART_BYTES: String(5 * 1024 * KIB),
      },
    });
    dir = await mkdtemp(path.join(tmpdir(), 'assay-uploads-s3-'));
    c = new Client({
      serverUrl: t.url,
      apiKey: (await t.createUser()).key,
      uploadStorePath: path.join(dir, 'uploads.db'),
    });
  });
  after(async () => {
    c.close();
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('streams a 12 MiB file in 5 MiB parts and a 0-byte file with explicit lengths; the bytes come back', async () => {
    const files = [await randomFile(dir, 'big.bin', 12 * 1024 * KIB), await randomFile(dir, 'empty.bin', 0)];
    const asset = await c.upload({ kind: 'output', name: 's3', files: files.map((f) => ({ path: f.path })) });
    assert.equal(asset.state, 'ready');
    assert.deepEqual(await downloadedDigests(c, asset.id), {
      'big.bin': files[0]!.sha256,
      'empty.bin': files[1]!.sha256,
    });
  });
});
