import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { mayClaim, newOwner, STALE_AFTER_MS, type Owner } from '../../../src/client/uploads/upload-owner.ts';
import { UploadStore } from '../../../src/client/uploads/upload-store.ts';
import { WorkerPool } from '../../../src/client/uploads/worker-pool.ts';

const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid!; // exited and reaped: nobody has this pid now

describe('upload store', () => {
  let dir: string;
  let store: UploadStore;
  const me = newOwner();
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'assay-upload-store-'));
    store = UploadStore.open(path.join(dir, 'private', 'uploads.db'));
  });
  after(async () => {
    store.close();
    await rm(dir, { recursive: true, force: true });
  });
  const register = (owner: Owner, serverUrl = 'http://a') => {
    const id = crypto.randomUUID();
    store.register(
      {
        id,
        serverUrl,
        links: { kind: 'output', name: id },
        components: [{ name: 'f', path: '/f', size: 10, mtimeMs: 1.5, contentType: 'x/y' }],
      },
      owner,
    );
    return id;
  };

  it('is private to the user: directory 700, file 600', () => {
    assert.equal(statSync(path.join(dir, 'private')).mode & 0o777, 0o700);
    assert.equal(statSync(path.join(dir, 'private', 'uploads.db')).mode & 0o777, 0o600);
  });

  it('lists the incomplete uploads of one server only', () => {
    const a = register(me, 'http://one');
    register(me, 'http://two');
    assert.deepEqual(store.incomplete('http://one'), [a]);
  });

  it('moves only along MOVES, from the phase the upload is in', () => {
    const id = register(me);
    assert.throws(() => store.move(id, 'new', 'done'), /no move from new to done/);
    assert.throws(() => store.move(id, 'uploading', 'finalizing'), /is not uploading/);
    store.created(id, 'asset-1', { f: { uploadId: 'u1', partSize: 4 } });
    assert.equal(store.get(id)!.state, 'uploading');
  });

  it('voids the parts of a multipart upload the server restarted under a new id', () => {
    const id = register(me);
    store.created(id, 'asset-2', { f: { uploadId: 'u1', partSize: 4 } });
    store.partDone(id, 'f', 1);
    store.partDone(id, 'f', 2);
    store.setMultipart(id, 'f', 'u1', 4);
    assert.deepEqual([...store.get(id)!.components[0]!.doneParts], [1, 2], 'same upload: parts kept');
    store.setMultipart(id, 'f', 'u2', 4);
    assert.deepEqual([...store.get(id)!.components[0]!.doneParts], [], 'new upload: parts voided');
  });

  it('hands an upload over only when its holder let go, died, or stopped beating', () => {
    const other: Owner = { pid: process.pid, host: me.host, token: 'other-live-uploader' };
    const held = register(other);
    assert.equal(store.claim(held, me), false, 'live holder, fresh heartbeat');
    assert.equal(store.claim(held, me, Date.now() + STALE_AFTER_MS + 1), true, 'stale heartbeat');
    store.release(held, me, 'boom');
    assert.equal(store.get(held)!.error, 'boom');
    assert.equal(store.claim(held, other), true, 'released');
    assert.equal(store.get(held)!.error, null, 'a claim clears the old failure');

    const dead = register({ pid: deadPid(), host: me.host, token: 'dead' });
    assert.equal(store.claim(dead, me), true, 'holder process gone');
  });

  it('trusts a pid on its own host only', () => {
    const lease = {
      ownerPid: deadPid(),
      ownerHost: 'another-host',
      ownerToken: 't',
      heartbeatAt: Date.now(),
    };
    assert.equal(mayClaim(lease, me, Date.now()), false, 'that pid may be alive over there');
    assert.equal(mayClaim(lease, me, Date.now() + STALE_AFTER_MS + 1), true);
  });
});

describe('worker pool', () => {
  it('runs at most `size` tasks at once, in submission order', async () => {
    const pool = new WorkerPool(2);
    let running = 0;
    let peak = 0;
    const started: number[] = [];
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        pool.run(async () => {
          started.push(i);
          peak = Math.max(peak, ++running);
          await new Promise((resolve) => setTimeout(resolve, 5));
          running--;
        }),
      ),
    );
    assert.equal(peak, 2);
    assert.deepEqual(started, [0, 1, 2, 3, 4, 5]);
    assert.throws(() => new WorkerPool(0), RangeError);
  });
});
