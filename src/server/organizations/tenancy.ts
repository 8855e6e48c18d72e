import type { Principal } from '../auth/principal.ts';
import type { Queryable } from '../db/database.ts';
import { notFound } from '../http/errors.ts';

/**
 * SQL predicate: the experiment row aliased `e` belongs to the user bound at `userParam` personally, or to an
 * organization the user is a member of. Every read of tenant data goes through it.
 */
export function experimentVisible(alias: string, userParam: string): string {
  return `((${alias}.organization_id IS NULL AND ${alias}.owner_user_id = ${userParam})
    OR ${alias}.organization_id IN (SELECT m.organization_id FROM memberships m WHERE m.user_id = ${userParam}))`;
}

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
    const member = await db.query('SELECT 1 FROM memberships WHERE organization_id = $1 AND user_id = $2', [
      organizationId,
      principal.userId,
    ]);
    if (member.length === 0) throw notFound('organization');
    return organizationId;
  }
  const rows = await db.query<{ organization_id: string | null }>(
    `SELECT m.organization_id FROM users u
       LEFT JOIN memberships m ON m.organization_id = u.default_organization_id AND m.user_id = u.id
      WHERE u.id = $1`,
    [principal.userId],
  );
  return rows[0]?.organization_id ?? null;
}
