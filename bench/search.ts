// Full-text search over a generated corpus on the real service: p50/p95 of GET /search per query kind, one at
// a time and 4 in flight, against the same SQL sent straight to PostgreSQL and against the statement before
// issue #27 (bench/support/search-before.ts) in the same run, with the CPU each query costs (service and
// PostgreSQL backends) and whether the two statements answer the same page. The corpus (ingest, GIN build,
// migrations 007 and 010 replayed, each timed) is built once and kept in a database named for it; later runs
// reuse it (`--fresh 1` builds it again). Prints figures (not a test).
// Run: node bench/search.ts [--docs 100000] [--queries 200] [--concurrency 4] [--fresh 0|1] [--guard]
//   (--guard: 10,000 documents, 60 queries per kind, printGuard lines for bench/guard.ts; not written)
import pg from 'pg';
import { Agent } from 'undici';
import { type QueryKind, queries, vocabulary } from './support/corpus.ts';
import { dropKeptDatabase, startBenchService } from './support/bench-service.ts';
import { explainSearch } from './support/explain.ts';
import { printGuard } from './support/guard.ts';
import { machine, ms, options, publish, quantile, table } from './support/report.ts';
import { searchAssetsBefore } from './support/search-before.ts';
import { buildCorpus, corpusDatabase, keptCorpus } from './support/search-build.ts';
import {
  httpSearch,
  lookupById,
  matchCounts,
  runAll,
  runPaired,
  type SearchStatement,
  sqlSearch,
  type Timed,
} from './support/search-queries.ts';
import { cpuAccount, cpuSplit } from './runner-traffic/cpu-account.ts';

const argv = process.argv.slice(2);
const guard = argv.includes('--guard');
const o = options(
  argv.filter((a) => a !== '--guard'),
  {
    docs: guard ? 10_000 : 100_000,
    'api-docs': guard ? 200 : 2000,
    'indexed-docs': guard ? 1000 : 10_000,
    queries: guard ? 60 : 200,
    concurrency: 4,
    seed: 42,
    vocabulary: 50_000,
    fresh: 0,
  },
);
/** Each kind, and the `kind` filter it sends (every corpus document is a `document`). */
const KINDS: Array<{ name: string; kind: QueryKind; filter?: string }> = [
  { name: 'one-word', kind: 'one-word' },
  { name: 'one-word, kind=document', kind: 'one-word', filter: 'document' },
  { name: 'two-word', kind: 'two-word' },
  { name: 'three-word', kind: 'three-word' },
  { name: 'phrase', kind: 'phrase' },
  { name: 'either-word (a or b)', kind: 'either-word' },
];
const log = (line: string) => console.log(`[search] ${line}`);
const p = (t: Timed[], q: number) =>
  quantile(
    t.map((x) => x.ms),
    q,
  );
const p50p95 = (t: Timed[]) => `${ms(p(t, 0.5))} / ${ms(p(t, 0.95))}`;

