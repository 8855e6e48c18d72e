import type { Principal } from '../auth/principal.ts';
import type { Queryable } from '../db/database.ts';
import { notFound } from '../http/errors.ts';
import { findDefaultOrganization, isMember } from './organization-repository.ts';

/**
 * The owner scope of a call: an explicit organization (the caller must be a member), `personal`, or else the
 * caller's default organization, or personal when there is none. Null means personal.
 */
export async function resolveOwnerScope(
  db: Queryable,
  principal: Principal,
  organizationId: string | undefined,
): Promise<string | null> {
  if (organizationId === 'personal') return null;
  if (organizationId !== undefined) {
    if (!(await isMember(db, organizationId, principal.userId))) throw notFound('organization');
    return organizationId;
  }
  return findDefaultOrganization(db, principal.userId);
}
