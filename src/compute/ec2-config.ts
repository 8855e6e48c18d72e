// The EC2 provider's settings, read once from the environment; launch_config may override the machine fields per variation.
import { ConfigError } from '../server/config-error.ts';
import { text, type Env } from '../server/env-values.ts';

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
  return Object.freeze({
    region: matching(env, 'EC2_REGION', patterns.region) ?? 'us-east-1',
    endpoint,
    ami: matching(env, 'EC2_AMI', patterns.ami),
    instanceType: matching(env, 'EC2_INSTANCE_TYPE', patterns.instanceType) ?? 't3.micro',
    subnetId: matching(env, 'EC2_SUBNET_ID', patterns.subnetId),
    securityGroupIds: Object.freeze(
      groups === undefined ? [] : groups.split(',').map((id) => checkGroup(id.trim())),
    ),
    iamInstanceProfile: matching(env, 'EC2_IAM_INSTANCE_PROFILE', patterns.iamInstanceProfile),
  });
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
