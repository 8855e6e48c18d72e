import type { Principal } from '../auth/principal.ts';
import type { Db } from '../db/database.ts';
import { conflict, forbidden, notFound } from '../http/errors.ts';
import { iso } from '../http/schemas.ts';
import { ORCHESTRATOR_USER_ID } from '../orchestration/orchestrator-user.ts';

interface OrganizationRow {
  id: string;
  slug: string;
  name: string;
  role: string;
  created_at: Date;
}

const toApi = (row: OrganizationRow) => ({
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
    const [org] = await tx.query<OrganizationRow>(
      `INSERT INTO organizations (slug, name) VALUES ($1, $2) ON CONFLICT (slug) DO NOTHING RETURNING id, slug, name, 'owner' AS role, created_at`,
      [input.slug, input.name],
    );
    if (!org) throw conflict('slug_taken', `an organization with slug ${input.slug} already exists`);
    await tx.query(`INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'owner')`, [
      org.id,
      principal.userId,
    ]);
    return org;
  });
  return toApi(row);
}

/** The organization as the caller sees it; 404 unless the caller is a member. */
export async function getOrganization(db: Db, principal: Principal, id: string) {
  const [row] = await db.query<OrganizationRow>(
    `SELECT o.id, o.slug, o.name, m.role, o.created_at FROM organizations o JOIN memberships m ON m.organization_id = o.id AND m.user_id = $2 WHERE o.id = $1`,
    [id, principal.userId],
  );
  if (!row) throw notFound('organization');
  return toApi(row);
}

export async function listMembers(db: Db, principal: Principal, id: string) {
  await getOrganization(db, principal, id);
  const rows = await db.query<{
    user_id: string;
    email: string | null;
    name: string | null;
    role: string;
    created_at: Date;
  }>(
    `SELECT m.user_id, u.email, u.name, m.role, m.created_at FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_id = $1 ORDER BY m.created_at, m.user_id`,
    [id],
  );
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

/** Adds an existing user (by id or email) to the organization; only its owners may. */
export async function addMember(
  db: Db,
  principal: Principal,
  id: string,
  input: { user_id?: string; email?: string; role?: 'owner' | 'member' },
) {
  const org = await getOrganization(db, principal, id);
  if (org.role !== 'owner')
    throw forbidden('not_organization_owner', 'only an owner of the organization can add members');
  // The orchestrator user is no one's colleague: as a member it would see nothing anyway, but it must not look like one.
  const [user] = await db.query<{ id: string; email: string | null; name: string | null }>(
    `SELECT id, email, name FROM users WHERE ${input.user_id ? 'id = $1' : 'lower(email) = lower($1)'} AND id <> $2`,
    [input.user_id ?? input.email, ORCHESTRATOR_USER_ID],
  );
  if (!user) throw notFound('user');
  const role = input.role ?? 'member';
  const [added] = await db.query<{ created_at: Date }>(
    `INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING created_at`,
    [id, user.id, role],
  );
  if (!added) throw conflict('already_member', 'the user is already a member of this organization');
  return {
    organization_id: id,
    user_id: user.id,
    email: user.email,
    name: user.name,
    role,
    created_at: iso(added.created_at)!,
  };
}

export async function myOrganizations(db: Db, principal: Principal) {
  const rows = await db.query<OrganizationRow>(
    `SELECT o.id, o.slug, o.name, m.role, o.created_at FROM memberships m JOIN organizations o ON o.id = m.organization_id WHERE m.user_id = $1 ORDER BY o.slug`,
    [principal.userId],
  );
  return rows.map(toApi);
}
