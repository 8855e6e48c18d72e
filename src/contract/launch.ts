import { Type, type Static } from 'typebox';

/**
 * Shapes of the cloud identifiers a launch block may name, as EC2 spells them. The EC2 provider checks its own
 * settings (EC2_INSTANCE_TYPE, …) against the same patterns.
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

/**
 * A variation's `launch:` block: what a managed run executes and, on EC2, on what. Every key is optional here
 * (a variation without a launch block is still runnable by hand); provisioning needs `command`. Unknown keys
 * are refused, so a misspelt `instance-type` fails when the variation is created, not when a run is provisioned.
 */
export const LaunchConfig = Type.Object(
  {
    command: Type.Optional(Command),
    image: Type.Optional(
      Type.String({ pattern: LAUNCH_PATTERNS.image, description: 'the EC2 AMI; overrides EC2_AMI' }),
    ),
    instance_type: Type.Optional(
      Type.String({ pattern: LAUNCH_PATTERNS.instanceType, maxLength: 64, description: 'e.g. g5.xlarge' }),
    ),
    subnet_id: Type.Optional(Type.String({ pattern: LAUNCH_PATTERNS.subnetId })),
    security_group_ids: Type.Optional(
      Type.Array(Type.String({ pattern: LAUNCH_PATTERNS.securityGroupId }), { maxItems: 16 }),
    ),
    iam_instance_profile: Type.Optional(
      Type.String({ pattern: LAUNCH_PATTERNS.iamInstanceProfile, description: 'a profile name or ARN' }),
    ),
    env: Type.Optional(
      Type.Record(Type.String({ pattern: LAUNCH_PATTERNS.envName }), Type.String({ maxLength: 100_000 }), {
        additionalProperties: false,
        description: 'extra variables for the command; the injected SERVICE_* variables always win',
      }),
    ),
    max_runtime_s: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 30 * 24 * 3600,
        description: 'reserved: accepted and stored, not yet enforced by the providers',
      }),
    ),
  },
  { additionalProperties: false },
);
export type LaunchConfig = Static<typeof LaunchConfig>;

/** A launch block a managed run can be provisioned from: one that names its command. */
export type RunnableLaunchConfig = LaunchConfig & { command: string | string[] };
