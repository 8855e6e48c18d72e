// The EC2 provider's settings, read once from the environment; launch_config may override the machine fields per variation.
import { ConfigError } from '../server/config-error.ts';
import { text, type Env } from '../server/env-values.ts';
import type { Allowed, Ec2LaunchAllowlists } from './ec2-launch-policy.ts';

export type Ec2Config = {
  readonly region: string;
  /** An EC2-compatible endpoint (moto in tests); undefined: AWS. */
  readonly endpoint: string | undefined;
  readonly ami: string | undefined;
  readonly instanceType: string;
  readonly subnetId: string | undefined;
  readonly securityGroupIds: readonly string[];
  /** A profile name or ARN; undefined: no instance role. */
  readonly iamInstanceProfile: string | undefined;
  /** What a variation's launch block may name; the defaults above are always allowed. */
  readonly allowed: Ec2LaunchAllowlists;
};

/** Rows for the README's configuration table, like SETTINGS in config.ts. */
export const EC2_SETTINGS = [
  ['EC2_REGION', 'us-east-1', 'Region of the ec2 compute provider'],
  ['EC2_ENDPOINT', '(AWS)', 'Endpoint URL of an EC2-compatible API'],
  ['EC2_AMI', '(launch_config.image)', 'Image of run instances; it must have `assay` on PATH'],
  ['EC2_INSTANCE_TYPE', 't3.micro', 'Instance type when launch_config.instance_type is not given'],
  ['EC2_SUBNET_ID', '(default VPC)', 'Subnet of run instances'],
  ['EC2_SECURITY_GROUP_IDS', '(default group)', 'Comma-separated security group ids'],
  ['EC2_IAM_INSTANCE_PROFILE', '(none)', 'Instance profile name or ARN of run instances'],
  ['EC2_ALLOWED_IMAGES', '(EC2_AMI only)', 'Comma-separated images launch.image may name; `*`: any'],
  [
    'EC2_ALLOWED_INSTANCE_TYPES',
    '(EC2_INSTANCE_TYPE only)',
    'Instance types launch.instance_type may name; `*`: any',
  ],
  ['EC2_ALLOWED_SUBNET_IDS', '(EC2_SUBNET_ID only)', 'Subnets launch.subnet_id may name; `*`: any'],
  [
    'EC2_ALLOWED_SECURITY_GROUP_IDS',
    '(EC2_SECURITY_GROUP_IDS only)',
    'Security groups launch.security_group_ids may name; `*`: any',
  ],
  [
    'EC2_ALLOWED_IAM_INSTANCE_PROFILES',
    '(EC2_IAM_INSTANCE_PROFILE only)',
    'Instance profiles launch.iam_instance_profile may name; `*`: any',
  ],
] as const;

export const patterns = {
  region: /^[a-z]{2}(-[a-z]+)+-\d+$/,
  ami: /^ami-[0-9a-f]{8,17}$/,
  instanceType: /^[a-z][a-z0-9-]*\.[a-z0-9]+$/,
  subnetId: /^subnet-[0-9a-f]{8,17}$/,
  securityGroupId: /^sg-[0-9a-f]{8,17}$/,
  iamInstanceProfile: /^(arn:aws[a-z-]*:iam::\d{12}:instance-profile\/[\w+=,.@/-]{1,128}|[\w+=,.@-]{1,128})$/,
};

/** Validates and freezes the EC2 settings; a bad value throws ConfigError naming its variable. */
export function ec2Config(env: Env): Ec2Config {
  const endpoint = text(env, 'EC2_ENDPOINT');
  if (endpoint !== undefined && !/^https?:\/\/[^\s/]+/.test(endpoint)) {
    throw new ConfigError(`EC2_ENDPOINT must be an http(s) URL, got ${JSON.stringify(endpoint)}`);
  }
  const groups = text(env, 'EC2_SECURITY_GROUP_IDS');
  const ami = matching(env, 'EC2_AMI', patterns.ami);
  const instanceType = matching(env, 'EC2_INSTANCE_TYPE', patterns.instanceType) ?? 't3.micro';
  const subnetId = matching(env, 'EC2_SUBNET_ID', patterns.subnetId);
  const securityGroupIds = groups === undefined ? [] : groups.split(',').map((id) => checkGroup(id.trim()));
  const iamInstanceProfile = matching(env, 'EC2_IAM_INSTANCE_PROFILE', patterns.iamInstanceProfile);
  return Object.freeze({
    region: matching(env, 'EC2_REGION', patterns.region) ?? 'us-east-1',
    endpoint,
    ami,
    instanceType,
    subnetId,
    securityGroupIds: Object.freeze(securityGroupIds),
    iamInstanceProfile,
    // Unset, a list allows only the operator's own default: a user cannot pick another image, network or role.
    allowed: Object.freeze({
      image: allowlist(env, 'EC2_ALLOWED_IMAGES', [ami]),
      instance_type: allowlist(env, 'EC2_ALLOWED_INSTANCE_TYPES', [instanceType]),
      subnet_id: allowlist(env, 'EC2_ALLOWED_SUBNET_IDS', [subnetId]),
      security_group_ids: allowlist(env, 'EC2_ALLOWED_SECURITY_GROUP_IDS', securityGroupIds),
      iam_instance_profile: allowlist(env, 'EC2_ALLOWED_IAM_INSTANCE_PROFILES', [iamInstanceProfile]),
    }),
  });
}

/** A comma-separated list plus the defaults, or `any` for `*`. */
function allowlist(env: Env, name: string, defaults: (string | undefined)[]): Allowed {
  const raw = text(env, name);
  if (raw === '*') return 'any';
  const listed = (raw ?? '').split(',').map((v) => v.trim());
  if (raw !== undefined && listed.some((v) => v === '' || v === '*'))
    throw new ConfigError(`${name} must be \`*\` or a comma-separated list without empty items`);
  const values = [...defaults, ...listed].filter((v): v is string => v !== undefined && v !== '');
  return Object.freeze([...new Set(values)]);
}

function checkGroup(id: string): string {
  if (!patterns.securityGroupId.test(id)) {
    throw new ConfigError(
      `EC2_SECURITY_GROUP_IDS must be comma-separated sg-… ids, got ${JSON.stringify(id)}`,
    );
  }
  return id;
}

function matching(env: Env, name: string, pattern: RegExp): string | undefined {
  const value = text(env, name);
  if (value !== undefined && !pattern.test(value)) {
    throw new ConfigError(`${name} is not valid: ${JSON.stringify(value)}`);
  }
  return value;
}
