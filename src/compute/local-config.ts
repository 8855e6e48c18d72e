// The local provider's settings: whose commands it runs, in which sandbox, with which limits. The service
// (its 422s) and the worker (the provider) read them alike, from the same settings and the same machine.
import type { LaunchAuthor } from '@assay/contract';
import type { Env } from '../settings/env-values.ts';
import { readSetting } from '../settings/read-setting.ts';
import type { LaunchPeople } from './compute-provider.ts';
import { detectLocalLimits, type LocalLimits } from './local-limits.ts';
import { localSandbox, type LocalSandbox } from './local-sandbox.ts';

/** `admins`: only admins' runs are provisioned on `local`; `all`: every user's. */
export type LocalComputeUsers = 'admins' | 'all';

export interface LocalCompute {
  readonly users: LocalComputeUsers;
  readonly sandbox: LocalSandbox;
  readonly limits: LocalLimits;
  /** ASSAY_LOCAL_RUNNER: long-lived slot runners, or a runner spawned per run (local-slots.ts). */
  readonly runners: 'slots' | 'spawn';
}

let limits: LocalLimits | undefined;

/**
 * Whose runs `local` takes: ASSAY_LOCAL_COMPUTE_USERS, else `all` when commands run sandboxed and `admins`
 * when they would run as the service's own user. Throws ConfigError for ASSAY_LOCAL_SANDBOX=on without one.
 */
export function localCompute(env: Env): LocalCompute {
  const sandbox = localSandbox(env);
  const users =
    (readSetting(env, 'ASSAY_LOCAL_COMPUTE_USERS') as LocalComputeUsers | undefined) ??
    (sandbox.mode === 'bwrap' ? 'all' : 'admins');
  limits ??= detectLocalLimits();
  const runners = readSetting(env, 'ASSAY_LOCAL_RUNNER') as 'slots' | 'spawn';
  return { users, sandbox, limits, runners };
}

/** What the operator can do about `admins`; the sandbox's absence is the usual cause. */
function remedy(sandbox: LocalSandbox | undefined): string {
  if (sandbox?.mode === 'bwrap')
    return 'The operator chose this (ASSAY_LOCAL_COMPUTE_USERS=admins); unset it, or set it to all, to let everyone’s sandboxed runs start.';
  const why = sandbox ? ` (no sandbox: ${sandbox.reason})` : '';
  return `The local provider would run the command as the service’s own OS user${why}. The operator can install bubblewrap and run scripts/setup-local-sandbox.sh as root, then restart the service: every researcher’s run is then sandboxed; or set ASSAY_LOCAL_COMPUTE_USERS=all to accept the risk.`;
}

/**
 * Why `local` refuses this launch, or undefined. Under `admins` both the block's author and the provisioning
 * user must be admins: an admin provisioning someone else's command would run it with the service's rights.
 * Checked by the service at provisioning and sweep creation (422) and by the provider itself.
 */
export function localLaunchRefusal(
  users: LocalComputeUsers,
  people: LaunchPeople,
  sandbox?: LocalSandbox,
): string | undefined {
  if (users === 'all') return undefined;
  const author = people.launchAuthor;
  if (!author?.is_admin)
    return `the launch block was written by ${authorName(author)}, who is not an admin, and this server’s local compute runs launch blocks written by admins only, whoever provisions them (ASSAY_LOCAL_COMPUTE_USERS=admins). An admin may review the command and save it as their own. ${remedy(sandbox)}`;
  if (!people.provisionedByAdmin)
    return `this server’s local compute starts admins’ runs only (ASSAY_LOCAL_COMPUTE_USERS=admins). ${remedy(sandbox)}`;
  return undefined;
}

function authorName(author: LaunchAuthor | null): string {
  if (!author) return 'an unknown user (it predates authorship records)';
  return author.email ?? `user ${author.id}`;
}
