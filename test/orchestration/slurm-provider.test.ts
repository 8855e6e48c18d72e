// Managed runs on a real single-node Slurm (scripts/setup-slurm.sh): submitted with sbatch, watched with
// squeue, ended with scancel, through the public surface (HTTP, Temporal's client). The cases run at once: the
// time-limit case alone takes a minute. Each looks only at jobs named after its own experiments.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { stringify } from 'yaml';
import { isTerminalRunState } from '@assay/contract';
import { slurmConfig } from '../../src/compute/slurm-config.ts';
import { SlurmProvider } from '../../src/compute/slurm-provider.ts';
import { localSlurmShell } from '../../src/compute/slurm-shell.ts';
import { eventually } from '../support/bounded-waits.ts';
import { startTemporal } from '../support/orchestration.ts';
import { spawnProcessGroup } from '../support/process-group.ts';
import { startSshd, type Sshd } from '../support/sshd.ts';
import {
  ensureSlurmCluster,
  liveJobsOf,
  slurmJobs,
  slurmRuns,
  startSlurmWorld,
  type SlurmWorld,
} from '../support/slurm-cluster.ts';

const exec = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, '../..');

/** Jobs of an experiment's runs: their names carry the workflow id, run-<experiment>-<n>-<r>. */
const prefixOf = (experimentId: string) => `assay-run-${experimentId}-`;

async function assertNoJobLeft(experimentId: string) {
  // scancel's SIGTERM, then SIGKILL after KillWait (5 s): a cancelled job is gone within seconds.
  await eventually(
    async () => (await slurmJobs(prefixOf(experimentId))).length === 0,
    20_000,
    `no job of experiment ${experimentId} left in squeue`,
  );
}

