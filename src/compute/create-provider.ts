// Picks the compute provider by ASSAY_COMPUTE, the embedded `local` being the default.
import type { Env } from '../settings/env-values.ts';
import { readSetting } from '../settings/read-setting.ts';
import type { ComputeProvider } from './compute-provider.ts';
import { ec2Config } from './ec2-config.ts';
import { Ec2Provider } from './ec2-provider.ts';
import { localCompute } from './local-config.ts';
import { LocalProvider, type LocalProviderOptions } from './local-provider.ts';
import { slurmConfig } from './slurm-config.ts';
import { SlurmProvider } from './slurm-provider.ts';
import { localSlurmShell } from './slurm-shell.ts';
import { sshSlurmShell } from './slurm-ssh-shell.ts';

export type CreateProviderOptions = {
  env: Env;
  /** Needed by the local provider. */
  local: LocalProviderOptions;
};

/**
 * Throws ConfigError for an unknown ASSAY_COMPUTE or a bad setting of the chosen provider (ASSAY_LOCAL_SANDBOX=on
 * where bubblewrap cannot run).
 */
export function createComputeProvider(options: CreateProviderOptions): ComputeProvider {
  const compute = readSetting(options.env, 'ASSAY_COMPUTE');
  if (compute === 'ec2') return new Ec2Provider({ config: ec2Config(options.env) });
  if (compute === 'slurm') {
    const config = slurmConfig(options.env);
    const { submission } = config;
    const shell = submission.kind === 'ssh' ? sshSlurmShell(submission) : localSlurmShell();
    return new SlurmProvider({ config, shell });
  }
  const local = localCompute(options.env);
  return new LocalProvider({
    users: local.users,
    sandbox: local.sandbox,
    limits: local.limits,
    runners: local.runners,
    ...options.local,
  });
}
