// The local provider's settings: it runs users' commands as the service's own OS user, so who may use it is the operator's call.
import type { Env } from '../settings/env-values.ts';
import { readSetting } from '../settings/read-setting.ts';

/** `admins`: only admins' runs are provisioned on `local`; `all`: every user's (a single-team machine). */
export type LocalComputeUsers = 'admins' | 'all';

export function localComputeUsers(env: Env): LocalComputeUsers {
  return readSetting(env, 'ASSAY_LOCAL_COMPUTE_USERS') as LocalComputeUsers;
}
