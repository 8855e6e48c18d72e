// The EC2 provider's settings, read once from the environment; launch_config may override the machine fields per variation.
import { ConfigError } from '../settings/config-error.ts';
import type { Env } from '../settings/env-values.ts';
import { readSetting } from '../settings/read-setting.ts';

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

const SECURITY_GROUP_ID = /^sg-[0-9a-f]{8,17}$/;

/** Validates and freezes the EC2 settings; a bad value throws ConfigError naming its variable. */
export function ec2Config(env: Env): Ec2Config {
  const groups = readSetting(env, 'EC2_SECURITY_GROUP_IDS');
  return Object.freeze({
    region: readSetting(env, 'EC2_REGION'),
    endpoint: readSetting(env, 'EC2_ENDPOINT'),
    ami: readSetting(env, 'EC2_AMI'),
    instanceType: readSetting(env, 'EC2_INSTANCE_TYPE'),
    subnetId: readSetting(env, 'EC2_SUBNET_ID'),
    securityGroupIds: Object.freeze(
      groups === undefined ? [] : groups.split(',').map((id) => checkGroup(id.trim())),
    ),
    iamInstanceProfile: readSetting(env, 'EC2_IAM_INSTANCE_PROFILE'),
  });
}

function checkGroup(id: string): string {
  if (!SECURITY_GROUP_ID.test(id)) {
    throw new ConfigError(
      `EC2_SECURITY_GROUP_IDS must be comma-separated sg-… ids, got ${JSON.stringify(id)}`,
    );
  }
  return id;
}
