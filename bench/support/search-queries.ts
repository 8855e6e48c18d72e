// Timed searches: GET /search over HTTP, and the very SQL the service
// runs for it, sent straight to PostgreSQL.
import type pg from 'pg';
import { type Dispatcher, request } from 'undici';
import type { Principal } from '../../src/server/auth/principal.ts';
import { assetVisible } from '../../src/server/assets/asset-repository.ts';
import type { Db } from '../../src/server/db/database.ts';
import { search } from '../../src/server/search/search-service.ts';

export interface Timed {
  ms: number;
  /** Rows answered (at most the page size). */
  items: number;
  /** The ids answered, best first (SQL paths only). */
  ids?: string[];
}

export type Search = (q: string) => Promise<Timed>;

/** GET /search?q=… as a client sees it: until the JSON answer is read and parsed. */
export function httpSearch(api: { url: string; key: string; dispatcher: Dispatcher }): Search {
  return async (q) => {
    const started = performance.now();
    const res = await request(`${api.url}/search?${new URLSearchParams({ q })}`, {
      dispatcher: api.dispatcher,
      headers: { authorization: `Bearer ${api.key}` },
    });
    const body = (await res.body.json()) as { items: unknown[] };
    const ms = performance.now() - started;
    if (res.statusCode !== 200)
      throw new Error(`GET /search answered ${res.statusCode}: ${JSON.stringify(body)}`);
    return { ms, items: body.items.length };
  };
}

/**
 * The ranking-and-snippet statement of src/server/search/search-service.ts, recorded by running search() once
 * on a recording connection as `userId` (so it is the service's SQL, parameters and all, never a copy), then
 * sent with node-postgres like the service does, one round trip per query with the query text at $3.
 */
export async function sqlSearch(
  pool: pg.Pool,
  userId: string,
): Promise<{ run: Search; sql: string; params: (q: string) => unknown[] }> {
  const recorded: Array<{ sql: string; params: readonly unknown[] }> = [];
  const recording = {
    driver: 'postgres',
    async query(sql: string, params: readonly unknown[] = []) {
      recorded.push({ sql, params });
      return (await pool.query(sql, params as unknown[])).rows;
    },
  } as unknown as Db;
  const principal: Principal = {
    userId,
    via: 'user',
    keyId: null,
    scopes: new Set(),
    isAdmin: true,
    runId: null,
  };
  await search(recording, principal, { q: 'recording' });
  const statement = recorded.find((r) => r.sql.includes('websearch_to_tsquery'));
  if (!statement || statement.params[2] !== 'recording')
    throw new Error('could not record the search statement');
  const params = (q: string) => statement.params.map((p, i) => (i === 2 ? q : p));
  return {
    sql: statement.sql,
    params,
    run: async (q) => {
      const values = params(q);
      const started = performance.now();
      const result = await pool.query<{ id: string }>(statement.sql, values);
      const ms = performance.now() - started;
      return { ms, items: result.rowCount ?? 0, ids: result.rows.map((r) => r.id) };
    },
  };
}

/**
 * The baseline: the statement of src/server/search/search-repository.ts before migration 010 (commit
 * eb1cc34), which picked the candidates by scoring every match on rank_vector, then ranked the best 200 on
 * search_vector. Personal scope, no kind filter, the same parameters as the recorded statement ($1 user, $2
 * run, $3 query, $4 page size).
 */
export const BASELINE_SQL = `WITH query AS (SELECT websearch_to_tsquery('english', $3) AS q),
     candidates AS (
       SELECT a.id, a.created_at
         FROM assets a, query
        WHERE a.search_vector @@ query.q AND a.state = 'ready' AND a.organization_id IS NULL AND a.owner_user_id = $1 AND ${assetVisible('a', '$1', '$2')}
        ORDER BY ts_rank_cd(a.rank_vector, query.q) DESC, a.created_at DESC, a.id LIMIT 200
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
      ORDER BY hits.rank DESC, a.created_at DESC, a.id`;

/** BASELINE_SQL with the recorded statement's parameters (`params` of sqlSearch). */
export function baselineSearch(pool: pg.Pool, params: (q: string) => unknown[]): Search {
  return async (q) => {
    const started = performance.now();
    const result = await pool.query<{ id: string }>(BASELINE_SQL, params(q));
    const ms = performance.now() - started;
    return { ms, items: result.rowCount ?? 0, ids: result.rows.map((r) => r.id) };
  };
}

/** Every query once, `concurrency` in flight; answers each query's timing and the queries per second. */
export async function runAll(
  run: Search,
  queries: readonly string[],
  concurrency: number,
): Promise<{ timings: Timed[]; perSecond: number }> {
  const timings: Timed[] = new Array(queries.length);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < queries.length; i = next++) timings[i] = await run(queries[i]!);
    }),
  );
  return { timings, perSecond: queries.length / ((performance.now() - started) / 1000) };
}

/** One at a time, each query over every path back to back, which goes first rotating (paired samples). */
export async function runPaired(paths: readonly Search[], queries: readonly string[]): Promise<Timed[][]> {
  const out = paths.map(() => [] as Timed[]);
  for (const [i, q] of queries.entries()) {
    for (let k = 0; k < paths.length; k++) {
      const p = (i + k) % paths.length;
      out[p]!.push(await paths[p]!(q));
    }
  }
  return out;
}

/** Matching documents of each query (untimed; the service itself never counts them). */
export async function matchCounts(pool: pg.Pool, queries: readonly string[]): Promise<number[]> {
  const counts: number[] = [];
  for (const q of queries) {
    const rows = await pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM assets WHERE search_vector @@ websearch_to_tsquery('english', $1) AND state = 'ready'`,
      [q],
    );
    counts.push(Number(rows.rows[0]!.n));
  }
  return counts;
}
