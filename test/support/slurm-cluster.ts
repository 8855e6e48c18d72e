// The Slurm provider's world for tests: the single-node cluster of scripts/setup-slurm.sh, the real service
// on PostgreSQL with ASSAY_COMPUTE=slurm, a Temporal dev server, and a worker submitting with sbatch.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { stringify } from 'yaml';
import { runnerEntry } from '../../src/compute/runner-bundle.ts';
import { slurmConfig } from '../../src/compute/slurm-config.ts';
import { slurmJobName } from '../../src/compute/slurm-job-script.ts';
import { SlurmProvider } from '../../src/compute/slurm-provider.ts';
import { sshSlurmShell } from '../../src/compute/slurm-ssh-shell.ts';
import { localSlurmShell, type SlurmShell } from '../../src/compute/slurm-shell.ts';
import { TemporalOrchestrator } from '../../src/orchestrator/temporal-orchestrator.ts';
import { mintEmbeddedOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import type { RunningWorker } from '../../src/worker.ts';
import type { ManagedRunResult, SagaSettings } from '../../workflows/saga-types.ts';
import { FAST_SAGA, startTestWorker } from './orchestration.ts';
import { startTestService, type TestService } from './service.ts';

const run = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, '../..');

/** Starts the cluster (idempotent, instant when it is up): scripts/test.sh runs it too. */
export async function ensureSlurmCluster(): Promise<void> {
  await run('bash', [path.join(repoRoot, 'scripts/setup-slurm.sh')]);
}

export type SlurmJobRow = { jobId: string; name: string; state: string };

/** This user's jobs whose names start with `prefix`, live ones only unless `all`. */
export async function slurmJobs(prefix: string, all = false): Promise<SlurmJobRow[]> {
  const { stdout } = await run('squeue', [
    '--me',
    '--noheader',
    ...(all ? ['--states=all'] : []),
    '-O',
    'JobID:|,State:|,Name:',
  ]);
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [jobId = '', state = '', name = ''] = line.split('|').map((s) => s.trim());
      return { jobId, state, name };
    })
    .filter((job) => job.name.startsWith(prefix));
}

/** The live job ids of one workflow's run (PENDING, RUNNING, COMPLETING…). */
export async function liveJobsOf(workflowId: string): Promise<string[]> {
  const name = slurmJobName(workflowId);
  return (await slurmJobs(name)).filter((job) => job.name === name).map((job) => job.jobId);
}

/** The worker's SlurmShell, timing each command: the figures the test reports. */
export function timedShell(inner: SlurmShell = localSlurmShell()) {
  const timings: { command: string; argv: readonly string[]; ms: number }[] = [];
  const shell: SlurmShell = {
    async run(argv, options) {
      const started = performance.now();
      try {
        return await inner.run(argv, options);
      } finally {
        timings.push({ command: argv[0]!, argv, ms: performance.now() - started });
      }
    },
  };
  return { shell, timings };
}

/** The Slurm settings of a test world: this repository's runner, a work dir of its own. */
export function slurmEnv(workDir: string): Record<string, string> {
  return {
    ASSAY_COMPUTE: 'slurm',
    ASSAY_SLURM_RUNNER: `${process.execPath} ${runnerEntry()}`,
    ASSAY_SLURM_WORKDIR: workDir,
    ASSAY_SLURM_PARTITION: 'debug',
    // Any partition passes Assay's policy, so that Slurm's own refusal of one can be seen.
    ASSAY_SLURM_ALLOWED_PARTITIONS: '*',
  };
}

export interface SlurmWorld {
  env: TestWorkflowEnvironment;
  svc: TestService;
  taskQueue: string;
  orchestratorKey: string;
  workDir: string;
  slurmEnv: Record<string, string>;
  provider: SlurmProvider;
  timings: { command: string; argv: readonly string[]; ms: number }[];
  worker: RunningWorker | undefined;
  startWorker(): Promise<RunningWorker>;
  close(): Promise<void>;
}

/**
 * A service and task queue of its own on `env`'s Temporal, submitting to the cluster. The runner's heartbeat
 * is its default (30 s), so the saga's silence timeout is longer than that.
 */
