// Building the search benchmark's corpus on the real service: documents through the API and in bulk SQL, the
// GIN index build, and migrations 007 and 010 replayed as an upgrade of the loaded table, each timed. The
// result is kept in a database named for the corpus (`corpusDatabase`), with the key and the build's
// figures in `bench_corpus`, so a later run reuses it instead of spending minutes on the same rows.
import { readFile } from 'node:fs/promises';
import type pg from 'pg';
import type { Dispatcher } from 'undici';
import { UNDO_MIGRATION_010 } from '../../test/support/search-postings.ts';
import type { Vocabulary } from './corpus.ts';
import { table } from './report.ts';
import { insertDocuments, postDocument, postDocuments, verifySearchVectors } from './search-ingest.ts';

/** The kept database of one corpus: the same options give the same documents. */
export const corpusDatabase = (docs: number, seed: number, words: number) =>
  `assay_bench_search_corpus_${docs}_${seed}_${words}`;

export interface Corpus {
  key: string;
  ownerUserId: string;
  /** The build's figures (ingest, index, migrations), as markdown; from the run that built it. */
  built: string;
}

/** The corpus a finished build left in this database, or undefined (none, or the build did not finish). */
export async function keptCorpus(pool: pg.Pool): Promise<Corpus | undefined> {
  const rows = await pool
    .query<Corpus>(`SELECT key, owner_user_id AS "ownerUserId", built FROM bench_corpus`)
    .catch(() => ({ rows: [] as Corpus[] }));
  return rows.rows[0];
}

const log = (line: string) => console.log(`[search] ${line}`);
const seconds = (since: number) => (performance.now() - since) / 1000;

/**
 * Documents 0…docs-1 of the corpus: document 0 through the API (it tells who owns what the bulk load
 * writes), the bulk of them by SQL without then with the GIN index, `apiDocs` through the API (half one at a
 * time, half `concurrency` at a time), then migrations 007 and 010 as an upgrade runs them, and VACUUM.
 * Records the corpus in `bench_corpus` last, so an interrupted build is never reused.
 */
