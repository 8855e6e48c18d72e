import type { Principal } from '../auth/principal.ts';
import type { Db } from '../db/database.ts';
import { experimentVisible } from '../organizations/tenancy.ts';
import { getVisibleExperiment } from './experiment-service.ts';

export type Direction = 'ancestors' | 'descendants' | 'both';

/**
 * Walks the lineage graph from one experiment. `UNION` (not `UNION ALL`) with a depth bound keeps the walk
 * finite even if the graph had a cycle; only experiments the caller can see are traversed or returned.
 */
export async function walkLineage(
  db: Db,
  principal: Principal,
  id: string,
  direction: Direction,
  depth: number,
) {
  const root = await getVisibleExperiment(db, principal, id);
  const walk = async (relation: 'ancestor' | 'descendant') => {
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
      [principal.userId, id, depth],
    );
  };
  const ancestors = direction === 'descendants' ? [] : await walk('ancestor');
  const descendants = direction === 'ancestors' ? [] : await walk('descendant');
  const relation = new Map<string, { relation: string; depth: number }>([
    [root.id, { relation: 'self', depth: 0 }],
  ]);
  for (const a of ancestors) relation.set(a.id, { relation: 'ancestor', depth: a.depth });
  for (const d of descendants)
    if (!relation.has(d.id)) relation.set(d.id, { relation: 'descendant', depth: d.depth });
  const ids = [...relation.keys()];
  const [rows, edges] = await Promise.all([
    db.query<{ id: string; name: string; state: string }>(
      'SELECT id, name, state FROM experiments WHERE id = ANY($1::uuid[])',
      [ids],
    ),
    db.query<{ parent_id: string; child_id: string }>(
      'SELECT parent_id, child_id FROM experiment_parents WHERE parent_id = ANY($1::uuid[]) AND child_id = ANY($1::uuid[]) ORDER BY parent_id, child_id',
      [ids],
    ),
  ]);
  const nodes = rows
    .map((r) => ({ ...r, ...relation.get(r.id)! }))
    .sort(
      (a, b) =>
        (a.relation === 'ancestor' ? -a.depth : a.depth) - (b.relation === 'ancestor' ? -b.depth : b.depth) ||
        a.id.localeCompare(b.id),
    );
  return { root_id: root.id, direction, depth, nodes, edges };
}
