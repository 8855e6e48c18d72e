// Runs each managed run on its own EC2 instance (on demand, or spot with `spot: true`), found again by its
// assay:workflow tag and made idempotent by ClientToken.
import type { LaunchConfig, RunnableLaunchConfig } from '@assay/contract';
import { createHash } from 'node:crypto';
import {
  DescribeInstancesCommand,
  EC2Client,
  RunInstancesCommand,
  TerminateInstancesCommand,
  type _InstanceType,
  type EC2ClientConfig,
  type Instance,
  type Tag,
} from '@aws-sdk/client-ec2';
import {
  LaunchConfigError,
  launchEnv,
  providerMismatch,
  ProvisionRefusedError,
  type ComputeProvider,
  type InstanceInfo,
  type InstanceState,
  type ProvisionRequest,
} from './compute-provider.ts';
import type { Ec2Config } from './ec2-config.ts';
import { ec2LaunchRefusal } from './ec2-launch-policy.ts';
import { buildUserData } from './user-data.ts';

type Ec2Launch = Extract<RunnableLaunchConfig, { image?: string }>;

export type Ec2ProviderOptions = {
  config: Ec2Config;
  /** Undefined: the AWS default credential chain. */
  credentials?: EC2ClientConfig['credentials'];
  /** The runner on the image; default `assay` from PATH. */
  runner?: string;
  /**
   * How long one EC2 API call may take (default 10 s): a hanging API must throw, so the watch sees a failed
   * status check (`unknown`) rather than waiting forever. The SDK retries a timed-out call (3 attempts).
   */
  requestTimeoutMs?: number;
};

export const WORKFLOW_TAG = 'assay:workflow';
const notTerminated = ['pending', 'running', 'stopping', 'stopped', 'shutting-down'];
/**
 * The StateReason codes EC2 gives an instance it took back (API_StateReason): terminated, or stopped under
 * the `stop` interruption behaviour. No other code means an interruption.
 */
const SPOT_INTERRUPTIONS = new Set(['Server.SpotInstanceTermination', 'Server.SpotInstanceShutdown']);
const ending = new Set(['shutting-down', 'terminated', 'stopping', 'stopped']);

export class Ec2Provider implements ComputeProvider {
  readonly kind = 'ec2' as const;
  readonly #config: Ec2Config;
  readonly #runner: string | undefined;
  readonly #ec2: EC2Client;

