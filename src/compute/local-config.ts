// The local provider's settings: it runs users' commands as the service's own OS user, so who may use it is the operator's call.
import { ConfigError } from '../server/config-error.ts';
import { text, type Env } from '../server/env-values.ts';

/** `admins`: only admins' runs are provisioned on `local`; `all`: every user's (a single-team machine). */
export type LocalComputeUsers = 'admins' | 'all';

/** Rows for the README's configuration table, like SETTINGS in config.ts. */
export const LOCAL_SETTINGS = [
  [
    'ASSAY_LOCAL_COMPUTE_USERS',
    'admins',
    'Whose managed runs the `local` provider starts: `admins`, or `all` (commands run as the service’s OS user)',
  ],
] as const;

export function localComputeUsers(env: Env): LocalComputeUsers {
  const value = text(env, 'ASSAY_LOCAL_COMPUTE_USERS') ?? 'admins';
  if (value !== 'admins' && value !== 'all')
    throw new ConfigError(`ASSAY_LOCAL_COMPUTE_USERS must be admins or all, got ${JSON.stringify(value)}`);
  return value;
}
