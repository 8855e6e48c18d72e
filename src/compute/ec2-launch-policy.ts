// Which machine fields a variation's launch block may ask EC2 for: the operator's allowlists, checked when
// the variation is created and again when its run is provisioned.
import type { Allowed } from './allowlist.ts';
import type { Ec2Config } from './ec2-config.ts';

export type Ec2LaunchAllowlists = {
  readonly image: Allowed;
  readonly instance_type: Allowed;
  readonly subnet_id: Allowed;
  readonly security_group_ids: Allowed;
  readonly iam_instance_profile: Allowed;
};

/** A refused field of the launch block and why, in words a researcher can act on. */
export type LaunchRefusal = { field: string; message: string };

const SETTING: Record<keyof Ec2LaunchAllowlists, string> = {
  image: 'EC2_ALLOWED_IMAGES',
  instance_type: 'EC2_ALLOWED_INSTANCE_TYPES',
  subnet_id: 'EC2_ALLOWED_SUBNET_IDS',
  security_group_ids: 'EC2_ALLOWED_SECURITY_GROUP_IDS',
  iam_instance_profile: 'EC2_ALLOWED_IAM_INSTANCE_PROFILES',
};

/**
 * The first machine field of a launch block (as stored: any JSON) that the allowlists refuse; undefined:
 * all allowed.
 */
export function ec2LaunchRefusal(
  config: Ec2Config,
  launch: Record<string, unknown>,
): LaunchRefusal | undefined {
  for (const field of Object.keys(SETTING) as (keyof Ec2LaunchAllowlists)[]) {
    const value = launch[field];
    if (value === undefined || value === null) continue;
    const values = field === 'security_group_ids' ? value : [value];
    if (!Array.isArray(values) || !values.every((v): v is string => typeof v === 'string'))
      return {
        field: `launch.${field}`,
        message: `launch.${field} must be ${field === 'security_group_ids' ? 'a list of strings' : 'a string'}`,
      };
    // EC2 reads no groups as "the VPC's default group", which the operator never chose.
    if (field === 'security_group_ids' && values.length === 0)
      return {
        field: 'launch.security_group_ids',
        message:
          'launch.security_group_ids is empty, which would give the instance the VPC’s default security group; name at least one group, or leave the field out for the server’s default (EC2_SECURITY_GROUP_IDS)',
      };
    const allowed = config.allowed[field];
    if (allowed === 'any') continue;
    const refused = values.find((v) => !allowed.includes(v));
    if (refused !== undefined)
      return {
        field: `launch.${field}`,
        message:
          allowed.length === 0
            ? `launch.${field} may not be set on this server (its operator allows none: ${SETTING[field]})`
            : `launch.${field} ${JSON.stringify(refused)} is not allowed on this server; allowed: ${allowed.join(', ')} (${SETTING[field]})`,
      };
  }
  return undefined;
}
