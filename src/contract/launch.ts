import { Type, type Static } from 'typebox';
import { Nullable, Uuid } from './common.ts';

/**
 * Shapes of the cloud identifiers a launch block may name, as EC2 spells them. The EC2 provider checks its
 * own settings (EC2_INSTANCE_TYPE, …) against the same patterns.
 */
export const LAUNCH_PATTERNS = {
  image: '^ami-[0-9a-f]{8,17}$',
  instanceType: '^[a-z][a-z0-9-]*\\.[a-z0-9]+$',
  subnetId: '^subnet-[0-9a-f]{8,17}$',
  securityGroupId: '^sg-[0-9a-f]{8,17}$',
  iamInstanceProfile:
    '^(arn:aws[a-z-]*:iam::\\d{12}:instance-profile\\/[\\w+=,.@/-]{1,128}|[\\w+=,.@-]{1,128})$',
  envName: '^[A-Za-z_][A-Za-z0-9_]*$',
  /** A Slurm partition, account or QOS name. */
  slurmName: '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$',
  /** Generic resources as sbatch's --gres takes them: `gpu:1`, `gpu:a100:2`, comma-separated. */
  slurmGres: '^[A-Za-z0-9_]+(:[A-Za-z0-9_.-]+){0,2}(,[A-Za-z0-9_]+(:[A-Za-z0-9_.-]+){0,2}){0,7}$',
  /** sbatch's --time: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS. */
  slurmTime: '^(\\d{1,6}|\\d{1,4}:\\d{2}|\\d{1,4}:\\d{2}:\\d{2}|\\d{1,3}-\\d{1,2}(:\\d{2}(:\\d{2})?)?)$',
  /**
   * One extra sbatch option as a long option, `--name` or `--name=value`, with no shell or quoting
   * characters; the operator's allowlist (ASSAY_SLURM_ALLOWED_OPTIONS) says which names may pass.
   */
  slurmOption: '^--[a-z][a-z0-9-]{0,40}(=[A-Za-z0-9_.,:@/+=%-]{1,200})?$',
} as const;

const Command = Type.Union(
  [
    Type.String({
      minLength: 1,
      maxLength: 100_000,
      pattern: '\\S',
      description: 'a shell command line (sh -c)',
    }),
    Type.Array(Type.String({ maxLength: 100_000 }), {
      minItems: 1,
      maxItems: 10_000,
      description: 'an argv; its first word is the program',
    }),
  ],
  { description: 'what the instance runs under `assay run --`' },
);

const Env = Type.Record(
  Type.String({ pattern: LAUNCH_PATTERNS.envName }),
  Type.String({ maxLength: 100_000 }),
  {
    additionalProperties: false,
    description: 'extra variables for the command; the injected SERVICE_* variables always win',
  },
);

const MaxRuntime = Type.Integer({
  minimum: 1,
  maximum: 30 * 24 * 3600,
  description: 'reserved: accepted and stored, not yet enforced by the providers',
});

/** What every provider runs: the command, its extra environment and (reserved) its time limit. */
const COMMON = {
  command: Type.Optional(Command),
  env: Type.Optional(Env),
  max_runtime_s: Type.Optional(MaxRuntime),
};

/** The machine EC2 starts; each field defaults to the operator's setting and must be on its allowlist. */
const EC2_MACHINE = {
  image: Type.Optional(
    Type.String({ pattern: LAUNCH_PATTERNS.image, description: 'the EC2 AMI; overrides EC2_AMI' }),
  ),
  instance_type: Type.Optional(
    Type.String({ pattern: LAUNCH_PATTERNS.instanceType, maxLength: 64, description: 'e.g. g5.xlarge' }),
  ),
  subnet_id: Type.Optional(Type.String({ pattern: LAUNCH_PATTERNS.subnetId })),
  // An empty list is refused by the EC2 policy rather than here, so blocks stored before still read back.
  security_group_ids: Type.Optional(
    Type.Array(Type.String({ pattern: LAUNCH_PATTERNS.securityGroupId }), {
      maxItems: 16,
      description: 'at least one; leave it out for EC2_SECURITY_GROUP_IDS',
    }),
  ),
  iam_instance_profile: Type.Optional(
    Type.String({ pattern: LAUNCH_PATTERNS.iamInstanceProfile, description: 'a profile name or ARN' }),
  ),
};

/** `local`: what the run holds on the shared machine while it runs. */
const LOCAL_RESOURCES = {
  gpus: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 64,
      description:
        'GPUs the run holds on `local` (ASSAY_LOCAL_GPUS): it waits in the queue until that many are free, and sees only them (CUDA_VISIBLE_DEVICES)',
    }),
  ),
  cpus: Type.Optional(
    Type.Number({
      exclusiveMinimum: 0,
      maximum: 1024,
      description: 'CPU cores the run may use on `local`, enforced where the kernel allows (cgroups)',
    }),
  ),
  memory_mb: Type.Optional(
    Type.Integer({
      minimum: 16,
      maximum: 16 * 1024 * 1024,
      description: 'memory the run may use on `local`, in MiB, enforced where the kernel allows (cgroups)',
    }),
  ),
};

/** `spot: true` on EC2: a spot instance, cheaper but the cloud may take it back (the run ends `preempted`). */
const EC2_MARKET = {
  spot: Type.Optional(
    Type.Boolean({
      description:
        'a spot instance (InstanceMarketOptions); an interruption ends the run `preempted` and recovery resumes it',
    }),
  ),
};