export async function buildCorpus(
  pool: pg.Pool,
  api: { url: string; key: string; dispatcher: Dispatcher },
  v: Vocabulary,
  o: { docs: number; seed: number; apiDocs: number; indexedDocs: number; concurrency: number },
): Promise<Corpus> {
  const apiDocs = Math.min(o.apiDocs, o.docs);
  const indexedDocs = Math.min(o.indexedDocs, o.docs - apiDocs);
  const indexFrom = o.docs - indexedDocs;
  const probe = await postDocument(api, v, o.seed, 0);
  const owner = (
    await pool.query<{ organization_id: string | null; owner_user_id: string }>(
      'SELECT organization_id, owner_user_id FROM assets WHERE id = $1',
      [probe],
    )
  ).rows[0]!;
  const to = { organizationId: owner.organization_id, ownerUserId: owner.owner_user_id };

  log(`bulk insert of documents ${apiDocs}…${indexFrom - 1} without the GIN index`);
  await pool.query('DROP INDEX assets_search');
  const bulkS = await insertDocuments(pool, v, o.seed, to, apiDocs, indexFrom);
  const maintenanceWorkMem = (
    await pool.query<{ m: string }>("SELECT current_setting('maintenance_work_mem') AS m")
  ).rows[0]!.m;
  log(`GIN index build over ${indexFrom} rows (maintenance_work_mem ${maintenanceWorkMem})`);
  let started = performance.now();
  await pool.query('CREATE INDEX assets_search ON assets USING GIN (search_vector)'); // as in 002_assets.sql
  const indexS = seconds(started);
  log(`bulk insert of documents ${indexFrom}…${o.docs - 1} with the index present`);
  const indexedS = await insertDocuments(pool, v, o.seed, to, indexFrom, o.docs);

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
  // VACUUM that takes the dead row versions away. Later migrations (020) stay as the service applied them.
  const migration = async (file: string) =>
    readFile(new URL(`../../src/server/db/migrations/${file}`, import.meta.url), 'utf8');
  const filed = await pool.query<{ n: string }>('SELECT count(*) AS n FROM search_postings');
  await pool.query(UNDO_MIGRATION_010);
  const m007 = await migration('007_search_rank.sql');
  log(`migration 007 backfill (its UPDATE) over ${o.docs} rows`);
  started = performance.now();
  await pool.query(m007.slice(m007.indexOf('UPDATE assets')));
  const backfillS = seconds(started);
  log(`migration 010 (posting table, triggers, backfill, indexes) over ${o.docs} rows`);
  started = performance.now();
  await pool.query(
    `BEGIN; ${await migration('010_search_postings.sql')};
     INSERT INTO schema_migrations (version) VALUES ('010_search_postings.sql'); COMMIT`,
  );
  const postingsS = seconds(started);
  const refiled = await pool.query<{ n: string }>('SELECT count(*) AS n FROM search_postings');
  if (refiled.rows[0]!.n !== filed.rows[0]!.n)
    throw new Error(`the load filed ${filed.rows[0]!.n} postings, the backfill ${refiled.rows[0]!.n}`);
  started = performance.now();
  await pool.query('VACUUM ANALYZE assets, search_postings');
  const vacuumS = seconds(started);

  const rate = (n: number, s: number) => `${(n / s).toFixed(0)} docs/s`;
  const built = `Ingest (measured when this corpus was built, ${new Date().toISOString().slice(0, 16)}Z):

${table(
  ['Path', 'Documents', 'Time', 'Rate'],
  [
    [
      '`POST /assets` inline `document`, one at a time',
      String(half - 1),
      `${sequential.seconds.toFixed(1)} s`,
      rate(half - 1, sequential.seconds),
    ],
    [
      `\`POST /assets\` inline \`document\`, ${o.concurrency} at a time`,
      String(apiDocs - half),
      `${concurrent.seconds.toFixed(1)} s`,
      rate(apiDocs - half, concurrent.seconds),
    ],
    [
      'SQL `INSERT … SELECT FROM unnest` (2,000 per statement), no GIN index',
      String(indexFrom - apiDocs),
      `${bulkS.toFixed(1)} s`,
      rate(indexFrom - apiDocs, bulkS),
    ],
    [
      'SQL, same, GIN index present',
      String(indexedDocs),
      `${indexedS.toFixed(1)} s`,
      rate(indexedDocs, indexedS),
    ],
  ],
)}

GIN index build (\`CREATE INDEX assets_search … USING GIN (search_vector)\` over ${indexFrom.toLocaleString('en')} rows,
maintenance_work_mem ${maintenanceWorkMem}): **${indexS.toFixed(1)} s**. Migration 007's backfill (its \`UPDATE assets SET rank_vector = …\`
over all ${o.docs.toLocaleString('en')} rows, as an upgrade of a loaded table runs it): **${backfillS.toFixed(1)} s**; then migration 010 whole (posting
table, triggers, the backfill of ${Number(refiled.rows[0]!.n).toLocaleString('en')} postings, both indexes): **${postingsS.toFixed(1)} s**; \`VACUUM ANALYZE assets, search_postings\` afterwards: ${vacuumS.toFixed(1)} s.
The queries run on the table as that upgrade leaves it (the backfill's old row versions vacuumed, the heap not shrunk).
Every ingest above ran with 010's trigger filing the postings (the backfill found the same number).
The bulk rows carry the same search_vector expression as the service's finalize (checked equal on the ${apiDocs} rows the
service wrote); they have no bytes in object storage, which search never reads.`;
  const corpus = { key: api.key, ownerUserId: owner.owner_user_id, built };
  await pool.query(
    'CREATE TABLE bench_corpus AS SELECT $1::text AS key, $2::uuid AS owner_user_id, $3::text AS built',
    [corpus.key, corpus.ownerUserId, corpus.built],
  );
  return corpus;
}
