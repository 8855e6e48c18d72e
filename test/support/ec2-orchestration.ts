// A managed-run world on EC2 for tests: a real Temporal dev server, the real service on PostgreSQL, a real
// worker whose EC2 provider talks to moto through the test's own proxy (support/ec2-proxy.ts). moto's
// instances run nothing, so each instance's runner is simulated here through the HTTP API, the way the real
// one starts: it reads its user data, trades the exchange token in it for the run's worker key, starts the
// run and heartbeats.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  DescribeImagesCommand,
  DescribeInstanceAttributeCommand,
  DescribeInstancesCommand,
  EC2Client,
  TerminateInstancesCommand,
  type Instance,
} from '@aws-sdk/client-ec2';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Client } from '../../src/client/index.ts';
import { ec2Config } from '../../src/compute/ec2-config.ts';
import { Ec2Provider, WORKFLOW_TAG } from '../../src/compute/ec2-provider.ts';
import { TemporalOrchestrator } from '../../src/orchestrator/temporal-orchestrator.ts';
import { mintEmbeddedOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import type { RunningWorker } from '../../src/worker.ts';
import type { SagaSettings } from '../../workflows/saga-types.ts';
import { startEc2Proxy, type Ec2Proxy } from './ec2-proxy.ts';
import { startMoto, type Moto } from './moto.ts';
import { FAST_SAGA, startTemporal, startTestWorker } from './orchestration.ts';
import { startTestService, type TestService } from './service.ts';
import { exchange } from './worker-key-exchange.ts';

const credentials = { accessKeyId: 'testing', secretAccessKey: 'testing' };
const region = 'us-east-1';

export interface Ec2Orchestration {
  env: TestWorkflowEnvironment;
  svc: TestService;
  moto: Moto;
  proxy: Ec2Proxy;
  /** Straight to moto, around the proxy: what the test itself sees of EC2. */
  ec2: EC2Client;
  worker: RunningWorker;
  /** The instances tagged for a workflow, newest first. */
  instancesOf(workflowId: string): Promise<Instance[]>;
  /** Waits for the workflow's instance and boots a simulated runner on it. */
  boot(workflowId: string): Promise<SimulatedInstance>;
  /** EC2 takes the instance back: terminated in moto, reported as a spot interruption by the proxy. */
  interrupt(instanceId: string): Promise<void>;
  /** The instance dies in an ordinary way (terminated, no spot reason): a lost machine. */
  terminate(instanceId: string): Promise<void>;
  close(): Promise<void>;
}

export interface SimulatedInstance {
  instanceId: string;
  /** What the run saw at start: the variation's newest checkpoint, or null. */
  resumedFrom: string | null;
  client: Client;
  run: { experimentId: string; n: number; r: number };
  /** Uploads a small checkpoint asset of the run and waits until it is ready. */
  checkpoint(name: string): Promise<void>;
  /** Heartbeats stop (the machine is gone). */
  vanish(): void;
  /** Heartbeats stop and the run succeeds, as a runner whose command exited 0. */
  succeed(): Promise<void>;
}

/** `requestTimeoutMs` is the provider's per-call EC2 timeout: short, so a hanging API shows up fast. */
export async function startEc2Orchestration(
  options: { saga?: Partial<SagaSettings>; requestTimeoutMs?: number } = {},
): Promise<Ec2Orchestration> {
  const cleanups: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const env = await startTemporal();
    cleanups.push(() => env.teardown());
    const moto = await startMoto();
    cleanups.push(() => moto.stop());
    const proxy = await startEc2Proxy(moto.endpoint);
    cleanups.push(() => proxy.close());
    const ec2 = new EC2Client({ region, endpoint: moto.endpoint, credentials });
    cleanups.push(async () => ec2.destroy());
    const images = await ec2.send(new DescribeImagesCommand({ Owners: ['amazon'] }));
    const ami = images.Images?.find((i) => /^ami-[0-9a-f]{8,17}$/.test(i.ImageId ?? ''))?.ImageId;
    assert.ok(ami, 'moto offers a default AMI');
    const ec2Env = { ASSAY_COMPUTE: 'ec2', EC2_REGION: region, EC2_ENDPOINT: proxy.url, EC2_AMI: ami };

    const taskQueue = `assay-ec2-${randomUUID()}`;
    const saga = { ...FAST_SAGA, ...options.saga };
    const orchestrator = await TemporalOrchestrator.connect({
      temporal: {
        address: env.address,
        namespace: env.namespace ?? 'default',
        uiUrl: 'http://ui.test',
        taskQueue,
      },
      saga,
      client: env.client,
    });
    const svc = await startTestService({ listen: true, orchestrator, env: ec2Env });
    cleanups.push(() => svc.close());
    const provider = new Ec2Provider({
      config: ec2Config(ec2Env),
      credentials,
      requestTimeoutMs: options.requestTimeoutMs ?? 5_000,
    });
    cleanups.push(async () => provider.close());
    const orchestratorKey = (await mintEmbeddedOrchestratorKey(svc.service.db)).token;
    const worker = await startTestWorker({
      env,
      taskQueue,
      serviceUrl: svc.url!,
      key: orchestratorKey,
      provider,
      maxTasks: 20,
    });
    cleanups.push(() => worker.stop());
    const dir = await mkdtemp(path.join(tmpdir(), 'assay-ec2-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const heartbeats: NodeJS.Timeout[] = [];
    cleanups.push(async () => heartbeats.forEach((h) => clearInterval(h)));

    async function instancesOf(workflowId: string): Promise<Instance[]> {
      const page = await ec2.send(
        new DescribeInstancesCommand({ Filters: [{ Name: `tag:${WORKFLOW_TAG}`, Values: [workflowId] }] }),
      );
      return (page.Reservations ?? [])
        .flatMap((r) => r.Instances ?? [])
        .sort((a, b) => (b.LaunchTime?.getTime() ?? 0) - (a.LaunchTime?.getTime() ?? 0));
    }

    async function boot(workflowId: string): Promise<SimulatedInstance> {
      let instance: Instance | undefined;
      for (let i = 0; !(instance = (await instancesOf(workflowId))[0]); i++) {
        assert.ok(i < 300, `no instance for ${workflowId}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const instanceId = instance.InstanceId!;
      const attribute = await ec2.send(
        new DescribeInstanceAttributeCommand({ InstanceId: instanceId, Attribute: 'userData' }),
      );
      const script = Buffer.from(attribute.UserData!.Value!, 'base64').toString('utf8');
      const exported = (name: string) => {
        const value = new RegExp(`^export ${name}='([^']*)'$`, 'm').exec(script)?.[1];
        assert.ok(value, `the user data exports ${name}`);
        return value;
      };
      const traded = await exchange(svc, exported('SERVICE_EXCHANGE_TOKEN'));
      assert.equal(traded.status, 201, JSON.stringify(traded.body));
      const client = new Client({ serverUrl: exported('SERVICE_SERVER_URL'), apiKey: traded.body.key });
      const run = {
        experimentId: exported('SERVICE_EXPERIMENT_ID'),
        n: Number(exported('SERVICE_VARIATION')),
        r: Number(exported('SERVICE_RUN')),
      };
      const handle = client.run(run.experimentId, run.n, run.r);
      await handle.config();
      const resumedFrom = await handle.checkpoint().then(
        (c) => c.asset.name,
        () => null,
      );
      await handle.start({ os: 'linux', runner: 'simulated on moto' });
      const heartbeat = setInterval(() => void handle.heartbeat().catch(() => undefined), 300);
      heartbeats.push(heartbeat);
      return {
        instanceId,
        resumedFrom,
        client,
        run,
        async checkpoint(name) {
          const file = path.join(dir, `${randomUUID()}.ckpt`);
          await writeFile(file, name);
          await client.uploadAsync({ kind: 'checkpoint', name, run, files: [{ path: file }] }).done;
        },
        vanish: () => clearInterval(heartbeat),
        async succeed() {
          clearInterval(heartbeat);
          await handle.succeed();
        },
      };
    }

    return {
      env,
      svc,
      moto,
      proxy,
      ec2,
      worker,
      instancesOf,
      boot,
      async interrupt(instanceId) {
        await ec2.send(new TerminateInstancesCommand({ InstanceIds: [instanceId] }));
        proxy.interrupt(instanceId);
      },
      async terminate(instanceId) {
        await ec2.send(new TerminateInstancesCommand({ InstanceIds: [instanceId] }));
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
