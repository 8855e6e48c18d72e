import type { Principal } from '../auth/principal.ts';
import type { Db } from '../db/database.ts';
import { decodeCursor, encodeCursor } from '../http/cursor.ts';
import { badRequest, conflict, notFound } from '../http/errors.ts';
import { iso } from '../http/schemas.ts';
import { parseTagFilter } from '../http/tag-filter.ts';
import { resolveOwnerScope } from '../organizations/tenancy.ts';
import * as repo from './experiment-repository.ts';
import { EXPERIMENT_MOVES, type ExperimentMove } from '@assay/contract';

export function toApi(row: repo.ExperimentRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    hypothesis: row.hypothesis,
    state: row.state,
    organization_id: row.organization_id,
    owner_user_id: row.owner_user_id,
    parent_ids: row.parent_ids,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
    committed_at: iso(row.committed_at),
    concluded_at: iso(row.concluded_at),
    retracted_at: iso(row.retracted_at),
    retraction_reason: row.retraction_reason,
    tags: row.tags,
  };
}

export async function createExperiment(
  db: Db,
  principal: Principal,
  input: {
    name: string;
    description?: string;
    hypothesis?: string;
    parent_ids?: string[];
    organization_id?: string;
    tags?: string[];
  },
) {
  const organizationId = await resolveOwnerScope(db, principal, input.organization_id);
  const parentIds = [...new Set(input.parent_ids ?? [])];
  if (parentIds.length > 0) {
    const visible = await repo.visibleIds(db, principal.userId, parentIds);
    const missing = parentIds.filter((id) => !visible.has(id));
    if (missing.length > 0)
      throw badRequest('unknown_parent', `parent experiment not found: ${missing.join(', ')}`, { missing });
  }
  const id = await db.transaction((tx) =>
    repo.insertExperiment(tx, {
      organizationId,
      ownerUserId: principal.userId,
      name: input.name,
      description: input.description ?? '',
      hypothesis: input.hypothesis ?? '',
      parentIds,
      tags: input.tags ?? [],
    }),
  );
  return toApi((await repo.findVisible(db, principal.userId, id))!);
}

export async function getVisibleExperiment(db: Db, principal: Principal, id: string) {
  const row = await repo.findVisible(db, principal.userId, id);
  if (!row) throw notFound('experiment');
  return row;
}

export async function listExperiments(
  db: Db,
  principal: Principal,
  query: {
    organization_id?: string;
    state?: string;
    q?: string;
    tag?: string;
    limit?: number;
    cursor?: string;
  },
) {
  const tags = parseTagFilter(query.tag);
  const organizationId = await resolveOwnerScope(db, principal, query.organization_id);
  const limit = query.limit ?? 50;
  const rows = await repo.listInScope(db, principal.userId, {
    organizationId,
    state: query.state,
    q: query.q,
    ...(tags ? { tags } : {}),
    afterId: decodeCursor(query.cursor),
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  const runCounts = await repo.countRunsByStateOf(
    db,
    page.map((row) => row.id),
  );
  return {
    items: page.map((row) => ({ ...toApi(row), run_counts: runCounts.get(row.id)! })),
    next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]!.id) : null,
  };
}

export async function getExperimentDetail(db: Db, principal: Principal, id: string) {
  const row = await getVisibleExperiment(db, principal, id);
  const [variations, runCounts, parents, children] = await Promise.all([
    repo.listVariationSummaries(db, id),
    repo.countRunsByState(db, id),
    repo.relatives(db, principal.userId, id, 'parents'),
    repo.relatives(db, principal.userId, id, 'children'),
  ]);
  return {
    ...toApi(row),
    variations: variations.map((v) => ({ n: v.n, name: v.name, created_at: iso(v.created_at)! })),
    run_counts: runCounts,
    parents,
    children,
  };
}

export async function editExperiment(
  db: Db,
  principal: Principal,
  id: string,
  patch: { name?: string; description?: string; hypothesis?: string; tags?: string[] },
) {
  // Tags are labels, editable in any state; what the experiment says is frozen by the commit.
  const tagsOnly = Object.keys(patch).every((k) => k === 'tags');
  const updated = tagsOnly
    ? await repo.updateTags(db, principal.userId, id, patch.tags ?? [])
    : await repo.updateDraft(db, principal.userId, id, patch);
  if (updated) return toApi(updated);
  const current = await getVisibleExperiment(db, principal, id);
  throw conflict(
    'experiment_not_draft',
    `only a draft experiment can be edited (its tags can be in any state); this one is ${current.state}`,
    { state: current.state },
  );
}

export async function moveExperiment(
  db: Db,
  principal: Principal,
  id: string,
  move: ExperimentMove,
  reason?: string,
) {
  const moved = await repo.applyMove(db, principal.userId, id, move, reason ?? null);
  if (moved) return toApi(moved);
  const current = await getVisibleExperiment(db, principal, id);
  const { from } = EXPERIMENT_MOVES[move];
  if (move === 'commit' && from.includes(current.state as never)) {
    throw conflict('no_variations', 'an experiment needs at least one variation before it is committed');
  }
  throw conflict('invalid_state_transition', `cannot ${move} an experiment that is ${current.state}`, {
    state: current.state,
    move,
    allowed_from: from,
  });
}
