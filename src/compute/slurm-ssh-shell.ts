// Placeholder until the SSH submission path lands (branch slurm-policy): ASSAY_SLURM_SSH is refused at start.
import { ConfigError } from '../settings/config-error.ts';
import type { SlurmSubmission } from './slurm-config.ts';
import type { SlurmShell } from './slurm-shell.ts';

export function sshSlurmShell(submission: Extract<SlurmSubmission, { kind: 'ssh' }>): SlurmShell {
  void submission;
  throw new ConfigError('ASSAY_SLURM_SSH is not supported yet');
}