export async function startSlurmWorld(options: {
  env: TestWorkflowEnvironment;
  saga?: Partial<SagaSettings>;
  /** More settings: ASSAY_SLURM_SSH and its files submit over SSH, as a deployment would. */
  settings?: Record<string, string>;
}): Promise<SlurmWorld> {
  const { env } = options;
  const taskQueue = `assay-slurm-${randomUUID()}`;
  const workDir = await mkdtemp(path.join(tmpdir(), 'assay-slurm-'));
  const settings = { ...slurmEnv(workDir), ...options.settings };
  const orchestrator = await TemporalOrchestrator.connect({
    temporal: {
      address: env.address,
      namespace: env.namespace ?? 'default',
      uiUrl: 'http://temporal-ui.test',
      taskQueue,
    },
    saga: { ...FAST_SAGA, silenceTimeoutMs: 120_000, startTimeoutMs: 60_000, ...options.saga },
    client: env.client,
  });
  const svc = await startTestService({ listen: true, orchestrator, env: settings });
  const key = await mintEmbeddedOrchestratorKey(svc.service.db);
  const config = slurmConfig(settings);
  const { submission } = config;
  const ssh = submission.kind === 'ssh' ? sshSlurmShell(submission) : undefined;
  const { shell, timings } = timedShell(ssh ?? localSlurmShell());
  const provider = new SlurmProvider({ config, shell });
  const world: SlurmWorld = {
    env,
    svc,
    taskQueue,
    orchestratorKey: key.token,
    workDir,
    slurmEnv: settings,
    provider,
    timings,
    worker: undefined,
    async startWorker() {
      world.worker = await startTestWorker({
        env,
        taskQueue,
        serviceUrl: svc.url!,
        key: key.token,
        provider,
      });
      return world.worker;
    },
    async close() {
      await world.worker?.stop().catch(() => undefined);
      await svc.close();
      await ssh?.close();
      await rm(workDir, { recursive: true, force: true });
    },
  };
  return world;
}

export type SlurmRun = { id: string; experimentId: string; n: number; r: number };

/** Steps of a scenario through the public API (HTTP and Temporal's client), as test/support/managed-runs.ts. */
export function slurmRuns(world: SlurmWorld) {
  // One researcher for every case, made once even when the cases start together.
  let made: Promise<{ id: string; key: string }> | undefined;
  const ensureUser = () => (made ??= world.svc.createUser());
  const key = async () => (await ensureUser()).key;
  const runPath = (r: { experimentId: string; n: number; r: number }) =>
    `/experiments/${r.experimentId}/variations/${r.n}/runs/${r.r}`;
  return {
    runPath,
    user: ensureUser,
    /** A committed experiment with one variation launching `command` on Slurm, and a pending run. */
    async pendingRun(command: string, slurm?: Record<string, unknown>): Promise<SlurmRun> {
      const { key } = await ensureUser();
      const api = world.svc.as(key);
      const experiment = await api.post('/experiments', { name: 'slurm', organization_id: 'personal' });
      assert.equal(experiment.status, 201, JSON.stringify(experiment.body));
      const variation = await api.post(`/experiments/${experiment.body.id}/variations`, {
        config_yaml: stringify({
          lr: 0.1,
          launch: { provider: 'slurm', command, ...(slurm ? { slurm } : {}) },
        }),
      });
      assert.equal(variation.status, 201, JSON.stringify(variation.body));
      assert.equal((await api.post(`/experiments/${experiment.body.id}/commit`)).status, 200);
      const created = await api.post(
        `/experiments/${experiment.body.id}/variations/${variation.body.n}/runs`,
      );
      assert.equal(created.status, 201, JSON.stringify(created.body));
      return {
        id: created.body.id,
        experimentId: experiment.body.id,
        n: variation.body.n,
        r: created.body.r,
      };
    },
    async provision(r: SlurmRun): Promise<string> {
      const res = await world.svc.as(await key()).post(`${runPath(r)}/provision`);
      assert.equal(res.status, 202, JSON.stringify(res.body));
      return res.body.workflow_id as string;
    },
    async getRun(r: { experimentId: string; n: number; r: number }) {
      const res = await world.svc.as(await key()).get(runPath(r));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body;
    },
    async waitForState(r: SlurmRun, state: string, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const current = (await world.svc.as(await key()).get(runPath(r))).body;
        if (current.state === state) return current;
        assert.ok(Date.now() < deadline, `run ${r.r} still ${current.state} after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    /** Waits until the runner has started the run: a short command may be over by the next look. */
    async waitForStart(r: SlurmRun, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const current = (await world.svc.as(await key()).get(runPath(r))).body;
        if (current.started_at !== null) return current;
        assert.ok(Date.now() < deadline, `run ${r.r} not started after ${timeoutMs} ms (${current.state})`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    result(workflowId: string): Promise<ManagedRunResult> {
      return world.env.client.workflow.getHandle(workflowId).result();
    },
  };
}
