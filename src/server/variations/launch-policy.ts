import type { LaunchConfig } from '@assay/contract';
import { providerMismatch } from '../../compute/compute-provider.ts';
import { ec2LaunchRefusal } from '../../compute/ec2-launch-policy.ts';
import { localLaunchRefusal } from '../../compute/local-config.ts';
import { slurmLaunchRefusal } from '../../compute/slurm-launch-policy.ts';
import { localLimitRefusal } from '../../compute/local-limits.ts';
import { gpuAskRefusal } from '../../compute/local-gpus.ts';
import type { Principal } from '../auth/principal.ts';
import type { Queryable } from '../db/database.ts';
import { AppError } from '../http/errors.ts';
import type { ConfigPolicy } from './config-policy.ts';
import type { SplitConfig } from './config-yaml.ts';
import { findLaunchAndAuthor } from './variation-repository.ts';

const refuse = (message: string, field: string) =>
  new AppError(422, 'launch_not_allowed', message, { field });

/**
 * Refuses a launch block the server's provider would refuse at provisioning (another provider's tag, EC2
 * machine fields or a Slurm job off the allowlists, local limits this machine cannot enforce), so the
 * researcher learns it now rather than from a failed run.
 */
export function checkLaunchPolicy(config: SplitConfig, policy: ConfigPolicy): void {
  const mismatch = providerMismatch(config.launch_config, policy.compute);
  if (mismatch) throw refuse(mismatch, 'launch.provider');
  const refusal =
    (policy.ec2 && ec2LaunchRefusal(policy.ec2, config.launch_config)) ||
    (policy.slurm && slurmLaunchRefusal(policy.slurm, config.launch_config)) ||
    (policy.local && localLimitRefusal(policy.local.limits, config.launch_config));
  if (refusal) throw refuse(refusal.message, refusal.field);
}

/**
 * On `local`, refuses to provision a command whose author (or provisioning user) may not run on the host,
 * limits the kernel cannot enforce, or more GPUs than the machine has: 422 before anything is written,
 * rather than a run failed (or waiting for ever) later. The provider checks again. A block without a command
 * is left to fail with its own reason.
 */
export function checkLaunchRunnable(
  launch: LaunchConfig,
  people: Parameters<typeof localLaunchRefusal>[1],
  policy: ConfigPolicy,
): void {
  if (policy.compute !== 'local' || !policy.local || launch.command === undefined) return;
  const refusal = localLaunchRefusal(policy.local.users, people, policy.local.sandbox);
  if (refusal) throw refuse(refusal, 'launch.command');
  const limit = localLimitRefusal(policy.local.limits, launch);
  if (limit) throw refuse(limit.message, limit.field);
  checkGpusFit(launch, policy);
}

/** checkLaunchRunnable for a stored variation the principal provisions; an invisible one is left to 404. */
export async function checkProvisionable(
  db: Queryable,
  principal: Principal,
  key: { experimentId: string; n: number },
  policy: ConfigPolicy,
): Promise<void> {
  if (policy.compute !== 'local' || !policy.local) return;
  const found = await findLaunchAndAuthor(db, principal.userId, key.experimentId, key.n);
  if (!found) return;
  checkLaunchRunnable(
    found.launch_config as LaunchConfig,
    { provisionedByAdmin: principal.isAdmin, launchAuthor: found.launch_author },
    policy,
  );
}

/**
 * On `local`, refuses a launch block asking more GPUs than the machine hands out (ASSAY_LOCAL_GPUS): it would
 * wait in the compute queue for ever.
 */
function checkGpusFit(launch: LaunchConfig, policy: ConfigPolicy): void {
  const gpus = 'gpus' in launch ? (launch.gpus ?? 0) : 0;
  const refusal = gpuAskRefusal(gpus, policy.localCapacity);
  if (refusal) throw refuse(refusal, 'launch.gpus');
}
