import type { Principal } from '../auth/principal.ts';
import type { Db } from '../db/database.ts';
import { getVisibleExperiment } from './experiment-service.ts';
import * as repo from './lineage-repository.ts';

export type Direction = 'ancestors' | 'descendants' | 'both';

/** The lineage graph around one experiment, as far as the caller can see it. */
export async function walkLineage(
  db: Db,
  principal: Principal,
  id: string,
  direction: Direction,
  depth: number,
) {
  const root = await getVisibleExperiment(db, principal, id);
  const walk = (relation: 'ancestor' | 'descendant') =>
    repo.walkRelatives(db, principal.userId, id, relation, depth);
  const ancestors = direction === 'descendants' ? [] : await walk('ancestor');
  const descendants = direction === 'ancestors' ? [] : await walk('descendant');
  const relation = new Map<string, { relation: string; depth: number }>([
    [root.id, { relation: 'self', depth: 0 }],
  ]);
  for (const a of ancestors) relation.set(a.id, { relation: 'ancestor', depth: a.depth });
  for (const d of descendants)
    if (!relation.has(d.id)) relation.set(d.id, { relation: 'descendant', depth: d.depth });
  const ids = [...relation.keys()];
  const [rows, edges] = await Promise.all([repo.findLineageNodes(db, ids), repo.findLineageEdges(db, ids)]);
  const nodes = rows
    .map((r) => ({ ...r, ...relation.get(r.id)! }))
    .sort(
      (a, b) =>
        (a.relation === 'ancestor' ? -a.depth : a.depth) - (b.relation === 'ancestor' ? -b.depth : b.depth) ||
        a.id.localeCompare(b.id),
    );
  return { root_id: root.id, direction, depth, nodes, edges };
}
