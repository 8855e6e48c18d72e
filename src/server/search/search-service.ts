import type { Principal } from '../auth/principal.ts';
import type { Db } from '../db/database.ts';
import { AppError } from '../http/errors.ts';
import { iso } from '../http/schemas.ts';
import { describeOwnerScope, otherOwnerScopes, resolveOwnerScope } from '../organizations/tenancy.ts';
import { countMatches, searchAssets } from './search-repository.ts';

/**
 * Searches ready research documents and papers in the caller's scope (see searchAssets for the ranking). The
 * answer names the scope searched; when nothing matched, it counts the matches in each other scope the caller
 * can search, so that a search in the wrong scope says where the documents are. A worker key sees one run's
 * assets and is told of no other scope.
 */
export async function search(
  db: Db,
  principal: Principal,
  q: { q: string; kind?: string; organization_id?: string; limit?: number },
) {
  const organizationId = await resolveOwnerScope(db, principal, q.organization_id);
  const rows = await searchAssets(db, {
    userId: principal.userId,
    runId: principal.runId,
    organizationId,
    query: q.q,
    kind: q.kind,
    limit: q.limit ?? 20,
  });
  const others =
    rows.length === 0 && principal.runId === null
      ? await otherScopeHits(db, principal, organizationId, q)
      : [];
  return {
    query: q.q,
    scope: await describeOwnerScope(db, principal, organizationId),
    other_scopes: others,
    items: rows.map((r) => ({
      asset_id: r.id,
      kind: r.kind,
      name: r.name,
      experiment_id: r.experiment_id,
      run_id: r.run_id,
      created_at: iso(r.created_at)!,
      rank: r.rank,
      snippet: r.snippet,
    })),
  };
}

async function otherScopeHits(
  db: Db,
  principal: Principal,
  organizationId: string | null,
  q: { q: string; kind?: string },
) {
  const counted = [];
  for (const other of await otherOwnerScopes(db, principal, organizationId)) {
    const hits = await countMatches(db, {
      userId: principal.userId,
      organizationId: other.organizationId,
      query: q.q,
      kind: q.kind,
    });
    if (hits > 0) counted.push({ scope: other.scope, hits });
  }
  return counted;
}

export const searchDisabled = () =>
  new AppError(
    503,
    'search_unavailable',
    'full-text search is not configured on this server (ASSAY_SEARCH=off)',
  );
