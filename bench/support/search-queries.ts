// Timed searches: GET /search over HTTP, and the very SQL the service
// runs for it, sent straight to PostgreSQL.
import type pg from 'pg';
import { type Dispatcher, request } from 'undici';
import type { Principal } from '../../src/server/auth/principal.ts';
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

/** GET /search?q=… (and `kind`) as a client sees it: until the JSON answer is read and parsed. */
export function httpSearch(api: { url: string; key: string; dispatcher: Dispatcher }, kind?: string): Search {
  return async (q) => {
    const started = performance.now();
    const res = await request(`${api.url}/search?${new URLSearchParams({ q, ...(kind ? { kind } : {}) })}`, {
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

/** A search of the service's shape: the ranking-and-snippet statement, sent through `db`. */
export type SearchStatement = (
  db: Db,
  principal: Principal,
  q: { q: string; kind?: string },
) => Promise<unknown>;

/** The service's own search (src/server/search/search-service.ts), as of this checkout. */
export const serviceSearch: SearchStatement = (db, principal, q) => search(db, principal, q);

/**
 * The ranking-and-snippet statement of `statement` (the service's search by default), recorded by running it
 * once on a recording connection as `userId` with the query `sample` (so it is that code's SQL for such
 * queries, parameters and all, never a copy), then sent with node-postgres as a named (prepared) statement like the service does, one round trip per
 * query with the query text at $3.
 */
export async function sqlSearch(
  pool: pg.Pool,
  userId: string,
  o: { statement?: SearchStatement; kind?: string; name?: string; sample?: string } = {},
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
  const sample = o.sample ?? 'recording';
  await (o.statement ?? serviceSearch)(recording, principal, { q: sample, kind: o.kind });
  const statement = recorded.find((r) => r.sql.includes('websearch_to_tsquery'));
  if (!statement || statement.params[2] !== sample) throw new Error('could not record the search statement');
  const params = (q: string) => statement.params.map((p, i) => (i === 2 ? q : p));
  const name = `bench_${o.name ?? 'search'}_${o.kind ?? 'any'}`;
  return {
    sql: statement.sql,
    params,
    run: async (q) => {
      const values = params(q);
      const started = performance.now();
      const result = await pool.query<{ id: string }>({ name, text: statement.sql, values });
      const ms = performance.now() - started;
      return { ms, items: result.rowCount ?? 0, ids: result.rows.map((r) => r.id) };
    },
  };
}

/** A plain indexed lookup of one asset by id, the same round trip: the guard's yardstick for the machine. */
export function lookupById(pool: pg.Pool, ids: readonly string[]): Search {
  let next = 0;
  return async () => {
    const started = performance.now();
    const result = await pool.query({
      name: 'bench_lookup',
      text: 'SELECT id, name, created_at FROM assets WHERE id = $1',
      values: [ids[next++ % ids.length]],
    });
    return { ms: performance.now() - started, items: result.rowCount ?? 0 };
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