const SlurmName = (what: string) =>
  Type.Optional(Type.String({ pattern: LAUNCH_PATTERNS.slurmName, description: what }));

/** The batch job Slurm queues; each field defaults to the operator's setting and must be on its allowlist. */
export const SlurmJob = Type.Object(
  {
    partition: SlurmName('sbatch --partition; overrides ASSAY_SLURM_PARTITION'),
    account: SlurmName('sbatch --account; overrides ASSAY_SLURM_ACCOUNT'),
    qos: SlurmName('sbatch --qos; overrides ASSAY_SLURM_QOS'),
    time_limit: Type.Optional(
      Type.String({
        pattern: LAUNCH_PATTERNS.slurmTime,
        description: 'sbatch --time (minutes, HH:MM:SS, D-HH:MM…); overrides ASSAY_SLURM_TIME_LIMIT',
      }),
    ),
    gres: Type.Optional(
      Type.String({ pattern: LAUNCH_PATTERNS.slurmGres, maxLength: 200, description: 'e.g. gpu:1' }),
    ),
    cpus: Type.Optional(Type.Integer({ minimum: 1, maximum: 4096, description: 'sbatch --cpus-per-task' })),
    memory_mb: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 64 * 1024 * 1024, description: 'sbatch --mem, in MiB' }),
    ),
    extra: Type.Optional(
      Type.Array(Type.String({ pattern: LAUNCH_PATTERNS.slurmOption }), {
        maxItems: 32,
        description:
          'more sbatch options (`--constraint=a100`), each name on the operator’s allowlist (ASSAY_SLURM_ALLOWED_OPTIONS)',
      }),
    ),
  },
  { additionalProperties: false, description: 'the Slurm batch job of the run' },
);
export type SlurmJob = Static<typeof SlurmJob>;

const SLURM = { slurm: Type.Optional(SlurmJob) };

const closed = { additionalProperties: false } as const;

/** `provider: ec2`: the run gets an EC2 instance of its own. */
export const Ec2LaunchConfig = Type.Object(
  { provider: Type.Literal('ec2'), ...COMMON, ...EC2_MACHINE, ...EC2_MARKET },
  { ...closed, title: 'Ec2LaunchConfig' },
);
export type Ec2LaunchConfig = Static<typeof Ec2LaunchConfig>;

/** `provider: local`: the run is a process on the service's (or worker's) own host. */
export const LocalLaunchConfig = Type.Object(
  { provider: Type.Literal('local'), ...COMMON, ...LOCAL_RESOURCES },
  { ...closed, title: 'LocalLaunchConfig' },
);
export type LocalLaunchConfig = Static<typeof LocalLaunchConfig>;

/** `provider: slurm`: the run is a batch job on the operator's Slurm cluster. */
export const SlurmLaunchConfig = Type.Object(
  { provider: Type.Literal('slurm'), ...COMMON, ...SLURM },
  { ...closed, title: 'SlurmLaunchConfig' },
);
export type SlurmLaunchConfig = Static<typeof SlurmLaunchConfig>;

/**
 * One member per provider, keyed by its `provider` tag: a new provider is a member here (and its compute
 * provider). Validation, the server's checks and the providers look the member up by the tag.
 */
export const LAUNCH_PROVIDERS = {
  ec2: Ec2LaunchConfig,
  local: LocalLaunchConfig,
  slurm: SlurmLaunchConfig,
} as const;
export type LaunchProvider = keyof typeof LAUNCH_PROVIDERS;

/**
 * A block without `provider`, as every block was written before providers were named: it runs on whichever
 * provider the server uses, and each provider's own fields apply when it is that provider (EC2's machine and
 * `spot`, local's resources, the `slurm:` job); the others ignore them.
 */
export const UntaggedLaunchConfig = Type.Object(
  { ...COMMON, ...EC2_MACHINE, ...EC2_MARKET, ...LOCAL_RESOURCES, ...SLURM },
  { ...closed, title: 'UntaggedLaunchConfig' },
);
export type UntaggedLaunchConfig = Static<typeof UntaggedLaunchConfig>;

/**
 * A variation's `launch:` block: what a managed run executes and, with `provider`, where. Every key is
 * optional (a variation without a launch block is still runnable by hand); provisioning needs `command`.
 * Unknown keys are refused, so a misspelt `instance-type` fails when the variation is created, not when a
 * run is provisioned.
 */
export const LaunchConfig = Type.Union(
  [UntaggedLaunchConfig, Ec2LaunchConfig, LocalLaunchConfig, SlurmLaunchConfig],
  { description: 'tagged by `provider` (ec2, local, slurm); without it the server’s provider runs it' },
);
export type LaunchConfig = Static<typeof LaunchConfig>;

/** A launch block a managed run can be provisioned from: one that names its command. */
export type RunnableLaunchConfig = LaunchConfig & { command: string | string[] };

/** The user who last wrote a variation's launch block: `local` runs only admins' blocks by default. */
export const LaunchAuthor = Type.Object({
  id: Uuid,
  email: Nullable(Type.String()),
  is_admin: Type.Boolean(),
});
export type LaunchAuthor = Static<typeof LaunchAuthor>;
