import type { Queryable, Tx } from '../db/database.ts';

export interface OrganizationRow {
  id: string;
  slug: string;
  name: string;
  role: string;
  created_at: Date;
}

export interface MemberRow {
  user_id: string;
  email: string | null;
  name: string | null;
  role: string;
  created_at: Date;
}

export interface UserRow {
  id: string;
  email: string | null;
  name: string | null;
  is_admin: boolean;
  default_organization_id: string | null;
}

/**
 * SQL predicate: the experiment row aliased `e` belongs to the user bound at `userParam` personally, or to an
 * organization the user is a member of. Every read of tenant data goes through it.
 */
export function experimentVisible(alias: string, userParam: string): string {
  return `((${alias}.organization_id IS NULL AND ${alias}.owner_user_id = ${userParam})
    OR ${alias}.organization_id IN (SELECT m.organization_id FROM memberships m WHERE m.user_id = ${userParam}))`;
}

export async function isMember(db: Queryable, organizationId: string, userId: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM memberships WHERE organization_id = $1 AND user_id = $2', [
    organizationId,
    userId,
  ]);
  return rows.length > 0;
}

/** The user's default organization while they are still a member of it; null otherwise (or none set). */
export async function findDefaultOrganization(db: Queryable, userId: string): Promise<string | null> {
  const rows = await db.query<{ organization_id: string | null }>(
    `SELECT m.organization_id FROM users u
       LEFT JOIN memberships m ON m.organization_id = u.default_organization_id AND m.user_id = u.id
      WHERE u.id = $1`,
    [userId],
  );
  return rows[0]?.organization_id ?? null;
}

/** Undefined when the slug is taken. */
export async function insertOrganization(
  tx: Tx,
  input: { slug: string; name: string },
): Promise<OrganizationRow | undefined> {
  const [org] = await tx.query<OrganizationRow>(
    `INSERT INTO organizations (slug, name) VALUES ($1, $2) ON CONFLICT (slug) DO NOTHING RETURNING id, slug, name, 'owner' AS role, created_at`,
    [input.slug, input.name],
  );
  return org;
}

/** Undefined when the user is a member already. */
export async function insertMembership(
  db: Queryable,
  organizationId: string,
  userId: string,
  role: 'owner' | 'member',
): Promise<{ created_at: Date } | undefined> {
  const [added] = await db.query<{ created_at: Date }>(
    `INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING created_at`,
    [organizationId, userId, role],
  );
  return added;
}

/** The organization with the user's role in it; undefined unless the user is a member. */
export async function findOrganizationOfMember(
  db: Queryable,
  organizationId: string,
  userId: string,
): Promise<OrganizationRow | undefined> {
  const [row] = await db.query<OrganizationRow>(
    `SELECT o.id, o.slug, o.name, m.role, o.created_at FROM organizations o JOIN memberships m ON m.organization_id = o.id AND m.user_id = $2 WHERE o.id = $1`,
    [organizationId, userId],
  );
  return row;
}

export async function listMembers(db: Queryable, organizationId: string): Promise<MemberRow[]> {
  return db.query<MemberRow>(
    `SELECT m.user_id, u.email, u.name, m.role, m.created_at FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_id = $1 ORDER BY m.created_at, m.user_id`,
    [organizationId],
  );
}

export async function listOrganizationsOf(db: Queryable, userId: string): Promise<OrganizationRow[]> {
  return db.query<OrganizationRow>(
    `SELECT o.id, o.slug, o.name, m.role, o.created_at FROM memberships m JOIN organizations o ON o.id = m.organization_id WHERE m.user_id = $1 ORDER BY o.slug`,
    [userId],
  );
}

/** A user by id, or by email ignoring case, other than `excludedId` (the orchestrator user). */
export async function findOtherUser(
  db: Queryable,
  by: { id: string } | { email: string },
  excludedId: string,
): Promise<Pick<UserRow, 'id' | 'email' | 'name'> | undefined> {
  const [user] = await db.query<Pick<UserRow, 'id' | 'email' | 'name'>>(
    'id' in by
      ? 'SELECT id, email, name FROM users WHERE id = $1 AND id <> $2'
      : 'SELECT id, email, name FROM users WHERE lower(email) = lower($1) AND id <> $2',
    ['id' in by ? by.id : by.email, excludedId],
  );
  return user;
}

export async function findUser(db: Queryable, userId: string): Promise<UserRow | undefined> {
  const [user] = await db.query<UserRow>(
    'SELECT id, email, name, is_admin, default_organization_id FROM users WHERE id = $1',
    [userId],
  );
  return user;
}

/** Sets (or with null clears) the default organization; false unless the user is a member of it. */
export async function setDefaultOrganization(
  db: Queryable,
  userId: string,
  organizationId: string | null,
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE users u SET default_organization_id = $2 WHERE u.id = $1
     AND ($2::uuid IS NULL OR EXISTS (SELECT 1 FROM memberships m WHERE m.organization_id = $2 AND m.user_id = $1)) RETURNING id`,
    [userId, organizationId],
  );
  return rows.length > 0;
}
