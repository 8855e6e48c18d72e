// Which job fields a variation's `slurm:` block may ask for: the operator's allowlists, checked when the
// variation is created (and a sweep's points made) and again when the job is submitted.
import type { LaunchRefusal } from './ec2-launch-policy.ts';
import type { SlurmAllowlists, SlurmConfig } from './slurm-config.ts';

const SETTING = {
  partition: 'ASSAY_SLURM_ALLOWED_PARTITIONS',
  account: 'ASSAY_SLURM_ALLOWED_ACCOUNTS',
  qos: 'ASSAY_SLURM_ALLOWED_QOS',
  gres: 'ASSAY_SLURM_ALLOWED_GRES',
  extra: 'ASSAY_SLURM_ALLOWED_OPTIONS',
} as const;

/**
 * The first field of a launch block's `slurm:` job (as stored: any JSON) that the allowlists refuse;
 * undefined: all allowed. A block without a `slurm:` job asks for the operator's defaults only.
 */
export function slurmLaunchRefusal(
  config: SlurmConfig,
  launch: Record<string, unknown>,
): LaunchRefusal | undefined {
  const job = launch.slurm;
  if (job === undefined || job === null) return undefined;
  if (typeof job !== 'object' || Array.isArray(job))
    return { field: 'launch.slurm', message: 'launch.slurm must be a mapping' };
  const fields = job as Record<string, unknown>;
  for (const field of ['partition', 'account', 'qos'] as const) {
    const value = fields[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string')
      return { field: `launch.slurm.${field}`, message: `launch.slurm.${field} must be a string` };
    const refusal = refused(config.allowed[field], value, field);
    if (refusal) return refusal;
  }
  const gres = fields.gres;
  if (gres !== undefined && gres !== null) {
    if (typeof gres !== 'string')
      return { field: 'launch.slurm.gres', message: 'launch.slurm.gres must be a string' };
    // `gpu:a100:2` asks for resource `gpu:a100`, `gpu:2` for `gpu`: the trailing count is free.
    for (const item of gres.split(',')) {
      const name = item.replace(/:\d+$/, '');
      const refusal = refused(config.allowed.gres, name, 'gres', item);
      if (refusal) return refusal;
    }
  }
  const extra = fields.extra;
  if (extra !== undefined && extra !== null) {
    if (!Array.isArray(extra) || !extra.every((o): o is string => typeof o === 'string'))
      return { field: 'launch.slurm.extra', message: 'launch.slurm.extra must be a list of strings' };
    for (const option of extra) {
      const name = option.split('=')[0]!;
      const refusal = refused(config.allowed.options, name, 'extra', option);
      if (refusal) return refusal;
    }
  }
  return undefined;
}

function refused(
  allowed: SlurmAllowlists[keyof SlurmAllowlists],
  value: string,
  field: keyof typeof SETTING,
  shown: string = value,
): LaunchRefusal | undefined {
  if (allowed === 'any' || allowed.includes(value)) return undefined;
  const setting = SETTING[field];
  return {
    field: `launch.slurm.${field}`,
    message:
      allowed.length === 0
        ? `launch.slurm.${field} ${JSON.stringify(shown)} is not allowed on this server (its operator allows none: ${setting})`
        : `launch.slurm.${field} ${JSON.stringify(shown)} is not allowed on this server; allowed: ${allowed.join(', ')} (${setting})`,
  };
}
