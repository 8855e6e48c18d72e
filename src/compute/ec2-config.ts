// The EC2 provider's settings, read once from the environment; launch_config may override the machine fields
// per variation.
import { LAUNCH_PATTERNS } from '@assay/contract';
import { ConfigError } from '../settings/config-error.ts';
import type { Env } from '../settings/env-values.ts';
import { readSetting } from '../settings/read-setting.ts';
import { readAllowlist } from './allowlist.ts';
import type { Ec2LaunchAllowlists } from './ec2-launch-policy.ts';

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

// The machine fields share their shapes with a variation's launch block, which may override them.
const SECURITY_GROUP_ID = new RegExp(LAUNCH_PATTERNS.securityGroupId);

/** Validates and freezes the EC2 settings; a bad value throws ConfigError naming its variable. */
export function ec2Config(env: Env): Ec2Config {
  const groups = readSetting(env, 'EC2_SECURITY_GROUP_IDS');
  const ami = readSetting(env, 'EC2_AMI');
  const instanceType = readSetting(env, 'EC2_INSTANCE_TYPE');
  const subnetId = readSetting(env, 'EC2_SUBNET_ID');
  const securityGroupIds = groups === undefined ? [] : groups.split(',').map((id) => checkGroup(id.trim()));
  const iamInstanceProfile = readSetting(env, 'EC2_IAM_INSTANCE_PROFILE');
  return Object.freeze({
    region: readSetting(env, 'EC2_REGION'),
    endpoint: readSetting(env, 'EC2_ENDPOINT'),
    ami,
    instanceType,
    subnetId,
    securityGroupIds: Object.freeze(securityGroupIds),
    iamInstanceProfile,
    // Unset, a list allows only the operator's own default: a user cannot pick another image, network
    // or role.
    allowed: Object.freeze({
      image: readAllowlist(env, 'EC2_ALLOWED_IMAGES', [ami]),
      instance_type: readAllowlist(env, 'EC2_ALLOWED_INSTANCE_TYPES', [instanceType]),
      subnet_id: readAllowlist(env, 'EC2_ALLOWED_SUBNET_IDS', [subnetId]),
      security_group_ids: readAllowlist(env, 'EC2_ALLOWED_SECURITY_GROUP_IDS', securityGroupIds),
      iam_instance_profile: readAllowlist(env, 'EC2_ALLOWED_IAM_INSTANCE_PROFILES', [iamInstanceProfile]),
    }),
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
