import type { Queryable } from '../db/database.ts';
import { assetVisible } from '../assets/asset-repository.ts';

export interface SearchHitRow {
  id: string;
  kind: string;
  name: string;
  experiment_id: string | null;
  run_id: string | null;
  created_at: Date;
  rank: number;
  snippet: string;
}

/**
 * Full-text search over ready assets in one owner scope (an organization, or null: the user's personal
 * ones) with Postgres: websearch syntax ("quoted phrases", -exclusions, or), ranked by ts_rank_cd, with
 * highlighted snippets. The inner query ranks and limits; only the page's rows pay for ts_headline, which
 * reads the whole text.
 */
export async function searchAssets(
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
  const scope =
    q.organizationId === null
      ? 'a.organization_id IS NULL AND a.owner_user_id = $1'
      : `a.organization_id = $${params.push(q.organizationId)}`;
  const kind = q.kind ? `AND a.kind = $${params.push(q.kind)}` : '';
  return db.query<SearchHitRow>(
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
}