const v = vocabulary(o.seed, o.vocabulary);
const kept = corpusDatabase(o.docs, o.seed, o.vocabulary);
if (o.fresh) await dropKeptDatabase(kept);
let service = await startBenchService('search', {}, kept);
let pool = new pg.Pool({ connectionString: service.databaseUrl, max: o.concurrency });
let corpus = service.reused ? await keptCorpus(pool) : undefined;
if (service.reused && !corpus) {
  log('the kept corpus database is from a build that did not finish: building it again');
  await pool.end();
  await service.stop();
  await dropKeptDatabase(kept);
  service = await startBenchService('search', {}, kept);
  pool = new pg.Pool({ connectionString: service.databaseUrl, max: o.concurrency });
}
const dispatcher = new Agent({ connections: o.concurrency });
const cpu = await cpuAccount(service.pid, new URL(service.databaseUrl).pathname.slice(1));
try {
  const reused = corpus !== undefined;
  corpus ??= await buildCorpus(pool, { url: service.url, key: service.key, dispatcher }, v, {
    docs: o.docs,
    seed: o.seed,
    apiDocs: o['api-docs'],
    indexedDocs: o['indexed-docs'],
    concurrency: o.concurrency,
  });
  if (reused) log(`reusing the corpus kept in database ${kept} (--fresh 1 builds it again)`);
  const api = { url: service.url, key: corpus.key, dispatcher };
  const before: SearchStatement = (db, principal, q) =>
    searchAssetsBefore(db, {
      userId: principal.userId,
      runId: null,
      organizationId: null,
      query: q.q,
      kind: q.kind,
      limit: 20,
    });
  const ids = (await pool.query<{ id: string }>('SELECT id FROM assets LIMIT 1000')).rows.map((r) => r.id);
  const lookup = lookupById(pool, ids);

  const rows: string[][] = [];
  const concurrentRows: string[][] = [];
  const slowest: string[] = [];
  const all = { http4: [] as Timed[], lookup4: [] as Timed[], after4: [] as Timed[], before4: [] as Timed[] };
  for (const k of KINDS) {
    const list = queries(v, o.seed, o.docs, k.kind, o.queries);
    const http = httpSearch(api, k.filter);
    const sample = list[0]!;
    const after = await sqlSearch(pool, corpus.ownerUserId, {
      kind: k.filter,
      name: `after${KINDS.indexOf(k)}`,
      sample,
    });
    const old = await sqlSearch(pool, corpus.ownerUserId, {
      kind: k.filter,
      name: `before${KINDS.indexOf(k)}`,
      statement: before,
      sample,
    });
    await runPaired([http, after.run, old.run], list.slice(0, 20));
    log(
      `${k.name}: ${list.length} queries one at a time (HTTP, SQL, SQL before, paired), then ${o.concurrency} in flight`,
    );
    const [httpP, afterP, beforeP] = (await runPaired([http, after.run, old.run], list)) as [
      Timed[],
      Timed[],
      Timed[],
    ];
    const start = await cpu.snapshot();
    const httpC = await runAll(http, list, o.concurrency);
    const cost = cpuSplit(start, await cpu.snapshot(), list.length);
    const lookupC = await runAll(lookup, list, o.concurrency);
    const afterC = await runAll(after.run, list, o.concurrency);
    const beforeC = await runAll(old.run, list, o.concurrency);
    all.http4.push(...httpC.timings);
    all.lookup4.push(...lookupC.timings);
    all.after4.push(...afterC.timings);
    all.before4.push(...beforeC.timings);
    const samePage = beforeP.filter((b, i) => b.ids!.join() === afterP[i]!.ids!.join()).length;
    const kept = beforeP.map((b, i) => {
      const mine = new Set(afterP[i]!.ids);
      return b.ids!.length === 0 ? 1 : b.ids!.filter((id) => mine.has(id)).length / b.ids!.length;
    });
    if (guard) continue;
    const counts = await matchCounts(pool, list);
    const worst = (t: Timed[]) => t.reduce((w, x, i) => (x.ms > t[w]!.ms ? i : w), 0);
    const wa = worst(afterP);
    const wb = worst(beforeP);
    slowest.push(
      `- ${k.name}, \`${list[wa]}\` (${ms(afterP[wa]!.ms)} ms as SQL): ${await explainSearch(pool, after.sql, after.params(list[wa]!))}.`,
      `- ${k.name}, before, \`${list[wb]}\` (${ms(beforeP[wb]!.ms)} ms): ${await explainSearch(pool, old.sql, old.params(list[wb]!))}.`,
    );
    const ratio = (a: Timed[], b: Timed[], q: number) => (p(a, q) / p(b, q)).toFixed(2);
    rows.push([
      `${k.name} (${list.slice(0, 2).join(', ')}, …)`,
      `${quantile(counts, 0.5)} / ${quantile(counts, 0.95)} / ${Math.max(...counts)}`,
      (httpP.reduce((s, t) => s + t.items, 0) / list.length).toFixed(1),
      p50p95(httpP),
      p50p95(afterP),
      p50p95(beforeP),
      `${ratio(beforeP, afterP, 0.5)} / ${ratio(beforeP, afterP, 0.95)}`,
      `${((kept.reduce((x, y) => x + y, 0) / kept.length) * 100).toFixed(1)} % / ${samePage} of ${list.length}`,
    ]);
    concurrentRows.push([
      k.name,
      `**${p50p95(httpC.timings)}**`,
      httpC.perSecond.toFixed(0),
      `${cost.msPerOp.server.toFixed(1)} + ${cost.msPerOp.postgres.toFixed(1)}`,
      p50p95(afterC.timings),
      p50p95(beforeC.timings),
      `${ratio(beforeC.timings, afterC.timings, 0.5)} / ${ratio(beforeC.timings, afterC.timings, 0.95)}`,
      p50p95(lookupC.timings),
    ]);
  }

  const load = (await import('node:os'))
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ');
  if (guard) {
    printGuard({
      name: 'search/p95-4-in-flight-vs-lookup',
      ratio: p(all.http4, 0.95) / p(all.lookup4, 0.95),
      higherIsBetter: false,
      what: `GET /search p95 over every kind, ${o.concurrency} in flight, ÷ p95 of a primary-key lookup ${o.concurrency} in flight (${o.docs} documents; load ${load})`,
    });
    printGuard({
      name: 'search/sql-vs-before',
      ratio: p(all.after4, 0.95) / p(all.before4, 0.95),
      higherIsBetter: false,
      what: `the search statement's p95 over every kind ÷ the statement before #27 (bench/support/search-before.ts), ${o.concurrency} in flight`,
    });
  } else {
    const pgVersion = (await pool.query<{ v: string }>("SELECT current_setting('server_version') AS v"))
      .rows[0]!.v;
    await publish(
      'search',
      `### Search: ${o.docs.toLocaleString('en')} documents (${new Date().toISOString().slice(0, 10)})

Command: \`${['node bench/search.ts', ...argv].join(' ')}\` · ${machine()} · PostgreSQL ${pgVersion}.
Corpus (seed ${o.seed}): ${o.vocabulary.toLocaleString('en')} made-up content words after 76 English stop words, Zipf (s = 1) over all of
them; each document a 3–7 word name, metadata \`{project, tags[3]}\`, and 80–400 words of text. The service runs as its own
process (\`assay server\`, log level info, orchestrator off); queries go over keep-alive HTTP (undici).${reused ? ` The corpus was reused from database ${kept}, built by an earlier run:` : ''}

${corpus.built}

Queries, one at a time (${o.queries} per kind after 20 warm-up; each query over HTTP, as SQL and as the SQL before, back to back).
Matches: documents matching the query (p50 / p95 / max); the service answers the top 20. Latency in ms, p50 / p95. Before: the
statement before issue #27 (bench/support/search-before.ts: one-lexeme queries from the postings, every other query by scoring
all matches), on the same table in the same run. Kept: the share of the before-statement's top 20 that the new one answers too
(mean), and the queries whose page is identical:

${table(['Kind', 'Matches', 'Items/answer', 'GET /search', 'SQL', 'SQL before', 'Before/SQL', 'Kept / same page'], rows)}

Same queries, ${o.concurrency} in flight (HTTP: ${o.concurrency} keep-alive connections; SQL: a pool of ${o.concurrency}, named statements as the
service sends them), ms p50 / p95. CPU per query: the service process and its database's PostgreSQL backends, from /proc,
over the HTTP run. Lookup: a primary-key SELECT of one asset on the same pool, the machine's yardstick:

${table(['Kind', 'GET /search', 'q/s', 'CPU ms/query (service + PostgreSQL)', 'SQL', 'SQL before', 'Before/SQL', 'Lookup'], concurrentRows)}

Slowest query of each kind, EXPLAIN (ANALYZE, BUFFERS) run afterwards:

${slowest.join('\n')}
`,
    );
  }
} finally {
  await cpu.close();
  await pool.end();
  await dispatcher.close();
  await service.stop();
}
