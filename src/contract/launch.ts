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

const closed = { additionalProperties: false } as const;

/** `provider: ec2`: the run gets an EC2 instance of its own. */
export const Ec2LaunchConfig = Type.Object(
  { provider: Type.Literal('ec2'), ...COMMON, ...EC2_MACHINE },
  { ...closed, title: 'Ec2LaunchConfig' },
);
export type Ec2LaunchConfig = Static<typeof Ec2LaunchConfig>;

/** `provider: local`: the run is a process on the service's (or worker's) own host. */
export const LocalLaunchConfig = Type.Object(
  { provider: Type.Literal('local'), ...COMMON },
  { ...closed, title: 'LocalLaunchConfig' },
);
export type LocalLaunchConfig = Static<typeof LocalLaunchConfig>;

/**
 * One member per provider, keyed by its `provider` tag: a new provider is a member here (and its compute
 * provider). Validation, the server's checks and the providers look the member up by the tag.
 */
export const LAUNCH_PROVIDERS = { ec2: Ec2LaunchConfig, local: LocalLaunchConfig } as const;
export type LaunchProvider = keyof typeof LAUNCH_PROVIDERS;

/**
 * A block without `provider`, as every block was written before providers were named: it runs on whichever
 * provider the server uses, and EC2's machine fields apply when that is EC2 (other providers ignore them).
 */
export const UntaggedLaunchConfig = Type.Object(
  { ...COMMON, ...EC2_MACHINE },
  { ...closed, title: 'UntaggedLaunchConfig' },
);
export type UntaggedLaunchConfig = Static<typeof UntaggedLaunchConfig>;

/**
 * A variation's `launch:` block: what a managed run executes and, with `provider`, where. Every key is
 * optional (a variation without a launch block is still runnable by hand); provisioning needs `command`.
 * Unknown keys are refused, so a misspelt `instance-type` fails when the variation is created, not when a
 * run is provisioned.
 */
export const LaunchConfig = Type.Union([UntaggedLaunchConfig, Ec2LaunchConfig, LocalLaunchConfig], {
  description: 'tagged by `provider` (ec2, local); without it the server’s provider runs it',
});
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
