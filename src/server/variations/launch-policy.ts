import type { Ec2Config } from '../../compute/ec2-config.ts';
import { ec2LaunchRefusal } from '../../compute/ec2-launch-policy.ts';
import { AppError } from '../http/errors.ts';
import type { SplitConfig } from './config-yaml.ts';

/**
 * Refuses a launch block whose machine fields the EC2 provider would refuse at provisioning, so the researcher
 * learns it now rather than from a failed run. Without EC2 settings (another provider) the fields are not used.
 */
export function checkLaunchPolicy(config: SplitConfig, ec2: Ec2Config | undefined): void {
  const refusal = ec2 && ec2LaunchRefusal(ec2, config.launch_config);
  if (refusal) throw new AppError(422, 'launch_not_allowed', refusal.message, { field: refusal.field });
}
