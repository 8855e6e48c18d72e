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
 * word has tens of thousands of matches), so ranking has two steps. First the best RANK_CANDIDATES matches by
 * ts_rank_cd on rank_vector (name, metadata, the opening of the text); then those are ranked on the full
 * vector (a document that holds the words only past the opening of a long text can lose its place to
 * RANK_CANDIDATES better-placed ones; docs/architecture.md says why that trade). Only the page's rows pay for
 * ts_headline, which reads the whole text.
 *
 * The first step has two ways in, which pick the same candidates in the same order:
 * - a query of one lexeme reads them from search_postings (migration 010_search_postings.sql), whose index
 *   holds each document's rank_vector score for each of its lexemes in candidate order, so the best are the
 *   first entries of one index range however many documents match; each posting also carries the lexeme's
 *   ts_rank_cd on the full search_vector, the second step's rank, so those candidates need no out-of-line read;
 * - fewer than RANK_CANDIDATES postings (a rare word, or any other query: no lexeme, no postings) means the
 *   rest come from the match test over every matching row, scored on rank_vector, as before: for one lexeme
 *   they are the matches without a posting, which hold the word only past the opening and score 0. A worker
 *   key (runId) sees only its run's assets, a few among the scope's: it skips the postings, whose range it
 *   would walk to the end, and takes the scan.
 * Both join each candidate to its asset row and apply the same scope, visibility, state and kind rules.
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
        ORDER BY p.impact DESC, p.created_at DESC, p.asset_id LIMIT ${RANK_CANDIDATES}
     ),
     scanned AS (
       SELECT a.id, a.created_at, ts_rank_cd(a.rank_vector, query.q) AS score, NULL::real AS rank
         FROM assets a, query
        WHERE (SELECT count(*) FROM posted) < ${RANK_CANDIDATES}
          AND a.search_vector @@ query.q AND ${rules} AND a.id NOT IN (SELECT id FROM posted)
        ORDER BY score DESC, a.created_at DESC, a.id LIMIT ${RANK_CANDIDATES}
     ),
     candidates AS (
       SELECT * FROM posted UNION ALL SELECT * FROM scanned
        ORDER BY score DESC, created_at DESC, id LIMIT ${RANK_CANDIDATES}
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
