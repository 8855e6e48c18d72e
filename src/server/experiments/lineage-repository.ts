import type { Queryable } from '../db/database.ts';
import { experimentVisible } from '../organizations/organization-repository.ts';

/**
 * Walks the lineage graph from one experiment towards its ancestors or descendants, each with its shortest
 * depth. `UNION` (not `UNION ALL`) with a depth bound keeps the walk finite even if the graph had a cycle;
 * only experiments the user can see are traversed or returned.
 */
export async function walkRelatives(
  db: Queryable,
  userId: string,
  id: string,
  relation: 'ancestor' | 'descendant',
  depth: number,
): Promise<{ id: string; depth: number }[]> {
  const [from, to] = relation === 'ancestor' ? ['child_id', 'parent_id'] : ['parent_id', 'child_id'];
  return db.query<{ id: string; depth: number }>(
    `WITH RECURSIVE walk(id, depth) AS (
       SELECT $2::uuid, 0
       UNION
       SELECT l.${to}, w.depth + 1 FROM walk w
         JOIN experiment_parents l ON l.${from} = w.id
         JOIN experiments e ON e.id = l.${to}
        WHERE w.depth < $3 AND ${experimentVisible('e', '$1')}
     )
     SELECT id, min(depth)::int AS depth FROM walk WHERE depth > 0 GROUP BY id`,
    [userId, id, depth],
  );
}

/** Names and states of experiments already known to be visible (the walk's result). */
export async function findLineageNodes(
  db: Queryable,
  ids: string[],
): Promise<{ id: string; name: string; state: string }[]> {
  return db.query<{ id: string; name: string; state: string }>(
    'SELECT id, name, state FROM experiments WHERE id = ANY($1::uuid[])',
    [ids],
  );
}

/** The parent links among the given experiments. */
export async function findLineageEdges(
  db: Queryable,
  ids: string[],
): Promise<{ parent_id: string; child_id: string }[]> {
  return db.query<{ parent_id: string; child_id: string }>(
    'SELECT parent_id, child_id FROM experiment_parents WHERE parent_id = ANY($1::uuid[]) AND child_id = ANY($1::uuid[]) ORDER BY parent_id, child_id',
    [ids],
  );
}
