// The Slurm provider's settings, read once from the environment; a variation's `slurm:` block may override
// the job fields within the operator's allowlists.
import { ConfigError } from '../settings/config-error.ts';
import type { Env } from '../settings/env-values.ts';
import { readSetting } from '../settings/read-setting.ts';
import { readAllowlist, type Allowed } from './allowlist.ts';

/** How sbatch, squeue, sacct and scancel are reached: here, or on a login node over SSH. */
export type SlurmSubmission =
  | { readonly kind: 'local' }
  | {
      readonly kind: 'ssh';
      /** `user@host`. */
      readonly target: string;
      readonly port: number | undefined;
      readonly keyFile: string;
      readonly knownHostsFile: string;
    };

export type SlurmAllowlists = {
  readonly partition: Allowed;
  readonly account: Allowed;
  readonly qos: Allowed;
  /** Resource names (`gpu`, `gpu:a100`); the counts a block asks for are free. */
  readonly gres: Allowed;
  /** sbatch long option names (`--constraint`) `slurm.extra` may use; never `any`. */
  readonly options: readonly string[];
};

export type SlurmConfig = {
  readonly submission: SlurmSubmission;
  /** The runner as the compute nodes start it, as argv words. */
  readonly runner: readonly string[];
  /** Where jobs start on the cluster: a directory per run below it. */
  readonly workDir: string;
  readonly partition: string | undefined;
  readonly account: string | undefined;
  readonly qos: string | undefined;
  readonly timeLimit: string | undefined;
  readonly allowed: SlurmAllowlists;
};

/** Validates and freezes the Slurm settings; a bad value throws ConfigError naming its variable. */
export function slurmConfig(env: Env): SlurmConfig {
  const partition = readSetting(env, 'ASSAY_SLURM_PARTITION');
  const account = readSetting(env, 'ASSAY_SLURM_ACCOUNT');
  const qos = readSetting(env, 'ASSAY_SLURM_QOS');
  const runner = readSetting(env, 'ASSAY_SLURM_RUNNER').trim().split(/\s+/);
  const workDir = readSetting(env, 'ASSAY_SLURM_WORKDIR');
  if (!workDir.startsWith('/')) throw new ConfigError('ASSAY_SLURM_WORKDIR must be an absolute path');
  const options = readAllowlist(env, 'ASSAY_SLURM_ALLOWED_OPTIONS', [], false) as readonly string[];
  const badOption = options.find((o) => !/^--[a-z][a-z0-9-]{0,40}$/.test(o));
  if (badOption !== undefined)
    throw new ConfigError(
      `ASSAY_SLURM_ALLOWED_OPTIONS must list sbatch long option names such as --constraint, got ${JSON.stringify(badOption)}`,
    );
  return Object.freeze({
    submission: submission(env),
    runner: Object.freeze(runner),
    workDir,
    partition,
    account,
    qos,
    timeLimit: readSetting(env, 'ASSAY_SLURM_TIME_LIMIT'),
    // Unset, a list allows only the operator's own default: a user cannot pick another partition or account.
    allowed: Object.freeze({
      partition: readAllowlist(env, 'ASSAY_SLURM_ALLOWED_PARTITIONS', [partition]),
      account: readAllowlist(env, 'ASSAY_SLURM_ALLOWED_ACCOUNTS', [account]),
      qos: readAllowlist(env, 'ASSAY_SLURM_ALLOWED_QOS', [qos]),
      gres: readAllowlist(env, 'ASSAY_SLURM_ALLOWED_GRES', []),
      options,
    }),
  });
}

function submission(env: Env): SlurmSubmission {
  const ssh = readSetting(env, 'ASSAY_SLURM_SSH');
  if (ssh === undefined) return { kind: 'local' };
  const keyFile = readSetting(env, 'ASSAY_SLURM_SSH_KEY');
  const knownHostsFile = readSetting(env, 'ASSAY_SLURM_KNOWN_HOSTS');
  if (!keyFile || !knownHostsFile)
    throw new ConfigError('ASSAY_SLURM_SSH needs ASSAY_SLURM_SSH_KEY and ASSAY_SLURM_KNOWN_HOSTS');
  const [target, port] = ssh.split(':') as [string, string | undefined];
  if (port !== undefined && !(Number(port) >= 1 && Number(port) <= 65535))
    throw new ConfigError(`ASSAY_SLURM_SSH's port must be 1 to 65535, got ${port}`);
  return {
    kind: 'ssh',
    target,
    port: port === undefined ? undefined : Number(port),
    keyFile,
    knownHostsFile,
  };
}
