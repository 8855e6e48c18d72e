// Loading the search corpus: through the API (POST /assets, inline content) and in bulk with SQL into the
// same tables, with the same tsvector the service computes at finalize.
import { createHash, randomUUID } from 'node:crypto';
import type pg from 'pg';
import { type Dispatcher, request } from 'undici';
import { documentAt, type Vocabulary } from './corpus.ts';

/**
 * The search_vector of src/server/assets/asset-repository.ts markReady, over columns instead of parameters;
 * verifySearchVectors() checks it against the rows the service wrote itself.
 */
const SEARCH_VECTOR = `setweight(to_tsvector('english', name), 'A') ||
  setweight(jsonb_to_tsvector('english', metadata, '["string"]'), 'B') ||
  setweight(to_tsvector('english', COALESCE(search_text, '')), 'C')`;

/** The rank_vector of the same markReady (and of migration 007_search_rank.sql), checked the same way. */
const RANK_VECTOR = `setweight(to_tsvector('english', name), 'A') ||
  setweight(jsonb_to_tsvector('english', metadata, '["string"]'), 'B') ||
  setweight(to_tsvector('english', left(COALESCE(search_text, ''), 400)), 'C')`;

export interface Owner {
  organizationId: string | null;
  ownerUserId: string;
}

/** POSTs document `i` as an inline `document` asset and returns its id. */
export async function postDocument(
  api: { url: string; key: string; dispatcher: Dispatcher },
  v: Vocabulary,
  seed: number,
  i: number,
): Promise<string> {
  const doc = documentAt(v, seed, i);
  const res = await request(`${api.url}/assets`, {
    method: 'POST',
    dispatcher: api.dispatcher,
    headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ kind: 'document', ...doc }),
  });
  const body = (await res.body.json()) as { id: string; state: string };
  if (res.statusCode !== 201 || body.state !== 'ready')
    throw new Error(`POST /assets answered ${res.statusCode}: ${JSON.stringify(body)}`);
  return body.id;
}

/**
 * Documents `from`…`to - 1` through the API, `concurrency` at a time; answers the seconds taken and the ids.
 */
export async function postDocuments(
  api: { url: string; key: string; dispatcher: Dispatcher },
  v: Vocabulary,
  seed: number,
  from: number,
  to: number,
  concurrency: number,
) {
  let next = from;
  const ids: string[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < to) ids.push(await postDocument(api, v, seed, next++));
    }),
  );
  return { seconds: (performance.now() - started) / 1000, ids };
}

/**
 * Documents `from`…`to - 1` as ready, inline `document` assets with their `content` component (the record
 * only: no bytes in object storage, which search never reads), `batch` per INSERT … SELECT FROM unnest.
 * Answers the seconds spent in SQL (the documents are generated outside the timed part).
 */
export async function insertDocuments(
  pool: pg.Pool,
  v: Vocabulary,
  seed: number,
  owner: Owner,
  from: number,
  to: number,
  batch = 2000,
): Promise<number> {
  let sqlSeconds = 0;
  for (let start = from; start < to; start += batch) {
    const ids: string[] = [];
    const names: string[] = [];
    const metadata: string[] = [];
    const contents: string[] = [];
    const sizes: number[] = [];
    const digests: string[] = [];
    for (let i = start; i < Math.min(to, start + batch); i++) {
      const doc = documentAt(v, seed, i);
      ids.push(randomUUID());
      names.push(doc.name);
      metadata.push(JSON.stringify(doc.metadata));
      contents.push(doc.content);
      sizes.push(Buffer.byteLength(doc.content));
      digests.push(createHash('sha256').update(doc.content).digest('hex'));
    }
    const started = performance.now();
    await pool.query(
      `WITH docs AS (
         SELECT d.id, d.name, d.metadata::jsonb AS metadata, d.search_text, d.size, d.sha256
           FROM unnest($3::uuid[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[]) AS d(id, name, metadata, search_text, size, sha256)
       ), inserted AS (
         INSERT INTO assets (id, organization_id, owner_user_id, kind, name, state, metadata, inline, finalized_at, search_text, search_vector, rank_vector)
         SELECT id, $1::uuid, $2::uuid, 'document', name, 'ready', metadata, true, now(), search_text, ${SEARCH_VECTOR}, ${RANK_VECTOR} FROM docs
         RETURNING id
       )
       INSERT INTO asset_components (asset_id, name, size, content_type, sha256, storage_key)
       SELECT docs.id, 'content', docs.size, 'text/plain; charset=utf-8', docs.sha256, 'assets/' || docs.id || '/content'
         FROM inserted JOIN docs USING (id)`,
      [owner.organizationId, owner.ownerUserId, ids, names, metadata, contents, sizes, digests],
    );
    sqlSeconds += (performance.now() - started) / 1000;
  }
  return sqlSeconds;
}

/**
 * Rows the service indexed itself whose vectors differ from SEARCH_VECTOR or RANK_VECTOR (0 when the bulk
 * load matches).
 */
export async function verifySearchVectors(pool: pg.Pool, ids: readonly string[]): Promise<number> {
  const rows = await pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM assets WHERE id = ANY($1::uuid[]) AND (search_vector IS DISTINCT FROM (${SEARCH_VECTOR}) OR rank_vector IS DISTINCT FROM (${RANK_VECTOR}))`,
    [ids],
  );
  return Number(rows.rows[0]!.n);
}
