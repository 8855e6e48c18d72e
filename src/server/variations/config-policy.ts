import type { ComputeKind } from '../../compute/compute-provider.ts';
import type { Ec2Config } from '../../compute/ec2-config.ts';
import type { LocalCompute } from '../../compute/local-config.ts';
import type { LocalCapacity } from '../../compute/local-gpus.ts';
import type { SlurmConfig } from '../../compute/slurm-config.ts';
import type { ServiceConfig } from '../config.ts';

/** What the server accepts in a variation's config: its expanded size, and launch blocks its compute runs. */
export interface ConfigPolicy {
  /** Largest config once YAML aliases are expanded, in bytes of JSON: the body limit. */
  readonly maxConfigBytes: number;
  readonly compute: ComputeKind;
  /** The EC2 settings when managed runs go to EC2: launch blocks are checked against their allowlists. */
  readonly ec2: Ec2Config | undefined;
  /** The Slurm settings when managed runs go to Slurm: `slurm:` jobs are checked against their allowlists. */
  readonly slurm: SlurmConfig | undefined;
  /** On `local`: whose runs it takes, in which sandbox, with which limits. */
  readonly local: LocalCompute | undefined;
  /** `local`'s run slots and GPUs: a launch asking more GPUs than there are is refused. */
  readonly localCapacity: LocalCapacity | undefined;
}

export function configPolicy(config: ServiceConfig): ConfigPolicy {
  return Object.freeze({
    maxConfigBytes: config.bodyLimitBytes,
    compute: config.compute,
    ec2: config.ec2,
    slurm: config.slurm,
    local: config.local,
    localCapacity: config.localCapacity,
  });
}
