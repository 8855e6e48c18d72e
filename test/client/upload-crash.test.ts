import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import { Client } from '../../src/client/index.ts';
import { finalizeCalls, requests, storagePuts } from '../support/request-log.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { downloadedDigests, randomFile } from '../support/upload-files.ts';

const KIB = 1024;
const THRESHOLD = 128 * KIB;
// many small parts: each one a request and a durable store write, so the kill lands mid-way
const PART = 32 * KIB;
const CHILD = path.join(import.meta.dirname, 'fixtures', 'upload-child.ts');

interface Child {
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  kill(): void;
}

function startChild(args: string[]): Child {
  const child = spawn(process.execPath, [CHILD, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d));
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  // 'exit' comes after the kernel reaped the child, so its pid is really gone when we resume.
  const exit = new Promise<Awaited<Child['exit']>>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { exit, kill: () => child.kill('SIGKILL') };
}

/** Parts recorded so far (0 while the child is still creating the schema). */
function storedParts(db: DatabaseSync): number {
  try {
    return (db.prepare('SELECT count(*) AS n FROM parts').get() as { n: number }).n;
  } catch {
    return 0;
  }
}

/** Every piece the uploads consist of, keyed like storagePuts: "assetId/component#part" (0: a single PUT). */
function allPieces(db: DatabaseSync): Set<string> {
  const rows = db
    .prepare('SELECT u.asset_id, c.name, c.size FROM components c JOIN uploads u ON u.id = c.upload_id')
    .all() as Array<{ asset_id: string; name: string; size: number }>;
  return new Set(
    rows.flatMap((c) =>
      c.size > THRESHOLD
        ? Array.from({ length: Math.ceil(c.size / PART) }, (_, i) => `${c.asset_id}/${c.name}#${i + 1}`)
        : [`${c.asset_id}/${c.name}#0`],
    ),
  );
}

/** The pieces the store records as stored. */
function donePieces(db: DatabaseSync): Set<string> {
  const parts = db
    .prepare(
      'SELECT u.asset_id, p.component, p.part_number FROM parts p JOIN uploads u ON u.id = p.upload_id',
    )
    .all() as Array<{ asset_id: string; component: string; part_number: number }>;
  const whole = db
    .prepare(
      'SELECT u.asset_id, c.name FROM components c JOIN uploads u ON u.id = c.upload_id WHERE c.done = 1 AND c.part_size IS NULL',
    )
    .all() as Array<{ asset_id: string; name: string }>;
  return new Set([
    ...parts.map((p) => `${p.asset_id}/${p.component}#${p.part_number}`),
    ...whole.map((c) => `${c.asset_id}/${c.name}#0`),
  ]);
}

