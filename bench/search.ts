// Full-text search over a generated corpus on the real service: ingest rate (every write also files its
// postings, migration 010's trigger), GIN index build, the cost of migration 007's rank_vector backfill and
// of migration 010's posting backfill, and p50/p95 of GET /search against the same SQL sent straight to
// PostgreSQL and against the statement before migration 010 (the baseline), in the same run. Prints figures
// (not a test).
// Run: node bench/search.ts [--docs 100000] [--api-docs 2000] [--indexed-docs 10000] [--queries 300]
//   [--concurrency 4]
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { Agent } from 'undici';
import { type QueryKind, queries, vocabulary } from './support/corpus.ts';
import { startBenchService } from './support/bench-service.ts';
import { explainSearch } from './support/explain.ts';
import { machine, ms, options, publish, quantile, table } from './support/report.ts';
import { UNDO_MIGRATION_010 } from '../test/support/search-postings.ts';
import {
  insertDocuments,
  postDocument,
  postDocuments,
  verifySearchVectors,
} from './support/search-ingest.ts';
import {
  BASELINE_SQL,
  baselineSearch,
  httpSearch,
  matchCounts,
  runAll,
  runPaired,
  sqlSearch,
  type Timed,
} from './support/search-queries.ts';

const o = options(process.argv.slice(2), {
  docs: 100_000,
  'api-docs': 2000,
  'indexed-docs': 10_000,
  queries: 300,
  concurrency: 4,
  seed: 42,
  vocabulary: 50_000,
});
const KINDS: QueryKind[] = ['one-word', 'phrase', 'three-word'];
const apiDocs = Math.min(o['api-docs'], o.docs);
const indexedDocs = Math.min(o['indexed-docs'], o.docs - apiDocs);
const bulkFrom = apiDocs;
const indexFrom = o.docs - indexedDocs;
const log = (line: string) => console.log(`[search] ${line}`);
const seconds = (since: number) => (performance.now() - since) / 1000;

