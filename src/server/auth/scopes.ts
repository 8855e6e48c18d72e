import { SCOPES, type Scope } from '@assay/contract';
import { ORCHESTRATOR_USER_ID } from './orchestrator-user.ts';

/**
 * Every scope but `admin` and `orchestrate`: what an ordinary user (and their identity-provider token) holds.
 */
export const USER_SCOPES: readonly Scope[] = SCOPES.filter((s) => s !== 'admin' && s !== 'orchestrate');

/** An admin holds everything but `orchestrate`, which belongs to the orchestrator user alone. */
export const ADMIN_SCOPES: readonly Scope[] = SCOPES.filter((s) => s !== 'orchestrate');

/** The orchestrator user's only scope: the /orchestrator/* endpoints the workflows' activities call. */
export const ORCHESTRATOR_SCOPES: readonly Scope[] = ['orchestrate'];

/** A worker key reaches only its own run: read its config, move it, upload and read its assets. */
export const WORKER_SCOPES: readonly Scope[] = ['runs:read', 'runs:write', 'assets:read', 'assets:write'];

/** The scopes a user holds, so the most any of their keys or tokens can hold. */
export function scopesOfUser(userId: string, isAdmin: boolean): readonly Scope[] {
  if (userId === ORCHESTRATOR_USER_ID) return ORCHESTRATOR_SCOPES;
  return isAdmin ? ADMIN_SCOPES : USER_SCOPES;
}

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
