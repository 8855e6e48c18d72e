import type { Principal } from '../auth/principal.ts';
import type { Db } from '../db/database.ts';
import { AppError } from '../http/errors.ts';
import { iso } from '../http/schemas.ts';
import { resolveOwnerScope } from '../organizations/tenancy.ts';
import { searchAssets } from './search-repository.ts';

/** Searches ready research documents and papers in the caller's scope (see searchAssets for the ranking). */
export async function search(
  db: Db,
  principal: Principal,
  q: { q: string; kind?: string; organization_id?: string; limit?: number },
) {
  const rows = await searchAssets(db, {
    userId: principal.userId,
    runId: principal.runId,
    organizationId: await resolveOwnerScope(db, principal, q.organization_id),
    query: q.q,
    kind: q.kind,
    limit: q.limit ?? 20,
  });
  return {
    query: q.q,
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

export const searchDisabled = () =>
  new AppError(
    503,
    'search_unavailable',
    'full-text search is not configured on this server (ASSAY_SEARCH=off)',
  );
