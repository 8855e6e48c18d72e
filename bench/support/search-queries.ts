// Timed searches: GET /search over HTTP, and the very SQL the service runs for it, sent straight to PostgreSQL.
import type pg from 'pg';
import { type Dispatcher, request } from 'undici';
import type { Principal } from '../../src/server/auth/principal.ts';
import type { Db } from '../../src/server/db/database.ts';
import { search } from '../../src/server/search/search-service.ts';

export interface Timed {
  ms: number;
  /** Rows answered (at most the page size). */
  items: number;
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
      const result = await pool.query(statement.sql, values);
      return { ms: performance.now() - started, items: result.rowCount ?? 0 };
    },
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

/** One at a time, each query over both paths back to back, which goes first alternating (paired samples). */
export async function runPaired(
  a: Search,
  b: Search,
  queries: readonly string[],
): Promise<{ a: Timed[]; b: Timed[] }> {
  const out = { a: [] as Timed[], b: [] as Timed[] };
  for (const [i, q] of queries.entries()) {
    if (i % 2 === 0) {
      out.a.push(await a(q));
      out.b.push(await b(q));
    } else {
      out.b.push(await b(q));
      out.a.push(await a(q));
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
