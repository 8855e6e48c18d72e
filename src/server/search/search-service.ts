import type { Principal } from '../auth/principal.ts';
import type { Db } from '../db/database.ts';
import { AppError } from '../http/errors.ts';
import { iso } from '../http/schemas.ts';
import { resolveOwnerScope } from '../organizations/tenancy.ts';
import { assetVisible } from '../assets/asset-repository.ts';

/**
 * Full-text search over ready research documents and papers with Postgres: websearch syntax ("quoted
 * phrases", -exclusions, or), ranked by ts_rank_cd, with highlighted snippets. The inner query ranks and
 * limits; only the page's rows pay for ts_headline, which reads the whole text.
 */
export async function search(
  db: Db,
  principal: Principal,
  q: { q: string; kind?: string; organization_id?: string; limit?: number },
) {
  const organizationId = await resolveOwnerScope(db, principal, q.organization_id);
  const params: unknown[] = [principal.userId, principal.runId, q.q, q.limit ?? 20];
  const scope =
    organizationId === null
      ? 'a.organization_id IS NULL AND a.owner_user_id = $1'
      : `a.organization_id = $${params.push(organizationId)}`;
  const kind = q.kind ? `AND a.kind = $${params.push(q.kind)}` : '';
  const rows = await db.query<{
    id: string;
    kind: string;
    name: string;
    experiment_id: string | null;
    run_id: string | null;
    created_at: Date;
    rank: number;
    snippet: string;
  }>(
    `WITH query AS (SELECT websearch_to_tsquery('english', $3) AS q),
     hits AS (
       SELECT a.id, ts_rank_cd(a.search_vector, query.q) AS rank
         FROM assets a, query
        WHERE a.search_vector @@ query.q AND a.state = 'ready' AND ${scope} AND ${assetVisible('a', '$1', '$2')} ${kind}
        ORDER BY rank DESC, a.created_at DESC, a.id LIMIT $4
     )
     SELECT a.id, a.kind, a.name, a.experiment_id, a.run_id, a.created_at, hits.rank::float8 AS rank,
            ts_headline('english', COALESCE(NULLIF(a.search_text, ''), a.name), query.q,
                        'StartSel=<mark>, StopSel=</mark>, MaxFragments=2, MaxWords=30, MinWords=8, FragmentDelimiter=" … "') AS snippet
       FROM hits JOIN assets a ON a.id = hits.id, query
      ORDER BY hits.rank DESC, a.created_at DESC, a.id`,
    params,
  );
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
