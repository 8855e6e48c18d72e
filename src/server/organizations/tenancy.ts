import type { Principal } from '../auth/principal.ts';
import type { Queryable } from '../db/database.ts';
import { notFound } from '../http/errors.ts';
import {
  findDefaultOrganization,
  findOrganizationOfMember,
  isMember,
  listOrganizationsOf,
} from './organization-repository.ts';

/** A scope as answers name it (the contract's OwnerScope): `personal`, or an organization's id, slug and name. */
export interface OwnerScopeRef {
  id: string;
  slug: string | null;
  name: string | null;
}

export const PERSONAL_SCOPE: OwnerScopeRef = { id: 'personal', slug: null, name: null };

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

/** The scope resolveOwnerScope chose, named: so that an answer says where it looked. */
export async function describeOwnerScope(
  db: Queryable,
  principal: Principal,
  organizationId: string | null,
): Promise<OwnerScopeRef> {
  if (organizationId === null) return PERSONAL_SCOPE;
  const org = await findOrganizationOfMember(db, organizationId, principal.userId);
  // resolveOwnerScope checked membership a moment ago; a membership removed since is named by its id alone.
  return { id: organizationId, slug: org?.slug ?? null, name: org?.name ?? null };
}

/** Every scope the caller can act in but `organizationId` (null: personal), personal first. */
export async function otherOwnerScopes(
  db: Queryable,
  principal: Principal,
  organizationId: string | null,
): Promise<Array<{ organizationId: string | null; scope: OwnerScopeRef }>> {
  const orgs = await listOrganizationsOf(db, principal.userId);
  const all = [
    { organizationId: null, scope: PERSONAL_SCOPE },
    ...orgs.map((o) => ({ organizationId: o.id, scope: { id: o.id, slug: o.slug, name: o.name } })),
  ];
  return all.filter((s) => s.organizationId !== organizationId);
}
