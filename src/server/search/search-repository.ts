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

/** A lexeme as tsquery's text quotes it (inner quotes doubled), as a regular expression in SQL text. */
const LEXEME = `''(?:[^'']|'''')*''`;
const LEXEME_CAPTURE = `''((?:[^'']|'''')*)''`;
/** Match `m[1]` of LEXEME_CAPTURE unquoted and unescaped: the lexeme (the inverse of what 010's function does). */
const UNQUOTE = String.raw`replace(replace(m[1], '''''', ''''), '\\', '\')`;

/**
 * Full-text search over ready assets in one owner scope (an organization, or null: personal), ranked by
 * ts_rank_cd in two steps so that only RANK_CANDIDATES matches pay for reading their out-of-line full vector,
 * and only the page's rows for ts_headline (docs/architecture.md, "Search ranking", says how and what it
 * trades). A one-lexeme query takes its candidates from search_postings; a worker key (runId) skips them,
 * since it sees a few of the scope's assets and would walk the whole posting range. Both ways apply the same
 * scope, visibility, state and kind rules.
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
  // The asset of posting row `m` if it passes the rules; OFFSET 0 keeps it a lookup per row, in m's order
  // (joined as a whole, the planner may hash every asset row for a few hundred).
  const ruled = (m: string) =>
    `SELECT a.id, a.created_at FROM assets a WHERE a.id = ${m}.asset_id AND ${rules} OFFSET 0`;
  // The postings of the query's lexemes in the scope (none for a worker key), for the ways in below.
  const postings = `search_postings p WHERE p.scope = ${postingScope} AND $2::uuid IS NULL`;
  // Distinct lexemes ORed: ts_rank_cd's covers are then single occurrences, so a document's score is the sum
  // of its lexemes' impacts (to within a float4 rounding), and a match without a posting scores 0. The
  // documents are visited best sum first, until enough pass the rules. Only a query saying "or" can be one;
  // the others are planned without this part.
  const anyWay = /\bor\b/i.test(q.query);
  const postedAny = `posted_any AS (
       SELECT a.id, a.created_at, m.score, NULL::real AS rank
         FROM (SELECT p.asset_id, max(p.created_at) AS created_at, sum(p.impact::float8)::real AS score
                 FROM ${postings} AND p.lexeme = ANY ((SELECT lexemes FROM query WHERE shape = 'any')::text[])
                GROUP BY p.asset_id ORDER BY score DESC, created_at DESC, p.asset_id) m,
              LATERAL (${ruled('m')}) a
        ORDER BY m.score DESC, m.created_at DESC, m.asset_id LIMIT ${RANK_CANDIDATES}
     ),
`;
  // Every match not taken from the postings, scored on rank_vector, when those are fewer than a full set.
  const scanned = (name: string, narrow: string) => `${name} AS (
       SELECT a.id, a.created_at, ts_rank_cd(a.rank_vector, query.q) AS score, NULL::real AS rank
         FROM assets a, query
        WHERE (SELECT count(*) FROM posted) < ${RANK_CANDIDATES} AND ${narrow}
          AND a.search_vector @@ query.q AND ${rules} AND a.id NOT IN (SELECT id FROM posted)
        ORDER BY score DESC, a.created_at DESC, a.id LIMIT ${RANK_CANDIDATES}
     )`;
  // Only a query with a quoted phrase is planned with the pairs' index; `pairs` is null unless the query is
  // one phrase of adjacent lexemes ('a' <-> 'b' <-> …), the pairs in order.
  const phraseWay = q.query.includes('"');
  const pairs = phraseWay
    ? `CASE WHEN w.q::text ~ '^${LEXEME}( <-> ${LEXEME})+$' THEN ARRAY(
                SELECT hashtext(l.lexeme || ' ' || l.next) FROM (
                  SELECT ${UNQUOTE} AS lexeme, lead(${UNQUOTE}) OVER (ORDER BY n) AS next
                    FROM regexp_matches(w.q::text, '${LEXEME_CAPTURE}', 'g') WITH ORDINALITY r(m, n)) l
                 WHERE l.next IS NOT NULL) END`
    : 'NULL::integer[]';
  return db.query<SearchHitRow>(
    `WITH query AS (
       -- The query's distinct lexemes, unquoted and unescaped from tsquery's text (the inverse of what
       -- 010_search_postings.sql does to them), and its shape: one lexeme, or distinct lexemes ORed; null for
       -- anything else (ANDs, phrases, negation, groups), which takes the scan alone.
       SELECT w.q, x.lexemes,
              CASE WHEN numnode(w.q) = 1 AND right(w.q::text, 1) = '''' THEN 'one'
                   WHEN w.q::text ~ '^${LEXEME}( [|] ${LEXEME})+$'
                        AND numnode(w.q) = 2 * cardinality(x.lexemes) - 1 THEN 'any'
              END AS shape,
              ${pairs} AS pairs
         FROM (SELECT websearch_to_tsquery('english', $3) AS q) w,
              LATERAL (SELECT array_agg(DISTINCT ${UNQUOTE}) AS lexemes
                         FROM regexp_matches(w.q::text, '${LEXEME_CAPTURE}', 'g') m) x
     ),
     -- One lexeme: its score on rank_vector is the posting's impact, so the best are the first entries of its
     -- index range, and each posting carries the full-vector rank as well.
     posted_one AS (
       SELECT a.id, a.created_at, p.impact AS score, p.rank
         FROM search_postings p JOIN assets a ON a.id = p.asset_id
        WHERE p.scope = ${postingScope} AND p.lexeme = (SELECT lexemes[1] FROM query WHERE shape = 'one')
          AND $2::uuid IS NULL AND ${rules}
        ORDER BY p.impact DESC, p.created_at DESC, p.asset_id LIMIT ${RANK_CANDIDATES}
     ),
${anyWay ? postedAny : ''}     posted AS (SELECT * FROM posted_one${anyWay ? ' UNION ALL SELECT * FROM posted_any' : ''}),
     ${scanned('scanned', phraseWay ? `(SELECT pairs FROM query) IS NULL` : 'true')},${
       phraseWay
         ? `
     -- A phrase of adjacent words: only documents holding each of its pairs (020_search_phrase_pairs.sql).
     ${scanned('scanned_pairs', 'assay_search_pairs(a.search_vector) @> query.pairs')},`
         : ''
     }
     candidates AS (
       SELECT * FROM posted UNION ALL SELECT * FROM scanned${phraseWay ? ' UNION ALL SELECT * FROM scanned_pairs' : ''}
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

/** The most matches countMatches counts: enough to say "many" without reading a whole scope. */
export const MATCH_COUNT_CAP = 1000;

/**
 * How many ready assets of one owner scope match the query (up to MATCH_COUNT_CAP), by the same scope,
 * visibility, state and kind rules as searchAssets; for user keys only (no run restriction).
 */
export async function countMatches(
  db: Queryable,
  q: { userId: string; organizationId: string | null; query: string; kind: string | undefined },
): Promise<number> {
  const params: unknown[] = [q.userId, q.query];
  const scope =
    q.organizationId === null
      ? 'a.organization_id IS NULL AND a.owner_user_id = $1'
      : `a.organization_id = $${params.push(q.organizationId)}`;
  const kind = q.kind ? `AND a.kind = $${params.push(q.kind)}` : '';
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (
       SELECT 1 FROM assets a
        WHERE a.search_vector @@ websearch_to_tsquery('english', $2) AND a.state = 'ready' AND ${scope}
          AND ${assetVisible('a', '$1', 'NULL')} ${kind}
        LIMIT ${MATCH_COUNT_CAP}
     ) m`,
    params,
  );
  return row?.n ?? 0;
}
