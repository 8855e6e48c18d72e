import type { Queryable } from '../db/database.ts';

export interface NewUserRow {
  id: string;
  email: string;
  name: string | null;
  is_admin: boolean;
  created_at: Date;
}

/** Undefined when the email is taken. */
export async function insertUser(
  db: Queryable,
  user: { email: string; name: string | null; isAdmin: boolean },
): Promise<NewUserRow | undefined> {
  const [row] = await db.query<NewUserRow>(
    `INSERT INTO users (email, name, is_admin) VALUES ($1, $2, $3) ON CONFLICT (email) DO NOTHING RETURNING id, email, name, is_admin, created_at`,
    [user.email, user.name, user.isAdmin],
  );
  return row;
}

/** Claims the one-time bootstrap; true for exactly one caller, however many replicas start together. */
export async function claimBootstrapAdmin(db: Queryable): Promise<boolean> {
  const claimed = await db.query(
    `INSERT INTO service_facts (name, value) VALUES ('bootstrap_admin', '{}') ON CONFLICT DO NOTHING RETURNING name`,
  );
  return claimed.length > 0;
}

export async function recordBootstrapAdmin(
  db: Queryable,
  fact: { user_id: string; key_id: string },
): Promise<void> {
  await db.query(`UPDATE service_facts SET value = $1 WHERE name = 'bootstrap_admin'`, [fact]);
}
