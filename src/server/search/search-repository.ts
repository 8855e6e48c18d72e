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
 * How many matches are ranked on the full search_vector: the best by rank_vector (name, metadata, the opening
 * of the text; stored in the heap row) among all matches. A page is at most 100 rows.
 */
export const RANK_CANDIDATES = 200;

/**
 * Full-text search over ready assets in one owner scope (an organization, or null: the user's personal
 * ones) with Postgres: websearch syntax ("quoted phrases", -exclusions, or), ranked by ts_rank_cd, with
 * highlighted snippets. Ranking every match on search_vector read each one's out-of-line vector (a common
 * word has tens of thousands of matches), so ranking has two steps: every match is scored on rank_vector,
 * which is in the heap row the match test visits anyway, and only the best RANK_CANDIDATES are ranked on the
 * full vector (a document that holds the words only past the opening of a long text can lose its place to
 * RANK_CANDIDATES better-placed ones; docs/architecture.md says why that trade). Only the page's rows pay
 * for ts_headline, which reads the whole text.
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
     candidates AS (
       SELECT a.id, a.created_at
         FROM assets a, query
        WHERE a.search_vector @@ query.q AND a.state = 'ready' AND ${scope} AND ${assetVisible('a', '$1', '$2')} ${kind}
        ORDER BY ts_rank_cd(a.rank_vector, query.q) DESC, a.created_at DESC, a.id LIMIT ${RANK_CANDIDATES}
     ),
     hits AS (
       SELECT c.id, c.created_at, ts_rank_cd(a.search_vector, query.q) AS rank
         FROM candidates c JOIN assets a ON a.id = c.id, query
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
