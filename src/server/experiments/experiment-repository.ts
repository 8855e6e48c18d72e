import type { Queryable, Tx } from '../db/database.ts';
import { EXPERIMENT_MOVES, type ExperimentMove } from '@assay/contract';
import { experimentVisible } from '../organizations/organization-repository.ts';

export interface ExperimentRow {
  id: string;
  organization_id: string | null;
  owner_user_id: string;
  name: string;
  description: string;
  hypothesis: string;
  state: string;
  parent_ids: string[];
  created_at: Date;
  updated_at: Date;
  committed_at: Date | null;
  concluded_at: Date | null;
  retracted_at: Date | null;
  retraction_reason: string | null;
  tags: string[];
}

// Every query using COLUMNS binds the caller's user id at $1: parents the caller cannot see are left out
// of parent_ids.
const COLUMNS = `e.id, e.organization_id, e.owner_user_id, e.name, e.description, e.hypothesis, e.state,
  ARRAY(SELECT p.parent_id FROM experiment_parents p JOIN experiments pe ON pe.id = p.parent_id
         WHERE p.child_id = e.id AND ${experimentVisible('pe', '$1')} ORDER BY p.parent_id) AS parent_ids,
  e.created_at, e.updated_at, e.committed_at, e.concluded_at, e.retracted_at, e.retraction_reason, e.tags`;

export async function insertExperiment(
  tx: Tx,
  row: {
    organizationId: string | null;
    ownerUserId: string;
    name: string;
    description: string;
    hypothesis: string;
    parentIds: string[];
    tags: string[];
  },
): Promise<string> {
  const [created] = await tx.query<{ id: string }>(
    `INSERT INTO experiments (organization_id, owner_user_id, name, description, hypothesis, tags)
     VALUES ($1, $2, $3, $4, $5, $6::text[]) RETURNING id`,
    [row.organizationId, row.ownerUserId, row.name, row.description, row.hypothesis, row.tags],
  );
  if (row.parentIds.length > 0) {
    await tx.query(`INSERT INTO experiment_parents (child_id, parent_id) SELECT $1, unnest($2::uuid[])`, [
      created!.id,
      row.parentIds,
    ]);
  }
  return created!.id;
}

/** The ids among `ids` that the user can see. */
export async function visibleIds(db: Queryable, userId: string, ids: string[]): Promise<Set<string>> {
  const rows = await db.query<{ id: string }>(
    `SELECT e.id FROM experiments e WHERE e.id = ANY($2::uuid[]) AND ${experimentVisible('e', '$1')}`,
    [userId, ids],
  );
  return new Set(rows.map((r) => r.id));
}

export async function findVisible(
  db: Queryable,
  userId: string,
  id: string,
): Promise<ExperimentRow | undefined> {
  const rows = await db.query<ExperimentRow>(
    `SELECT ${COLUMNS} FROM experiments e WHERE e.id = $2 AND ${experimentVisible('e', '$1')}`,
    [userId, id],
  );
  return rows[0];
}