describe('managed runs on Slurm', { concurrency: true }, () => {
  let env: TestWorkflowEnvironment;
  let world: SlurmWorld;
  let runs: ReturnType<typeof slurmRuns>;
  let scratch: string;

  before(async () => {
    await ensureSlurmCluster();
    scratch = await mkdtemp(path.join(tmpdir(), 'assay-slurm-scratch-'));
    env = await startTemporal();
    world = await startSlurmWorld({ env, saga: { maxRecoveries: 1 } });
    await world.startWorker();
    runs = slurmRuns(world);
  });
  after(async () => {
    await world?.close();
    await env?.teardown();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  /** Once through a run's first attempt: the command sleeps; its recovery run finds the mark and exits 0. */
  const sleepsOnce = (mark: string) => `if [ -e ${mark} ]; then exit 0; fi; touch ${mark}; sleep 300`;

  test('a run to succeeded: one job, COMPLETED, and the figures', async (t) => {
    const run = await runs.pendingRun('true');
    const started = performance.now();
    const workflowId = await runs.provision(run);
    await runs.waitForStart(run);
    const running = performance.now() - started;
    const result = await runs.result(workflowId);
    const total = performance.now() - started;
    assert.equal(result.state, 'succeeded', JSON.stringify(result));
    assert.match(result.instanceId ?? '', /^\d+$/, 'the job id is the instance id');
    const all = await slurmJobs(prefixOf(run.experimentId), true);
    assert.deepEqual(
      all.map((j) => [j.jobId, j.state]),
      [[result.instanceId, 'COMPLETED']],
    );
    assert.equal(await world.provider.describe(workflowId), undefined, 'a finished job is gone');
    const detail = await runs.getRun(run);
    assert.equal(detail.state, 'succeeded');
    const sbatch = world.timings.filter((x) => x.command === 'sbatch').map((x) => Math.round(x.ms));
    t.diagnostic(
      `figures: sbatch ${sbatch.join('/')} ms; provision → running ${Math.round(running)} ms; provision → succeeded (saga concluded) ${Math.round(total)} ms`,
    );
    await assertNoJobLeft(run.experimentId);
  });

  test('a failing program: the run fails crash, and its job is over', async () => {
    const run = await runs.pendingRun('echo boom >&2; exit 3');
    const workflowId = await runs.provision(run);
    const result = await runs.result(workflowId);
    assert.deepEqual([result.state, result.failureReason], ['failed', 'crash'], JSON.stringify(result));
    assert.equal(result.recoveredBy, null, 'a program that failed is not an instance loss');
    await assertNoJobLeft(run.experimentId);
  });

  test('a job sbatch refuses (no such partition): the run fails provision_failed with sbatch’s word, at once', async () => {
    const run = await runs.pendingRun('true', { partition: 'nosuchpartition' });
    const workflowId = await runs.provision(run);
    const result = await runs.result(workflowId);
    assert.deepEqual(
      [result.state, result.failureReason],
      ['failed', 'provision_failed'],
      JSON.stringify(result),
    );
    const detail = await runs.getRun(run);
    assert.match(detail.failure_message, /sbatch failed .*Invalid partition name specified/);
    const submits = world.timings.filter((x) => x.argv.includes(`--job-name=assay-${workflowId}`));
    assert.equal(submits.length, 1, 'a refusal is not retried');
    assert.deepEqual(await slurmJobs(prefixOf(run.experimentId), true), [], 'no job was made');
  });

  test('a job killed behind the saga’s back (scancel --signal=KILL): an instance loss, recovered by a new run', async () => {
    const run = await runs.pendingRun(sleepsOnce(path.join(scratch, 'killed')));
    const workflowId = await runs.provision(run);
    await runs.waitForState(run, 'running');
    const [jobId] = await liveJobsOf(workflowId);
    assert.ok(jobId, 'the run’s job is in squeue');
    // SIGKILL to the batch shell (the runner, exec'd), as a node that dies: the runner gets no word in, and
    // Slurm ends the job (FAILED) and its other processes.
    await exec('scancel', ['--batch', '--signal=KILL', jobId]);
    const result = await runs.result(workflowId);
    assert.deepEqual([result.state, result.failureReason], ['failed', 'crash'], JSON.stringify(result));
    assert.match((await runs.getRun(run)).failure_message, /instance was lost/);
    assert.ok(result.recoveredBy, JSON.stringify(result));
    assert.equal(result.recoveredBy.state, 'succeeded');
    const recovery = await runs.getRun({ ...run, r: run.r + 1 });
    assert.equal(recovery.recovers_run_id, run.id);
    await assertNoJobLeft(run.experimentId);
  });

  test('a job over its time limit: an instance loss, resumed by a recovery run, and no job is left', async () => {
    const run = await runs.pendingRun(sleepsOnce(path.join(scratch, 'timed-out')), { time_limit: '1' });
    const workflowId = await runs.provision(run);
    await runs.waitForState(run, 'running');
    const [jobId] = await liveJobsOf(workflowId);
    const result = await runs.result(workflowId);
    // The runner leaves the run to the saga on Slurm's SIGTERM (ASSAY_RUN_ON_SIGNAL=leave in the job script).
    assert.deepEqual(
      [result.state, result.failureReason],
      ['failed', 'crash'],
      JSON.stringify([result, (await runs.getRun(run)).failure_message]),
    );
    assert.equal(result.recoveredBy?.state, 'succeeded', JSON.stringify(result));
    const all = await slurmJobs(prefixOf(run.experimentId), true);
    assert.equal(all.find((j) => j.jobId === jobId)?.state, 'TIMEOUT', JSON.stringify(all));
    await assertNoJobLeft(run.experimentId);
  });

  test('a job requeued (scontrol requeue): the run ends preempted, the requeued job is cancelled, and a recovery run resumes', async () => {
    const run = await runs.pendingRun(sleepsOnce(path.join(scratch, 'requeued')));
    const workflowId = await runs.provision(run);
    await runs.waitForState(run, 'running');
    const [jobId] = await liveJobsOf(workflowId);
    assert.ok(jobId);
    await exec('scontrol', ['requeue', jobId]);
    const result = await runs.result(workflowId);
    assert.deepEqual(
      [result.state, result.failureReason],
      ['failed', 'preempted'],
      JSON.stringify([result, (await runs.getRun(run)).failure_message]),
    );
    assert.match((await runs.getRun(run)).failure_message, /preempted/);
    assert.equal(result.recoveredBy?.state, 'succeeded', JSON.stringify(result));
    assert.equal((await runs.getRun({ ...run, r: run.r + 1 })).recovers_run_id, run.id);
    await assertNoJobLeft(run.experimentId);
    const all = await slurmJobs(prefixOf(run.experimentId), true);
    const requeued = all.find((j) => j.jobId === jobId);
    assert.equal(requeued?.state, 'CANCELLED', JSON.stringify(all));
  });

  test('a job cancelled behind the saga’s back (plain scancel): an instance loss, recovered by a new run, no job left', async () => {
    const run = await runs.pendingRun(sleepsOnce(path.join(scratch, 'scancelled')));
    const workflowId = await runs.provision(run);
    await runs.waitForState(run, 'running');
    const [jobId] = await liveJobsOf(workflowId);
    assert.ok(jobId);
    await exec('scancel', [jobId]);
    const result = await runs.result(workflowId);
    assert.deepEqual(
      [result.state, result.failureReason],
      ['failed', 'crash'],
      JSON.stringify([result, (await runs.getRun(run)).failure_message]),
    );
    assert.equal(result.recoveredBy?.state, 'succeeded', JSON.stringify(result));
    await assertNoJobLeft(run.experimentId);
  });

  test('a sweep of 8 trials at concurrency 2: all succeed, never more than 2 jobs of unfinished runs at once', async () => {
    const { key } = await runs.user();
    const api = world.svc.as(key);
    const experiment = await api.post('/experiments', { name: 'slurm sweep', organization_id: 'personal' });
    assert.equal(experiment.status, 201);
    const experimentId = experiment.body.id as string;
    const created = await api.post(`/experiments/${experimentId}/sweeps`, {
      base_yaml: stringify({ lr: 0.1, batch: 32, launch: { provider: 'slurm', command: 'sleep 1' } }),
      grid: { lr: [0.1, 0.01, 0.001, 0.0001], batch: [16, 32] },
      concurrency: 2,
    });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    const trials: { n: number; r: number; workflow_id: string }[] = created.body.runs;
    assert.equal(trials.length, 8);
    // A sweep starts its next run once a run has ended, while the ended run's job may still be exiting: a
    // job counts while its run is not over.
    let max = 0;
    let samples = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const live = await slurmJobs(prefixOf(experimentId));
        let unfinished = 0;
        for (const job of live) {
          const trial = trials.find((x) => `assay-${x.workflow_id}` === job.name);
          if (!trial) continue;
          const { body } = await api.get(
            `/experiments/${experimentId}/variations/${trial.n}/runs/${trial.r}`,
          );
          if (!isTerminalRunState(body.state)) unfinished += 1;
        }
        max = Math.max(max, unfinished);
        samples += 1;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    try {
      const summary = await env.client.workflow.getHandle(created.body.workflow_id).result();
      assert.deepEqual(summary, { total: 8, pending: 0, running: 0, succeeded: 8, failed: 0, done: true });
    } finally {
      sampling = false;
      await sampler;
    }
    assert.equal(
      max,
      2,
      `at most 2 jobs of unfinished runs at once, and the bound was used (${samples} samples)`,
    );
    const all = await slurmJobs(prefixOf(experimentId), true);
    assert.equal(all.length, 8, 'one job per trial');
    assert.ok(
      all.every((j) => j.state === 'COMPLETED'),
      JSON.stringify(all),
    );
    await assertNoJobLeft(experimentId);
  });

  test('a controller that does not answer: describe and terminate throw, never "gone"', async () => {
    // The cluster's own configuration with the controller's port moved to one nobody listens on.
    const conf = path.join(scratch, 'unreachable.conf');
    await writeFile(conf, `${await readFile('/etc/slurm/slurm.conf', 'utf8')}\nSlurmctldPort=1\n`);
    const blind = new SlurmProvider({
      config: slurmConfig(world.slurmEnv),
      shell: localSlurmShell({ ...process.env, SLURM_CONF: conf }),
    });
    await assert.rejects(blind.describe('run-any-1-1'), /squeue failed .*Unable to contact slurm controller/);
    await assert.rejects(blind.terminate('run-any-1-1'), /squeue failed/);
  });

  describe('with the worker in a process of its own', () => {
    let own: SlurmWorld;
    let ownRuns: ReturnType<typeof slurmRuns>;
    let bin: string;
    before(async () => {
      own = await startSlurmWorld({ env });
      ownRuns = slurmRuns(own);
      // An sbatch that submits, says so, then hangs: the worker is killed after the job exists but before
      // the activity that submitted it has finished.
      bin = await mkdtemp(path.join(tmpdir(), 'assay-slurm-bin-'));
      const wrapper = path.join(bin, 'sbatch');
      await writeFile(
        wrapper,
        `#!/bin/bash\n/usr/bin/sbatch "$@"\nstatus=$?\ntouch "$SBATCH_SUBMITTED_MARK"\nsleep 30\nexit $status\n`,
      );
      await chmod(wrapper, 0o755);
    });
    after(async () => {
      await own?.close();
      if (bin) await rm(bin, { recursive: true, force: true });
    });

    function workerProcess(mark: string, slowSbatch: boolean) {
      return spawnProcessGroup(process.execPath, [path.join(repoRoot, 'bin/assay.js'), 'worker'], {
        name: 'assay worker',
        cwd: repoRoot,
        env: {
          PATH: slowSbatch ? `${bin}:${process.env.PATH}` : process.env.PATH,
          HOME: process.env.HOME,
          TEMPORAL_ADDRESS: env.address,
          ASSAY_TASK_QUEUE: own.taskQueue,
          ASSAY_SERVICE_URL: own.svc.url,
          ASSAY_ORCHESTRATOR_KEY: own.orchestratorKey,
          SBATCH_SUBMITTED_MARK: mark,
          ...own.slurmEnv,
        },
        stopGraceMs: 0,
      });
    }

    test('the worker killed -9 mid-submit: a second worker finds the job, exactly one for the workflow', async () => {
      const mark = path.join(scratch, 'submitted');
      const first = workerProcess(mark, true);
      const run = await ownRuns.pendingRun('true');
      const workflowId = await ownRuns.provision(run);
      // The worker process bundles the workflows first: tens of seconds on a busy two-core machine.
      await eventually(
        async () => {
          assert.ok(first.isRunning(), `the first worker exited: ${first.output()}`);
          return stat(mark).then(
            () => true,
            () => false,
          );
        },
        150_000,
        'sbatch submitted',
      ).catch((error: Error) => assert.fail(`${error.message}; worker output: ${first.output()}`));
      process.kill(-first.pid, 'SIGKILL');
      await first.exited;
      const second = workerProcess(mark, false);
      try {
        const result = await ownRuns.result(workflowId);
        assert.equal(result.state, 'succeeded', JSON.stringify(result));
        const all = await slurmJobs(prefixOf(run.experimentId), true);
        assert.equal(all.length, 1, `one job for the workflow, ever: ${JSON.stringify(all)}`);
        assert.equal(all[0]!.state, 'COMPLETED');
      } finally {
        await second.stop();
      }
      await assertNoJobLeft(run.experimentId);
    });
  });
});

describe('managed runs on Slurm submitted over SSH (ASSAY_SLURM_SSH) to a real sshd', () => {
  let env: TestWorkflowEnvironment;
  let sshd: Sshd;
  let world: SlurmWorld;
  let runs: ReturnType<typeof slurmRuns>;

  before(async () => {
    await ensureSlurmCluster();
    sshd = await startSshd();
    env = await startTemporal();
    world = await startSlurmWorld({
      env,
      settings: {
        ASSAY_SLURM_SSH: `${sshd.target}:${sshd.port}`,
        ASSAY_SLURM_SSH_KEY: sshd.keyFile,
        ASSAY_SLURM_KNOWN_HOSTS: sshd.knownHostsFile,
      },
    });
    await world.startWorker();
    runs = slurmRuns(world);
  });
  after(async () => {
    await world?.close();
    await env?.teardown();
    await sshd?.stop();
  });

  test('a run to succeeded and a cancel: sbatch, squeue and scancel all reach the cluster through the login node', async () => {
    const run = await runs.pendingRun('true');
    const workflowId = await runs.provision(run);
    const result = await runs.result(workflowId);
    assert.equal(result.state, 'succeeded', JSON.stringify(result));
    const all = await slurmJobs(prefixOf(run.experimentId), true);
    assert.deepEqual(
      all.map((j) => [j.jobId, j.state]),
      [[result.instanceId, 'COMPLETED']],
    );
    assert.match(sshd.output(), /Accepted publickey/, 'the commands went through sshd');
    const commands = new Set(world.timings.map((x) => x.command));
    assert.ok(commands.has('sbatch') && commands.has('squeue'), [...commands].join(', '));
    await assertNoJobLeft(run.experimentId);
  });
});
