import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  currentJob,
  instanceState,
  jobIsLive,
  parseSacct,
  parseSqueue,
} from '../../../src/compute/slurm-status.ts';

describe('Slurm job status', () => {
  test('squeue lines: id, state, restarts; the reason is ignored', () => {
    assert.deepEqual(parseSqueue('12|RUNNING|0|None\n13|PENDING|1|BeginTime\n\n'), [
      { jobId: '12', state: 'RUNNING', restarts: 0 },
      { jobId: '13', state: 'PENDING', restarts: 1 },
    ]);
    assert.deepEqual(parseSqueue(''), []);
  });

  test('sacct lines: `CANCELLED by 0` is CANCELLED; each REQUEUED record of a job counts as a restart', () => {
    assert.deepEqual(parseSacct('7|REQUEUED\n7|CANCELLED by 0\n8|COMPLETED\n'), [
      { jobId: '7', state: 'CANCELLED', restarts: 1 },
      { jobId: '8', state: 'COMPLETED', restarts: 0 },
    ]);
  });

  test('live states are pending or running; a requeue or a preemption is `preempted`; the rest is over', () => {
    const state = (s: string, restarts = 0) => instanceState({ jobId: '1', state: s, restarts });
    assert.equal(state('PENDING'), 'pending');
    assert.equal(state('CONFIGURING'), 'pending');
    assert.equal(state('RUNNING'), 'running');
    assert.equal(state('COMPLETING'), 'running');
    assert.equal(state('SUSPENDED'), 'running');
    assert.equal(state('PREEMPTED'), 'preempted');
    assert.equal(state('REQUEUED'), 'preempted');
    assert.equal(state('REQUEUE_HOLD'), 'preempted');
    assert.equal(state('PENDING', 1), 'preempted');
    assert.equal(state('CANCELLED', 1), 'preempted');
    for (const over of ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT', 'NODE_FAIL', 'OUT_OF_MEMORY'])
      assert.equal(state(over), 'terminated', over);
  });

  test('the run’s job is a live one before a finished one, then the newest', () => {
    const jobs = parseSqueue('5|COMPLETED|0|None\n9|CANCELLED|0|None\n6|RUNNING|0|None');
    assert.equal(currentJob(jobs)?.jobId, '6');
    assert.equal(currentJob(jobs.filter((j) => jobIsLive(j) === false))?.jobId, '9');
    assert.equal(currentJob([]), undefined);
  });
});