export async function listInScope(
  db: Queryable,
  userId: string,
  filter: {
    organizationId: string | null;
    state?: string;
    q?: string;
    tags?: string[];
    afterId?: string;
    limit: number;
  },
): Promise<ExperimentRow[]> {
  const params: unknown[] = [userId, filter.limit];
  const where =
    filter.organizationId === null
      ? ['e.organization_id IS NULL AND e.owner_user_id = $1']
      : [`e.organization_id = $${params.push(filter.organizationId)}`, experimentVisible('e', '$1')];
  if (filter.state) where.push(`e.state = $${params.push(filter.state)}`);
  if (filter.tags && filter.tags.length > 0) where.push(`e.tags @> $${params.push(filter.tags)}::text[]`);
  if (filter.q) {
    const pattern = `%${filter.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    where.push(
      `(e.name ILIKE $${params.push(pattern)} OR e.description ILIKE $${params.length} OR e.hypothesis ILIKE $${params.length})`,
    );
  }
  if (filter.afterId) {
    where.push(
      `(e.created_at, e.id) < (SELECT c.created_at, c.id FROM experiments c WHERE c.id = $${params.push(filter.afterId)})`,
    );
  }
  return db.query<ExperimentRow>(
    `SELECT ${COLUMNS} FROM experiments e WHERE ${where.join(' AND ')}
     ORDER BY e.created_at DESC, e.id DESC LIMIT $2`,
    params,
  );
}

export async function updateDraft(
  db: Queryable,
  userId: string,
  id: string,
  patch: { name?: string; description?: string; hypothesis?: string; tags?: string[] },
): Promise<ExperimentRow | undefined> {
  const rows = await db.query<ExperimentRow>(
    `UPDATE experiments e SET name = COALESCE($3, e.name), description = COALESCE($4, e.description),
            hypothesis = COALESCE($5, e.hypothesis), tags = COALESCE($6::text[], e.tags), updated_at = now()
      WHERE e.id = $2 AND e.state = 'draft' AND ${experimentVisible('e', '$1')}
      RETURNING ${COLUMNS}`,
    [userId, id, patch.name ?? null, patch.description ?? null, patch.hypothesis ?? null, patch.tags ?? null],
  );
  return rows[0];
}

/** Replaces the tags of an experiment in any state (labels, not part of what was committed). */
export async function updateTags(
  db: Queryable,
  userId: string,
  id: string,
  tags: string[],
): Promise<ExperimentRow | undefined> {
  const rows = await db.query<ExperimentRow>(
    `UPDATE experiments e SET tags = $3::text[], updated_at = now()
      WHERE e.id = $2 AND ${experimentVisible('e', '$1')}
      RETURNING ${COLUMNS}`,
    [userId, id, tags],
  );
  return rows[0];
}

/**
 * Applies a state move in one conditional UPDATE; undefined when the row is missing or in the wrong state.
 */
export async function applyMove(
  db: Queryable,
  userId: string,
  id: string,
  move: ExperimentMove,
  reason: string | null,
  opts: { searching?: boolean } = {},
): Promise<ExperimentRow | undefined> {
  const { from, to, stamp } = EXPERIMENT_MOVES[move];
  // Committing freezes the variations, so an experiment with none has nothing to run; unless a searching
  // sweep commits it, which adds its trials' variations afterwards.
  const needsVariation =
    move === 'commit' && !opts.searching
      ? 'AND EXISTS (SELECT 1 FROM variations v WHERE v.experiment_id = e.id)'
      : '';
  const rows = await db.query<ExperimentRow>(
    `UPDATE experiments e SET state = $3, ${stamp} = now(), updated_at = now(),
            retraction_reason = COALESCE($5, e.retraction_reason)
      WHERE e.id = $2 AND e.state = ANY($4::text[]) ${needsVariation} AND ${experimentVisible('e', '$1')}
      RETURNING ${COLUMNS}`,
    [userId, id, to, from, reason],
  );
  return rows[0];
}

/** Runs by state of each of the experiments (all four states present, zero when none). */
export async function countRunsByStateOf(
  db: Queryable,
  experimentIds: string[],
): Promise<Map<string, Record<string, number>>> {
  const rows = await db.query<{ experiment_id: string; state: string; count: number }>(
    `SELECT experiment_id, state, count(*)::int AS count FROM runs
      WHERE experiment_id = ANY($1::uuid[]) GROUP BY experiment_id, state`,
    [experimentIds],
  );
  const counts = new Map(
    experimentIds.map((id) => [
      id,
      { pending: 0, running: 0, succeeded: 0, failed: 0 } as Record<string, number>,
    ]),
  );
  for (const row of rows) counts.get(row.experiment_id)![row.state] = row.count;
  return counts;
}

export async function countRunsByState(db: Queryable, experimentId: string): Promise<Record<string, number>> {
  const rows = await db.query<{ state: string; count: number }>(
    'SELECT state, count(*)::int AS count FROM runs WHERE experiment_id = $1 GROUP BY state',
    [experimentId],
  );
  const counts: Record<string, number> = { pending: 0, running: 0, succeeded: 0, failed: 0 };
  for (const row of rows) counts[row.state] = row.count;
  return counts;
}

export async function relatives(db: Queryable, userId: string, id: string, relation: 'parents' | 'children') {
  const [mine, theirs] = relation === 'parents' ? ['child_id', 'parent_id'] : ['parent_id', 'child_id'];
  return db.query<{ id: string; name: string; state: string }>(
    `SELECT e.id, e.name, e.state FROM experiment_parents p JOIN experiments e ON e.id = p.${theirs}
      WHERE p.${mine} = $2 AND ${experimentVisible('e', '$1')} ORDER BY e.created_at, e.id`,
    [userId, id],
  );
}

export async function countVariations(db: Queryable, experimentId: string): Promise<number> {
  const [row] = await db.query<{ count: number }>(
    'SELECT count(*)::int AS count FROM variations WHERE experiment_id = $1',
    [experimentId],
  );
  return row?.count ?? 0;
}

/** The experiment's variations as its detail lists them (numbers and names, not their configs). */
export async function listVariationSummaries(
  db: Queryable,
  experimentId: string,
): Promise<{ n: number; name: string; created_at: Date }[]> {
  return db.query<{ n: number; name: string; created_at: Date }>(
    'SELECT n, name, created_at FROM variations WHERE experiment_id = $1 ORDER BY n',
    [experimentId],
  );
}