describe('an upload killed with SIGKILL resumes in a new process', () => {
  let t: TestService;
  let dir: string;
  before(async () => {
    t = await startTestService({
      listen: true,
      env: { ASSAY_MULTIPART_THRESHOLD_BYTES: String(THRESHOLD), ASSAY_MULTIPART_PART_BYTES: String(PART) },
    });
    dir = await mkdtemp(path.join(tmpdir(), 'assay-upload-crash-'));
  });
  after(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('finalizes each asset exactly once, with the same bytes, and never sends a stored part again', async (ctx) => {
    const apiKey = (await t.createUser()).key;
    const storePath = path.join(dir, 'store', 'uploads.db');
    const files = {
      a1: await randomFile(dir, 'a1.bin', 4096 * KIB),
      a2: await randomFile(dir, 'a2.bin', 3072 * KIB + 17),
      b1: await randomFile(dir, 'b1.bin', 4096 * KIB),
      c1: await randomFile(dir, 'c1.txt', 1000),
      c2: await randomFile(dir, 'c2.txt', 0),
    };
    const uploads = [
      { name: 'A', files: [files.a1.path, files.a2.path] },
      { name: 'B', files: [files.b1.path] },
      { name: 'C', files: [files.c1.path, files.c2.path] },
    ];
    const spec = { serverUrl: t.url, apiKey, storePath, workers: 2 };

    // 1. Upload in a child; SIGKILL it once the store shows some parts stored.
    const first = startChild(['upload', JSON.stringify({ ...spec, uploads })]);
    let exited = false;
    void first.exit.then(() => (exited = true));
    let db: DatabaseSync | undefined;
    for (;;) {
      if (exited) assert.fail(`the child ended before the kill: ${JSON.stringify(await first.exit)}`);
      db ??= existsSync(storePath) ? new DatabaseSync(storePath) : undefined;
      if (db && storedParts(db) >= 40) break;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    first.kill();
    const killed = await first.exit;
    assert.equal(killed.signal, 'SIGKILL', JSON.stringify(killed));
    const killedAt = t.logs.length;
    const doneBefore = donePieces(db!);
    const states = db!.prepare('SELECT id, state FROM uploads').all() as Array<{ id: string; state: string }>;
    assert.ok(
      states.some((s) => s.state !== 'done'),
      'killed mid-upload: some upload is unfinished',
    );

    // 2. A new process resumes every unfinished upload and exits on its own.
    const second = startChild(['resume', JSON.stringify(spec)]);
    const resumed = await second.exit;
    assert.equal(resumed.code, 0, resumed.stderr);
    const started = (JSON.parse(resumed.stdout.split('\n')[0]!) as { started: string[] }).started;
    assert.deepEqual(
      started.sort(),
      states
        .filter((s) => s.state !== 'done')
        .map((s) => s.id)
        .sort(),
    );

    // 3. Each asset finalized exactly once over both processes, and stored byte for byte.
    const rows = db!.prepare('SELECT asset_id, state FROM uploads ORDER BY created_at').all() as Array<{
      asset_id: string;
      state: string;
    }>;
    assert.deepEqual(
      rows.map((r) => r.state),
      ['done', 'done', 'done'],
    );
    const finalized = finalizeCalls(t.logs);
    for (const r of rows) assert.equal(finalized.get(r.asset_id), 1, `asset ${r.asset_id} finalized once`);
    const client = new Client({ serverUrl: t.url, apiKey, uploadStorePath: path.join(dir, 'unused.db') });
    const expected = [
      { 'a1.bin': files.a1.sha256, 'a2.bin': files.a2.sha256 },
      { 'b1.bin': files.b1.sha256 },
      { 'c1.txt': files.c1.sha256, 'c2.txt': files.c2.sha256 },
    ];
    for (const [i, r] of rows.entries())
      assert.deepEqual(await downloadedDigests(client, r.asset_id), expected[i]);

    // 4. Parts: none recorded before the kill went out again; every other one went out exactly once after it.
    const after = storagePuts(t.logs, killedAt);
    const before = storagePuts(t.logs.slice(0, killedAt));
    const pieces = allPieces(db!);
    assert.equal(pieces.size, 128 + 97 + 128 + 2);
    for (const piece of pieces) assert.equal(after.get(piece) ?? 0, doneBefore.has(piece) ? 0 : 1, piece);
    // Only PUTs in flight at the kill (answered, perhaps, but not yet recorded) can have gone out twice.
    const resent = [...pieces].filter((p) => before.has(p) && after.has(p));
    assert.ok(resent.length <= spec.workers, `resent: ${resent.join(', ')}`);
    assert.ok(
      requests(t.logs, killedAt).some(
        (r) => r.method === 'POST' && /^\/assets\/[^/]+\/checksums$/.test(r.path),
      ),
      'the resume asked for fresh URLs (declaring the digests again)',
    );
    db!.close();
    client.close();
    ctx.diagnostic(
      `${doneBefore.size} of ${pieces.size} pieces stored before the kill, ${resent.length} re-sent (in flight at the kill)`,
    );
  });
});
