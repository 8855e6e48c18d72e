import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.ts';

/**
 * This deployment's installation id, made by the first start that asks. Replicas starting at once agree on
 * the row that won the insert: a loser's statement may not see it (its snapshot predates the winner's
 * commit), so it reads again.
 */
export async function ensureInstallationId(db: Queryable): Promise<string> {
  for (;;) {
    const rows = await db.query<{ installation_id: string }>(
      `WITH made AS (
         INSERT INTO deployment (singleton, installation_id) VALUES (true, $1)
         ON CONFLICT (singleton) DO NOTHING RETURNING installation_id)
       SELECT installation_id FROM made UNION ALL SELECT installation_id FROM deployment LIMIT 1`,
      [randomUUID()],
    );
    if (rows[0]) return rows[0].installation_id;
  }
}
