// The local provider's settings: it runs users' commands as the service's own OS user, so who may use it is
// the operator's call.
import type { LaunchAuthor } from '@assay/contract';
import type { Env } from '../settings/env-values.ts';
import { readSetting } from '../settings/read-setting.ts';
import type { LaunchPeople } from './compute-provider.ts';

/** `admins`: only admins' runs are provisioned on `local`; `all`: every user's (a single-team machine). */
export type LocalComputeUsers = 'admins' | 'all';

export function localComputeUsers(env: Env): LocalComputeUsers {
  return (readSetting(env, 'ASSAY_LOCAL_COMPUTE_USERS') as LocalComputeUsers | undefined) ?? 'admins';
}

const WHY = 'the local compute provider runs commands as the service’s own OS user';

/**
 * Why `local` refuses this launch, or undefined. Under `admins` both the block's author and the provisioning
 * user must be admins: an admin provisioning someone else's command would run it with the service's rights.
 * Checked by the service at provisioning (422) and by the provider itself.
 */
export function localLaunchRefusal(users: LocalComputeUsers, people: LaunchPeople): string | undefined {
  if (users === 'all') return undefined;
  const author = people.launchAuthor;
  if (!author?.is_admin)
    return `the launch block was written by ${authorName(author)}, who is not an admin; ${WHY}, so it runs launch blocks written by admins only, whoever provisions them (ASSAY_LOCAL_COMPUTE_USERS=admins). An admin may review the command and save it as their own.`;
  if (!people.provisionedByAdmin)
    return `${WHY}, so it starts admins’ runs only (ASSAY_LOCAL_COMPUTE_USERS=admins)`;
  return undefined;
}

function authorName(author: LaunchAuthor | null): string {
  if (!author) return 'an unknown user (it predates authorship records)';
  return author.email ?? `user ${author.id}`;
}