const v = vocabulary(o.seed, o.vocabulary);
const service = await startBenchService('search');
const dispatcher = new Agent({ connections: o.concurrency });
const api = { url: service.url, key: service.key, dispatcher };
const pool = new pg.Pool({ connectionString: service.databaseUrl, max: o.concurrency });
try {
  // Document 0 through the API tells who owns what the bulk load writes.
  const probe = await postDocument(api, v, o.seed, 0);
  const owner = (
    await pool.query<{ organization_id: string | null; owner_user_id: string }>(
      'SELECT organization_id, owner_user_id FROM assets WHERE id = $1',
      [probe],
    )
  ).rows[0]!;

  log(`bulk insert of documents ${bulkFrom}…${indexFrom - 1} without the GIN index`);
  await pool.query('DROP INDEX assets_search');
  const bulkS = await insertDocuments(
    pool,
    v,
    o.seed,
    { organizationId: owner.organization_id, ownerUserId: owner.owner_user_id },
    bulkFrom,
    indexFrom,
  );
  const maintenanceWorkMem = (
    await pool.query<{ m: string }>("SELECT current_setting('maintenance_work_mem') AS m")
  ).rows[0]!.m;
  log(`GIN index build over ${indexFrom} rows (maintenance_work_mem ${maintenanceWorkMem})`);
  let started = performance.now();
  await pool.query('CREATE INDEX assets_search ON assets USING GIN (search_vector)'); // as in 002_assets.sql
  const indexS = seconds(started);
  log(`bulk insert of documents ${indexFrom}…${o.docs - 1} with the index present`);
  const indexedS = await insertDocuments(
    pool,
    v,
    o.seed,
    { organizationId: owner.organization_id, ownerUserId: owner.owner_user_id },
    indexFrom,
    o.docs,
  );

  log(`API ingest of documents 1…${apiDocs - 1}: half one at a time, half ${o.concurrency} at a time`);
  const half = Math.ceil(apiDocs / 2);
  const sequential = await postDocuments(api, v, o.seed, 1, half, 1);
  const concurrent = await postDocuments(api, v, o.seed, half, apiDocs, o.concurrency);
  const mismatched = await verifySearchVectors(pool, [probe, ...sequential.ids, ...concurrent.ids]);
  if (mismatched > 0)
    throw new Error(
      `${mismatched} service-indexed rows differ from the bulk load's search_vector expression`,
    );
  // Migrations 007 and 010 as an upgrade from before 007 runs them on a table that already holds these rows:
  // 010's objects go first (the postings the load filed with them), then 007's backfill (it recomputes the
  // same rank_vector the load wrote), then all of 010 (its backfill rewrites the same postings), then the
  // VACUUM that takes the dead row versions away.
  const migration = async (file: string) =>
    readFile(new URL(`../src/server/db/migrations/${file}`, import.meta.url), 'utf8');
  const filed = await pool.query<{ n: string }>('SELECT count(*) AS n FROM search_postings');
  await pool.query(UNDO_MIGRATION_010);
  const m007 = await migration('007_search_rank.sql');
  log(`migration 007 backfill (its UPDATE) over ${o.docs} rows`);
  started = performance.now();
  await pool.query(m007.slice(m007.indexOf('UPDATE assets')));
  const backfillS = seconds(started);
  log(`migration 010 (posting table, triggers, backfill, indexes) over ${o.docs} rows`);
  started = performance.now();
  await pool.query(`BEGIN; ${await migration('010_search_postings.sql')}; COMMIT`);
  const postingsS = seconds(started);
  const refiled = await pool.query<{ n: string }>('SELECT count(*) AS n FROM search_postings');
  if (refiled.rows[0]!.n !== filed.rows[0]!.n)
    throw new Error(`the load filed ${filed.rows[0]!.n} postings, the backfill ${refiled.rows[0]!.n}`);
  started = performance.now();
  await pool.query('VACUUM ANALYZE assets, search_postings');
  const vacuumS = seconds(started);
  const sizes = (
    await pool.query<{
      rows: string;
      table: string;
      heap: string;
      index: string;
      vector: number;
      rankVector: number;
      text: number;
      buffers: string;
      postings: string;
      postingsTable: string;
      postingsIndex: string;
    }>(
      `SELECT count(*) AS rows, pg_size_pretty(pg_total_relation_size('assets')) AS table, pg_size_pretty(pg_relation_size('assets')) AS heap,
            pg_size_pretty(pg_relation_size('assets_search')) AS index, avg(pg_column_size(search_vector))::int AS vector,
            avg(pg_column_size(rank_vector))::int AS "rankVector", avg(pg_column_size(search_text))::int AS text, current_setting('shared_buffers') AS buffers,
            (SELECT count(*) FROM search_postings) AS postings, pg_size_pretty(pg_relation_size('search_postings')) AS "postingsTable",
            pg_size_pretty(pg_relation_size('search_postings_top')) || ' + ' || pg_size_pretty(pg_relation_size('search_postings_asset')) AS "postingsIndex"
       FROM assets`,
    )
  ).rows[0]!;

  const sql = await sqlSearch(pool, owner.owner_user_id);
  const http = httpSearch(api);
  const before = baselineSearch(pool, sql.params);
  const rows: string[][] = [];
  const concurrentRows: string[][] = [];
  const slowest: string[] = [];
  for (const kind of KINDS) {
    const list = queries(v, o.seed, o.docs, kind, o.queries);
    const warm = list.slice(0, 20);
    await runPaired([http, sql.run, before], warm);
    log(
      `${kind}: ${list.length} queries, one at a time (HTTP, SQL and the baseline SQL paired), then ${o.concurrency} at a time`,
    );
    const [httpP, sqlP, beforeP] = await runPaired([http, sql.run, before], list);
    const paired = { a: httpP!, b: sqlP! };
    const httpC = await runAll(http, list, o.concurrency);
    const sqlC = await runAll(sql.run, list, o.concurrency);
    const beforeC = await runAll(before, list, o.concurrency);
    const counts = await matchCounts(pool, list);
    // How much of the baseline's page the new statement keeps (the two pick the same candidates by design).
    const kept = beforeP!.map((b, i) => {
      const mine = new Set(paired.b[i]!.ids);
      return b.ids!.length === 0 ? 1 : b.ids!.filter((id) => mine.has(id)).length / b.ids!.length;
    });
    const samePage = beforeP!.filter((b, i) => b.ids!.join() === paired.b[i]!.ids!.join()).length;
    const worst = paired.b.reduce((w, t, i) => (t.ms > paired.b[w]!.ms ? i : w), 0);
    const worstBefore = beforeP!.reduce((w, t, i) => (t.ms > beforeP![w]!.ms ? i : w), 0);
    slowest.push(
      `- ${kind}, \`${list[worst]}\` (${ms(paired.b[worst]!.ms)} ms as SQL): ${await explainSearch(pool, sql.sql, sql.params(list[worst]!))}.`,
      `- ${kind}, baseline, \`${list[worstBefore]}\` (${ms(beforeP![worstBefore]!.ms)} ms): ${await explainSearch(pool, BASELINE_SQL, sql.params(list[worstBefore]!))}.`,
    );
    const p = (t: Timed[], q: number) =>
      quantile(
        t.map((x) => x.ms),
        q,
      );
    const ratio = (a: Timed[], b: Timed[], q: number) => (p(a, q) / p(b, q)).toFixed(2);
    const example = list.slice(0, 2).join(', ');
    rows.push([
      `${kind} (${example}, …)`,
      `${quantile(counts, 0.5)} / ${quantile(counts, 0.95)} / ${Math.max(...counts)}`,
      (paired.a.reduce((s, t) => s + t.items, 0) / list.length).toFixed(1),
      `${ms(p(paired.a, 0.5))} / ${ms(p(paired.a, 0.95))}`,
      `${ms(p(paired.b, 0.5))} / ${ms(p(paired.b, 0.95))}`,
      `${ms(p(beforeP!, 0.5))} / ${ms(p(beforeP!, 0.95))}`,
      `${ratio(beforeP!, paired.b, 0.5)} / ${ratio(beforeP!, paired.b, 0.95)}`,
      `${((kept.reduce((x, y) => x + y, 0) / kept.length) * 100).toFixed(1)} % / ${samePage} of ${list.length}`,
    ]);
    concurrentRows.push([
      kind,
      `${ms(p(httpC.timings, 0.5))} / ${ms(p(httpC.timings, 0.95))}`,
      httpC.perSecond.toFixed(0),
      `${ms(p(sqlC.timings, 0.5))} / ${ms(p(sqlC.timings, 0.95))}`,
      sqlC.perSecond.toFixed(0),
      `${ms(p(beforeC.timings, 0.5))} / ${ms(p(beforeC.timings, 0.95))}`,
      beforeC.perSecond.toFixed(0),
      `${ratio(beforeC.timings, sqlC.timings, 0.5)} / ${ratio(beforeC.timings, sqlC.timings, 0.95)}`,
    ]);
  }

  const pgVersion = (await pool.query<{ v: string }>("SELECT current_setting('server_version') AS v"))
    .rows[0]!.v;
  const docsPerS = (n: number, s: number) => (n / s).toFixed(0);
  await publish(
    'search',
    `### Search: ${o.docs.toLocaleString('en')} documents (${new Date().toISOString().slice(0, 10)})

Command: \`${['node bench/search.ts', ...process.argv.slice(2)].join(' ')}\` · ${machine()} · PostgreSQL ${pgVersion}.
Corpus (seed ${o.seed}): ${o.vocabulary.toLocaleString('en')} made-up content words after 76 English stop words, Zipf (s = 1) over all of
them; each document a 3–7 word name, metadata \`{project, tags[3]}\`, and 80–400 words of text. ${Number(sizes.rows).toLocaleString('en')} rows:
table ${sizes.table} with TOAST (heap ${sizes.heap}; search_vector ${sizes.vector} B and search_text ${sizes.text} B on average, both
stored out of line; rank_vector ${sizes.rankVector} B, in the heap row), GIN index ${sizes.index}; search_postings (migration 010) ${Number(sizes.postings).toLocaleString('en')} rows,
${sizes.postingsTable} heap, indexes ${sizes.postingsIndex} (candidate order + by asset); shared_buffers ${sizes.buffers}. The service runs as its own process
(\`assay server\`, log level info, orchestrator off) on a fresh database; queries go over keep-alive HTTP (undici).

Ingest:

${table(
  ['Path', 'Documents', 'Time', 'Rate'],
  [
    [
      '\`POST /assets\` inline \`document\`, one at a time',
      String(half - 1),
      `${sequential.seconds.toFixed(1)} s`,
      `${docsPerS(half - 1, sequential.seconds)} docs/s`,
    ],
    [
      `\`POST /assets\` inline \`document\`, ${o.concurrency} at a time`,
      String(apiDocs - half),
      `${concurrent.seconds.toFixed(1)} s`,
      `${docsPerS(apiDocs - half, concurrent.seconds)} docs/s`,
    ],
    [
      'SQL \`INSERT … SELECT FROM unnest\` (2,000 per statement), no GIN index',
      String(indexFrom - bulkFrom),
      `${bulkS.toFixed(1)} s`,
      `${docsPerS(indexFrom - bulkFrom, bulkS)} docs/s`,
    ],
    [
      'SQL, same, GIN index present',
      String(indexedDocs),
      `${indexedS.toFixed(1)} s`,
      `${docsPerS(indexedDocs, indexedS)} docs/s`,
    ],
  ],
)}