  constructor(options: Ec2ProviderOptions) {
    this.#config = options.config;
    this.#runner = options.runner;
    const requestTimeout = options.requestTimeoutMs ?? 10_000;
    this.#ec2 = new EC2Client({
      region: options.config.region,
      endpoint: options.config.endpoint,
      credentials: options.credentials,
      // The SDK's default waits on a silent endpoint forever; without throwOnRequestTimeout it only warns.
      requestHandler: {
        connectionTimeout: Math.min(requestTimeout, 5_000),
        requestTimeout,
        throwOnRequestTimeout: true,
      },
    });
  }

  /** Every user may use EC2; the machine fields must be within the operator's allowlists. */
  checkLaunch(launch: LaunchConfig): void {
    const refusal = providerMismatch(launch, 'ec2') ?? ec2LaunchRefusal(this.#config, launch)?.message;
    if (refusal) throw new ProvisionRefusedError(refusal);
  }

  async provision(req: ProvisionRequest): Promise<InstanceInfo> {
    // ClientToken makes a retried call safe on EC2; the tag lookup also covers endpoints that ignore tokens,
    // and returns a terminated instance too, so a finished run is never started again.
    const existing = await this.#find(req.idempotencyKey);
    if (existing) return info(existing);
    this.checkLaunch(req.launch);
    // Another provider's block was refused just above; this one may name EC2's machine fields.
    const launch = req.launch as Ec2Launch;
    const imageId = launch.image ?? this.#config.ami;
    if (!imageId) throw new LaunchConfigError('no image: set launch_config.image or EC2_AMI');
    const securityGroupIds = launch.security_group_ids ?? this.#config.securityGroupIds;
    const profile = launch.iam_instance_profile ?? this.#config.iamInstanceProfile;
    const userData = buildUserData({ env: launchEnv(req), command: launch.command, runner: this.#runner });
    const result = await this.#ec2.send(
      new RunInstancesCommand({
        ClientToken: clientToken(req.idempotencyKey),
        MinCount: 1,
        MaxCount: 1,
        ImageId: imageId,
        InstanceType: (launch.instance_type ?? this.#config.instanceType) as _InstanceType,
        SubnetId: launch.subnet_id ?? this.#config.subnetId,
        SecurityGroupIds: securityGroupIds.length > 0 ? [...securityGroupIds] : undefined,
        IamInstanceProfile:
          profile === undefined
            ? undefined
            : profile.startsWith('arn:')
              ? { Arn: profile }
              : { Name: profile },
        UserData: Buffer.from(userData, 'utf8').toString('base64'),
        // IMDSv2 only, one hop: the run's code cannot reach the instance role's credentials through a proxy
        // or container.
        MetadataOptions: { HttpTokens: 'required', HttpPutResponseHopLimit: 1, HttpEndpoint: 'enabled' },
        TagSpecifications: [{ ResourceType: 'instance', Tags: runTags(req) }],
        // One-time and terminated on interruption: a spot instance EC2 takes back ends the run `preempted`,
        // and recovery starts a new run (on a new instance) from the newest checkpoint.
        InstanceMarketOptions: launch.spot
          ? {
              MarketType: 'spot',
              SpotOptions: { SpotInstanceType: 'one-time', InstanceInterruptionBehavior: 'terminate' },
            }
          : undefined,
      }),
    );
    const instance = result.Instances?.[0];
    if (!instance?.InstanceId) throw new Error('RunInstances returned no instance');
    return info(instance);
  }

  /**
   * Terminated instances are looked at too, for one thing only: a spot interruption (their StateReason) is
   * `preempted`; any other terminated instance is a finished one, undefined.
   */
  async describe(idempotencyKey: string): Promise<InstanceInfo | undefined> {
    const instance = await this.#find(idempotencyKey);
    if (!instance) return undefined;
    if (interrupted(instance)) return { ...info(instance), state: 'preempted' };
    return instance.State?.Name === 'terminated' ? undefined : info(instance);
  }

  async terminate(idempotencyKey: string): Promise<void> {
    const ids = (await this.#instances(idempotencyKey, true)).map((i) => i.InstanceId!);
    if (ids.length === 0) return;
    try {
      await this.#ec2.send(new TerminateInstancesCommand({ InstanceIds: ids }));
    } catch (error) {
      // Gone between the lookup and the call: exactly what terminate wants.
      if ((error as { name?: string }).name !== 'InvalidInstanceID.NotFound') throw error;
    }
  }

  close(): void {
    this.#ec2.destroy();
  }

  /** The newest instance for the key, in any state, live ones first. */
  async #find(key: string): Promise<Instance | undefined> {
    const all = await this.#instances(key, false);
    const rank = (i: Instance) => (i.State?.Name === 'terminated' ? 1 : 0);
    all.sort((a, b) => rank(a) - rank(b) || (b.LaunchTime?.getTime() ?? 0) - (a.LaunchTime?.getTime() ?? 0));
    return all[0];
  }

  async #instances(key: string, liveOnly: boolean): Promise<Instance[]> {
    const filters = [{ Name: `tag:${WORKFLOW_TAG}`, Values: [key] }];
    if (liveOnly) filters.push({ Name: 'instance-state-name', Values: notTerminated });
    const instances: Instance[] = [];
    let NextToken: string | undefined;
    do {
      const page = await this.#ec2.send(new DescribeInstancesCommand({ Filters: filters, NextToken }));
      for (const reservation of page.Reservations ?? []) instances.push(...(reservation.Instances ?? []));
      NextToken = page.NextToken;
    } while (NextToken);
    return instances;
  }
}

/** EC2 takes at most 64 ASCII characters; longer or unusual keys are hashed (64 hex characters). */
export function clientToken(key: string): string {
  return /^[\x21-\x7e]{1,64}$/.test(key) ? key : createHash('sha256').update(key).digest('hex');
}

/** Tags that name the run: ids only, never anything from the environment's secrets. */
export function runTags(req: ProvisionRequest): Tag[] {
  const {
    SERVICE_EXPERIMENT_ID: experiment = '',
    SERVICE_VARIATION: variation = '',
    SERVICE_RUN: run = '',
  } = req.env;
  const own: Record<string, string> = {
    Name: `assay ${experiment} v${variation} r${run}`.slice(0, 256),
    'assay:experiment': experiment,
    'assay:variation': variation,
    'assay:run': run,
    [WORKFLOW_TAG]: req.idempotencyKey,
  };
  // Our tags win: the workflow tag is how the instance is found again.
  const merged = { ...req.tags, ...own };
  const secrets = [req.env.SERVICE_EXCHANGE_TOKEN, req.env.SERVICE_API_KEY].filter((s) => !!s);
  return Object.entries(merged)
    .filter(([, value]) => !secrets.some((secret) => value.includes(secret)))
    .map(([Key, Value]) => ({ Key, Value }));
}

/** EC2 took the instance back (a spot interruption), as opposed to our terminate or the run's own exit. */
function interrupted(instance: Instance): boolean {
  return ending.has(instance.State?.Name ?? '') && SPOT_INTERRUPTIONS.has(instance.StateReason?.Code ?? '');
}

function info(instance: Instance): InstanceInfo {
  return { provider: 'ec2', instanceId: instance.InstanceId!, state: state(instance.State?.Name) };
}

function state(name: string | undefined): InstanceState {
  switch (name) {
    case 'pending':
    case 'running':
    case 'stopped':
    case 'terminated':
      return name;
    case 'stopping':
      return 'stopped';
    case 'shutting-down':
      return 'terminated';
    default:
      return 'unknown';
  }
}
