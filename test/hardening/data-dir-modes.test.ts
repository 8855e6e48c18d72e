import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { startAssayServer, type AssayServer } from '../support/assay-server.ts';

// The data directory holds the embedded database (emails, metrics, key hashes in its WAL), the storage
// secret, the bootstrap key and Temporal's state: no other OS user may read or write any of it. A real
// `assay server` (PGlite, local storage, embedded Temporal) is started on a data directory that does not
// exist yet, then again on the same directory after its modes were opened up, as an older version left them.

/** Every entry under `dir` (itself included) whose mode lets group or others in, as `path mode`. */
async function openToOthers(dir: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (p: string) => {
    const s = await lstat(p);
    if (s.isSymbolicLink()) return;
    if ((s.mode & 0o077) !== 0) found.push(`${path.relative(dir, p) || '.'} ${(s.mode & 0o777).toString(8)}`);
    if (s.isDirectory()) for (const name of await readdir(p)) await visit(path.join(p, name));
  };
  await visit(dir);
  return found;
}

/** Opens every entry up to 0777 (directories) or 0666 (files). */
async function openUp(dir: string): Promise<number> {
  let n = 0;
  const visit = async (p: string) => {
    const s = await lstat(p);
    if (s.isSymbolicLink()) return;
    await chmod(p, s.isDirectory() ? 0o777 : 0o666);
    n++;
    if (s.isDirectory()) for (const name of await readdir(p)) await visit(path.join(p, name));
  };
  await visit(dir);
  return n;
}

/** Whether the OS user `nobody` can read a file (through every directory above it). */
async function nobodyCanRead(file: string): Promise<boolean> {
  return promisify(execFile)('runuser', ['-u', 'nobody', '--', 'head', '-c', '1', file]).then(
    () => true,
    () => false,
  );
}

describe('the data directory is private to the service’s user', () => {
  let parent: string;
  let dataDir: string;
  let server: AssayServer | undefined;

  before(async () => {
    parent = await mkdtemp(path.join(tmpdir(), 'assay-modes-'));
    await chmod(parent, 0o755);
    dataDir = path.join(parent, 'data');
  });
  after(async () => {
    await server?.stop();
    await rm(parent, { recursive: true, force: true });
  });

  it('creates the directory and everything in it 0700/0600 on a first start', async () => {
    server = await startAssayServer({ ASSAY_DATA_DIR: dataDir });
    const made = await fetch(`${server.url}/admin/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.bootstrapKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ada@example.test' }),
    });
    assert.equal(made.status, 201);
    assert.equal((await lstat(dataDir)).mode & 0o777, 0o700);
    assert.deepEqual(await openToOthers(dataDir), []);
    const wal = path.join(dataDir, 'pglite', 'pg_wal');
    const segment = (await readdir(wal)).find((name) => /^[0-9A-F]{24}$/.test(name));
    assert.ok(segment, 'a WAL segment');
    assert.equal(await nobodyCanRead(path.join(wal, segment)), false, 'nobody reads the WAL');
    await server.stop();
    server = undefined;
  });

  it('repairs the modes of an existing data directory at start, and says how many it fixed', async () => {
    const opened = await openUp(dataDir);
    const wal = path.join(dataDir, 'pglite', 'pg_wal');
    const segment = (await readdir(wal)).find((name) => /^[0-9A-F]{24}$/.test(name))!;
    assert.equal(await nobodyCanRead(path.join(wal, segment)), true, 'the opened-up WAL is readable');

    server = await startAssayServer({ ASSAY_DATA_DIR: dataDir });
    assert.deepEqual(await openToOthers(dataDir), []);
    assert.equal(await nobodyCanRead(path.join(wal, segment)), false);
    const line = server.process
      .output()
      .split('\n')
      .find((l) => l.includes('data directory'));
    assert.ok(line, 'a log line about the data directory');
    const fixed = Number(/"fixed":(\d+)/.exec(line)?.[1]);
    assert.ok(fixed >= opened * 0.9 && fixed <= opened, `fixed ${fixed} of the ${opened} entries opened up`);
  });
});
