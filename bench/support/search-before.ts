// The search statement as it was before issue #27's search work (commit cc52ae7, migration 010's two-step
// ranking): bench/search.ts sends it beside the service's current one, on the same table in the same run.
// A copy of src/server/search/search-repository.ts searchAssets at that commit, SQL and all.
import { assetVisible } from '../../src/server/assets/asset-repository.ts';
import type { Queryable } from '../../src/server/db/database.ts';
import type { SearchHitRow } from '../../src/server/search/search-repository.ts';

/**
 * Full-text search over ready assets in one owner scope (an organization, or null: personal), ranked by
 * ts_rank_cd in two steps so that only RANK_CANDIDATES matches pay for reading their out-of-line full vector,
 * and only the page's rows for ts_headline (docs/architecture.md, "Search ranking", says how and what it
 * trades). A one-lexeme query takes its candidates from search_postings; a worker key (runId) skips them,
 * since it sees a few of the scope's assets and would walk the whole posting range. Both ways apply the same
 * scope, visibility, state and kind rules.
 */
export async function searchAssetsBefore(
  db: Queryable,
  q: {
    userId: string;
    runId: string | null;
    organizationId: string | null;
    query: string;
    kind: string | undefined;
    limit: number;
  },
): Promise<SearchHitRow[]> {
  const params: unknown[] = [q.userId, q.runId, q.query, q.limit];
  // search_postings.scope: the organization, or for personal assets the owner ($1).
  const [scope, postingScope] =
    q.organizationId === null
      ? ['a.organization_id IS NULL AND a.owner_user_id = $1', '$1']
      : [`a.organization_id = $${params.push(q.organizationId)}`, `$${params.length}`];
  const kind = q.kind ? `AND a.kind = $${params.push(q.kind)}` : '';
  const rules = `a.state = 'ready' AND ${scope} AND ${assetVisible('a', '$1', '$2')} ${kind}`;
  return db.query<SearchHitRow>(
    `WITH query AS (
       -- The lexeme of a query that is one lexeme, unquoted and unescaped from tsquery's text (the inverse of
       -- what 010_search_postings.sql does to it); null for any other query.
       SELECT w.q, CASE WHEN numnode(w.q) = 1 AND right(w.q::text, 1) = ''''
                        THEN replace(replace(substr(w.q::text, 2, length(w.q::text) - 2), '''''', ''''), '\\\\', '\\') END AS lexeme
         FROM (SELECT websearch_to_tsquery('english', $3) AS q) w
     ),
     posted AS (
       SELECT a.id, a.created_at, p.impact AS score, p.rank
         FROM search_postings p JOIN assets a ON a.id = p.asset_id
        WHERE p.scope = ${postingScope} AND p.lexeme = (SELECT lexeme FROM query) AND $2::uuid IS NULL AND ${rules}
        ORDER BY p.impact DESC, p.created_at DESC, p.asset_id LIMIT 200
     ),
     scanned AS (
       SELECT a.id, a.created_at, ts_rank_cd(a.rank_vector, query.q) AS score, NULL::real AS rank
         FROM assets a, query
        WHERE (SELECT count(*) FROM posted) < 200
          AND a.search_vector @@ query.q AND ${rules} AND a.id NOT IN (SELECT id FROM posted)
        ORDER BY score DESC, a.created_at DESC, a.id LIMIT 200
     ),
     candidates AS (
       SELECT * FROM posted UNION ALL SELECT * FROM scanned
        ORDER BY score DESC, created_at DESC, id LIMIT 200
     ),
     hits AS (
       -- A posting carries the rank; a scanned candidate's is read from its search_vector.
       SELECT c.id, c.created_at,
              COALESCE(c.rank, (SELECT ts_rank_cd(a.search_vector, query.q) FROM assets a WHERE a.id = c.id)) AS rank
         FROM candidates c, query
        ORDER BY rank DESC, c.created_at DESC, c.id LIMIT $4
     )
     SELECT a.id, a.kind, a.name, a.experiment_id, a.run_id, a.created_at, hits.rank::float8 AS rank,
            ts_headline('english', COALESCE(NULLIF(a.search_text, ''), a.name), query.q,
                        'StartSel=<mark>, StopSel=</mark>, MaxFragments=2, MaxWords=30, MinWords=8, FragmentDelimiter=" … "') AS snippet
       FROM hits JOIN assets a ON a.id = hits.id, query
      ORDER BY hits.rank DESC, a.created_at DESC, a.id`,
    params,
  );
}
