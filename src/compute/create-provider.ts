// Picks the compute provider by name (ASSAY_COMPUTE), the embedded `local` being the default.
import { ConfigError } from '../server/config.ts';
import type { ComputeProvider } from './compute-provider.ts';
import { ec2Config } from './ec2-config.ts';
import { Ec2Provider } from './ec2-provider.ts';
import { localComputeUsers } from './local-config.ts';
import { LocalProvider, type LocalProviderOptions } from './local-provider.ts';

export type CreateProviderOptions = {
  /** `local` or `ec2`; undefined: local. */
  name: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  /** Needed by the local provider. */
  local: LocalProviderOptions;
};

export function createComputeProvider(options: CreateProviderOptions): ComputeProvider {
  const name = options.name?.trim() || 'local';
  if (name === 'local') return new LocalProvider({ users: localComputeUsers(options.env), ...options.local });
  if (name === 'ec2') return new Ec2Provider({ config: ec2Config(options.env) });
  throw new ConfigError(`ASSAY_COMPUTE must be local or ec2, got ${JSON.stringify(name)}`);
}
