// The compute queue's rule: priority, then users take turns, then first come first served; strict grants.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { localGpuIds, parseGpuList } from '../../../src/compute/local-gpus.ts';
import { grantsNow, queueOrder, type WaitingRun } from '../../../src/server/runs/queue-order.ts';

let t = 0;
const run = (runId: string, userId: string, o: Partial<WaitingRun> = {}): WaitingRun => ({
  runId,
  userId,
  priority: 0,
  gpus: 0,
  enqueuedAt: ++t,
  ...o,
});
const ids = (runs: { runId: string }[]) => runs.map((r) => r.runId);

describe('queueOrder', () => {
  it('is first come first served for one user', () => {
    const waiting = [run('a1', 'A'), run('a2', 'A'), run('a3', 'A')];
    assert.deepEqual(ids(queueOrder({ waiting, held: [], lastGrant: new Map() })), ['a1', 'a2', 'a3']);
  });

  it('lets users take turns, the one holding fewer slots first', () => {
    // A queued three before B queued two, and A holds a slot already.
    const waiting = [run('a1', 'A'), run('a2', 'A'), run('a3', 'A'), run('b1', 'B'), run('b2', 'B')];
    const order = queueOrder({
      waiting,
      held: [{ userId: 'A', gpuIds: [] }],
      lastGrant: new Map([['A', 1]]),
    });
    assert.deepEqual(ids(order), ['b1', 'a1', 'b2', 'a2', 'a3']);
  });

  it('with equal holdings, the user whose last grant is oldest (or who never had one) goes first', () => {
    const waiting = [run('a1', 'A'), run('b1', 'B'), run('c1', 'C')];
    const lastGrant = new Map([
      ['A', 200],
      ['B', 100],
    ]);
    assert.deepEqual(ids(queueOrder({ waiting, held: [], lastGrant })), ['c1', 'b1', 'a1']);
  });

  it('puts a higher priority first, whoever asked, and takes turns within it', () => {
    const waiting = [
      run('a1', 'A'),
      run('b1', 'B'),
      run('a2', 'A', { priority: 5 }),
      run('b2', 'B', { priority: 5 }),
      run('c1', 'C', { priority: -1 }),
    ];
    assert.deepEqual(ids(queueOrder({ waiting, held: [], lastGrant: new Map() })), [
      'a2',
      'b2',
      'a1',
      'b1',
      'c1',
    ]);
  });
});

describe('grantsNow', () => {
  it('grants while a run slot is free, lowest free GPU ids first, never one held', () => {
    const waiting = [run('a1', 'A', { gpus: 2 }), run('b1', 'B', { gpus: 1 })];
    const grants = grantsNow(
      { waiting, held: [{ userId: 'C', gpuIds: [0] }], lastGrant: new Map() },
      { maxRuns: 3, gpuIds: [0, 1, 2, 3] },
    );
    assert.deepEqual(grants, [
      { runId: 'a1', gpuIds: [1, 2] },
      { runId: 'b1', gpuIds: [3] },
    ]);
  });

  it('is strict: a head that does not fit blocks the smaller asks behind it', () => {
    const waiting = [run('big', 'A', { gpus: 3 }), run('small', 'B', { gpus: 1 }), run('none', 'C')];
    const grants = grantsNow(
      { waiting, held: [{ userId: 'D', gpuIds: [0] }], lastGrant: new Map([['D', 1]]) },
      { maxRuns: 10, gpuIds: [0, 1, 2] },
    );
    assert.deepEqual(grants, []);
  });

  it('stops at the run slots, and a 0-GPU run takes a slot but no GPU', () => {
    const waiting = [run('a1', 'A'), run('b1', 'B'), run('c1', 'C')];
    const grants = grantsNow({ waiting, held: [], lastGrant: new Map() }, { maxRuns: 2, gpuIds: [0] });
    assert.deepEqual(grants, [
      { runId: 'a1', gpuIds: [] },
      { runId: 'b1', gpuIds: [] },
    ]);
  });
});

describe('ASSAY_LOCAL_GPUS', () => {
  it('reads the ids, `none`, or what `nvidia-smi -L` lists when unset', async () => {
    assert.deepEqual(localGpuIds({ ASSAY_LOCAL_GPUS: '3,1,2' }), [1, 2, 3]);
    assert.deepEqual(localGpuIds({ ASSAY_LOCAL_GPUS: 'none' }), []);
    assert.deepEqual(localGpuIds({ PATH: '/nonexistent' }), []);
    const dir = await mkdtemp(path.join(tmpdir(), 'assay-nvidia-'));
    try {
      const fake = path.join(dir, 'nvidia-smi');
      await writeFile(
        fake,
        '#!/bin/sh\n[ "$1" = -L ] || exit 2\n' +
          'echo "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-aaaa)"\necho "GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-bbbb)"\n',
      );
      await chmod(fake, 0o755);
      assert.deepEqual(localGpuIds({ PATH: `${dir}:/usr/bin:/bin` }), [0, 1]);
      // The setting wins over the detection.
      assert.deepEqual(localGpuIds({ PATH: `${dir}:/usr/bin:/bin`, ASSAY_LOCAL_GPUS: 'none' }), []);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    assert.deepEqual(parseGpuList('No devices were found\n'), []);
  });
});