GIN index build (\`CREATE INDEX assets_search … USING GIN (search_vector)\` over ${indexFrom.toLocaleString('en')} rows,
maintenance_work_mem ${maintenanceWorkMem}): **${indexS.toFixed(1)} s**. Migration 007's backfill (its \`UPDATE assets SET rank_vector = …\`
over all ${o.docs.toLocaleString('en')} rows, as an upgrade of a loaded table runs it): **${backfillS.toFixed(1)} s**; then migration 010 whole (posting
table, triggers, the backfill of ${Number(sizes.postings).toLocaleString('en')} postings, both indexes): **${postingsS.toFixed(1)} s**; \`VACUUM ANALYZE assets, search_postings\` afterwards: ${vacuumS.toFixed(1)} s.
The queries below run on the table as that upgrade leaves it (the backfill's old row versions vacuumed, the heap not shrunk).
Every ingest above ran with 010's trigger filing the postings (the backfill found the same ${Number(sizes.postings).toLocaleString('en')}).
The bulk rows carry the same search_vector expression as the service's finalize (checked equal on the ${apiDocs} rows the
service wrote); they have no bytes in object storage, which search never reads.

Queries, one at a time (${o.queries} per kind after 20 warm-up; each query over HTTP and as SQL back to back). Matches: documents
matching the query (p50 / p95 / max); the service answers the top 20. Latency in ms, p50 / p95. Before: the statement before
migration 010 (the candidates picked by scoring every match on rank_vector), on the same table in the same run, paired with the
other two. Kept: the share of the before-statement's top 20 that the new one answers too (mean), and the queries whose page is identical:

${table(['Kind', 'Matches', 'Items/answer', 'GET /search', 'SQL', 'Service/SQL', 'SQL before', 'Before/SQL', 'Kept / same page'], rows)}

Same queries, ${o.concurrency} in flight (HTTP: ${o.concurrency} keep-alive connections; SQL: a pool of ${o.concurrency}), ms p50 / p95:

${table(['Kind', 'GET /search', 'q/s', 'SQL', 'q/s', 'Service/SQL', 'SQL before', 'q/s', 'Before/SQL'], concurrentRows)}

SQL is the statement search-service.ts sends (recorded from a real call: for a one-lexeme query the best 200 candidates read in
order from search_postings' index, otherwise or when there are fewer every match scored on the inline rank_vector; those ranked with
ts_rank_cd on search_vector, top 20, ts_headline on those), one round trip through node-postgres; the service adds HTTP, auth
(cached), the scope lookup query, validation and JSON. SQL before: the same round trip with the statement of commit eb1cc34
(\`BASELINE_SQL\` in bench/support/search-queries.ts).

Slowest query of each kind, EXPLAIN (ANALYZE, BUFFERS) run afterwards:

${slowest.join('\n')}
`,
  );
} finally {
  await pool.end();
  await dispatcher.close();
  await service.stop();
}
