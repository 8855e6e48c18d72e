import type { OrganizationRole } from '@assay/contract';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../db/database.ts';
import { conflict, forbidden, notFound } from '../http/errors.ts';
import { iso } from '../http/schemas.ts';
import { ORCHESTRATOR_USER_ID } from '../auth/orchestrator-user.ts';
import * as repo from './organization-repository.ts';

const toApi = (row: repo.OrganizationRow) => ({
  id: row.id,
  slug: row.slug,
  name: row.name,
  role: row.role,
  created_at: iso(row.created_at)!,
});

/** Creates an organization with the caller as its owner. */
export async function createOrganization(
  db: Db,
  principal: Principal,
  input: { slug: string; name: string },
) {
  const row = await db.transaction(async (tx) => {
    const org = await repo.insertOrganization(tx, input);
    if (!org) throw conflict('slug_taken', `an organization with slug ${input.slug} already exists`);
    await repo.insertMembership(tx, org.id, principal.userId, 'owner');
    return org;
  });
  return toApi(row);
}

/** The organization as the caller sees it; 404 unless the caller is a member. */
export async function getOrganization(db: Db, principal: Principal, id: string) {
  const row = await repo.findOrganizationOfMember(db, id, principal.userId);
  if (!row) throw notFound('organization');
  return toApi(row);
}

export async function listMembers(db: Db, principal: Principal, id: string) {
  await getOrganization(db, principal, id);
  const rows = await repo.listMembers(db, id);
  return {
    items: rows.map((r) => ({
      organization_id: id,
      user_id: r.user_id,
      email: r.email,
      name: r.name,
      role: r.role,
      created_at: iso(r.created_at)!,
    })),
  };
}

/**
 * Adds a user (by id or email) to the organization; only its owners may. The answer echoes the request and is
 * the same for an address no one registered (nothing is stored then): a different one would tell owners who
 * has an account. A user already in the organization answers 409; its owners see its members anyway.
 */
export async function addMember(
  db: Db,
  principal: Principal,
  id: string,
  input: { user_id?: string; email?: string; role?: OrganizationRole },
) {
  const org = await getOrganization(db, principal, id);
  if (org.role !== 'owner')
    throw forbidden('not_organization_owner', 'only an owner of the organization can add members');
  const role = input.role ?? 'member';
  // The orchestrator user is no one's colleague: as a member it would see nothing anyway, but it must not
  // look like one.
  const user = await repo.findOtherUser(
    db,
    input.user_id ? { id: input.user_id } : { email: input.email ?? '' },
    ORCHESTRATOR_USER_ID,
  );
  if (user && !(await repo.insertMembership(db, id, user.id, role)))
    throw conflict('already_member', 'the user is already a member of this organization');
  return { organization_id: id, user_id: input.user_id ?? null, email: input.email ?? null, role };
}

export async function myOrganizations(db: Db, principal: Principal) {
  return (await repo.listOrganizationsOf(db, principal.userId)).map(toApi);
}

/** The caller as GET /v1/me shows it: the user, and the token in use. */
export async function getMe(db: Db, principal: Principal) {
  const user = await repo.findUser(db, principal.userId);
  return {
    ...user!,
    auth: {
      via: principal.via,
      key_id: principal.keyId,
      scopes: [...principal.scopes].sort(),
      run_id: principal.runId,
    },
  };
}

/** 404 unless the caller is a member of the organization (null: personal, always allowed). */
export async function setDefaultOrganization(db: Db, principal: Principal, organizationId: string | null) {
  if (!(await repo.setDefaultOrganization(db, principal.userId, organizationId)))
    throw notFound('organization');
  return getMe(db, principal);
}

export async function myScopes(db: Db, principal: Principal) {
  const user = await repo.findUser(db, principal.userId);
  return {
    personal: { user_id: principal.userId },
    default_organization_id: user?.default_organization_id ?? null,
    organizations: await myOrganizations(db, principal),
  };
}
