import type { AssetState } from '@assay/contract';
import type { Principal } from '../auth/principal.ts';
import type { Queryable, Tx } from '../db/database.ts';
import { experimentVisible } from '../organizations/organization-repository.ts';

export interface ComponentRow {
  name: string;
  size: number;
  content_type: string;
  sha256: string | null;
  storage_key: string;
  upload_id: string | null;
  part_size: number | null;
  /**
   * The declared sha256 (hex) of each part, when the store verifies the parts against them; a null entry is a
   * part whose digest a deferred-checksums client has not declared yet.
   */
  part_sha256: Array<string | null> | null;
}

export interface AssetRow {
  id: string;
  organization_id: string | null;
  owner_user_id: string;
  experiment_id: string | null;
  run_id: string | null;
  kind: string;
  name: string;
  state: AssetState;
  metadata: Record<string, unknown>;
  inline: boolean;
  created_at: Date;
  finalized_at: Date | null;
  components: ComponentRow[];
}

const COLUMNS = `a.id, a.organization_id, a.owner_user_id, a.experiment_id, a.run_id, a.kind, a.name, a.state, a.metadata,
  a.inline, a.created_at, a.finalized_at,
  COALESCE((SELECT json_agg(json_build_object('name', c.name, 'size', c.size::float8, 'content_type', c.content_type,
      'sha256', c.sha256, 'storage_key', c.storage_key, 'upload_id', c.upload_id, 'part_size', c.part_size::float8,
      'part_sha256', c.part_sha256) ORDER BY c.name)
    FROM asset_components c WHERE c.asset_id = a.id), '[]'::json) AS components`;

/**
 * Assets the caller may see: the tenancy rule of experiments, and for a worker key only its own run's assets.
 */
export function assetVisible(alias: string, userParam: string, runParam: string): string {
  return `${experimentVisible(alias, userParam)} AND (${runParam}::uuid IS NULL OR ${alias}.run_id = ${runParam}::uuid)`;
}

export async function insertAsset(
  tx: Tx,
  a: {
    id: string;
    organizationId: string | null;
    ownerUserId: string;
    experimentId: string | null;
    runId: string | null;
    kind: string;
    name: string;
    metadata: object;
    inline: boolean;
  },
  components: Array<Omit<ComponentRow, 'upload_id'>>,
): Promise<void> {
  await tx.query(
    `INSERT INTO assets (id, organization_id, owner_user_id, experiment_id, run_id, kind, name, metadata, inline)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [a.id, a.organizationId, a.ownerUserId, a.experimentId, a.runId, a.kind, a.name, a.metadata, a.inline],
  );
  // One statement for every component: an asset of 256 files cost 256 round trips, seconds on a busy
  // database, before its first byte could move.
  await tx.query(
    `INSERT INTO asset_components (asset_id, name, size, content_type, sha256, storage_key, part_size, part_sha256)
     SELECT $1, c.name, c.size, c.content_type, c.sha256, c.storage_key, c.part_size, c.part_sha256
       FROM jsonb_to_recordset($2::jsonb) AS c(name text, size bigint, content_type text, sha256 text,
            storage_key text, part_size bigint, part_sha256 text[])`,
    [a.id, JSON.stringify(components)],
  );
}

/**
 * Records a started multipart upload; the store may have chosen a larger part size than asked for, and part
 * checksums are kept only when the store took them (null otherwise).
 */
export async function setUploadId(
  db: Queryable,
  assetId: string,
  name: string,
  upload: { uploadId: string; partSize: number; partSha256: Array<string | null> | null },
): Promise<void> {
  await db.query(
    'UPDATE asset_components SET upload_id = $3, part_size = $4, part_sha256 = $5 WHERE asset_id = $1 AND name = $2',
    [assetId, name, upload.uploadId, upload.partSize, upload.partSha256],
  );
}

/**
 * The state of an asset the caller may see (undefined when it may not, or there is none): no components read.
 */
export async function findVisibleAssetState(
  db: Queryable,
  principal: Principal,
  id: string,
): Promise<AssetState | undefined> {
  const rows = await db.query<{ state: AssetState }>(
    `SELECT a.state FROM assets a WHERE a.id = $2 AND ${assetVisible('a', '$1', '$3')}`,
    [principal.userId, id, principal.runId],
  );
  return rows[0]?.state;
}

/**
 * The named components of an asset with the asset's state, locked until the transaction ends, so that two
 * checksum declarations for parts of one component merge instead of overwriting each other, and a finalize
 * (which marks the asset ready) cannot slip between the check and the write.
 */
export async function lockComponents(
  tx: Tx,
  assetId: string,
  names: string[],
): Promise<Array<ComponentRow & { state: AssetState }>> {
  return tx.query<ComponentRow & { state: AssetState }>(
    `SELECT c.name, c.size::float8 AS size, c.content_type, c.sha256, c.storage_key, c.upload_id,
            c.part_size::float8 AS part_size, c.part_sha256, a.state
       FROM asset_components c JOIN assets a ON a.id = c.asset_id
      WHERE c.asset_id = $1 AND c.name = ANY($2::text[])
      ORDER BY c.name FOR UPDATE`,
    [assetId, names],
  );
}

/** Writes the merged digests of components locked by lockPendingComponents. */
export async function setComponentChecksums(
  tx: Tx,
  assetId: string,
  rows: Array<{ name: string; sha256: string | null; part_sha256: Array<string | null> | null }>,
): Promise<void> {
  await tx.query(
    `UPDATE asset_components c SET sha256 = d.sha256, part_sha256 = d.part_sha256
       FROM jsonb_to_recordset($2::jsonb) AS d(name text, sha256 text, part_sha256 text[])
      WHERE c.asset_id = $1 AND c.name = d.name`,
    [assetId, JSON.stringify(rows)],
  );
}

export async function findAsset(
  db: Queryable,
  principal: Principal,
  id: string,
): Promise<AssetRow | undefined> {
  const rows = await db.query<AssetRow>(
    `SELECT ${COLUMNS} FROM assets a WHERE a.id = $2 AND ${assetVisible('a', '$1', '$3')}`,
    [principal.userId, id, principal.runId],
  );
  return rows[0];
}

/**
 * The state of an asset whatever its tenant, for the storage routes' signed writes (the signature already
 * authorised them).
 */
export async function findAssetState(db: Queryable, id: string): Promise<string | undefined> {
  const rows = await db.query<{ state: string }>('SELECT state FROM assets WHERE id = $1', [id]);
  return rows[0]?.state;
}

/**
 * Marks a pending asset ready, indexing it for search when searchable; false when another finalize got
 * there first.
 */
export async function markReady(
  db: Queryable,
  id: string,
  searchText: string | null,
  searchable: boolean,
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE assets SET state = 'ready', finalized_at = now(), search_text = $2,
            search_vector = CASE WHEN $3 THEN
              setweight(to_tsvector('english', name), 'A') ||
              setweight(jsonb_to_tsvector('english', metadata, '["string"]'), 'B') ||
              setweight(to_tsvector('english', COALESCE($2, '')), 'C') END,
            -- search-repository.ts ranks candidates on this one: the opening of the text only, so it stays
            -- in the heap row; the same expression as migration 007_search_rank.sql.
            rank_vector = CASE WHEN $3 THEN
              setweight(to_tsvector('english', name), 'A') ||
              setweight(jsonb_to_tsvector('english', metadata, '["string"]'), 'B') ||
              setweight(to_tsvector('english', left(COALESCE($2, ''), 400)), 'C') END
      WHERE id = $1 AND state = 'pending' RETURNING id`,
    [id, searchText, searchable],
  );
  return rows.length > 0;
}

export async function listAssets(
  db: Queryable,
  principal: Principal,
  f: {
    experimentId?: string;
    runId?: string;
    kind?: string;
    state?: string;
    name?: string;
    afterId?: string;
    limit: number;
  },
): Promise<AssetRow[]> {
  const params: unknown[] = [principal.userId, principal.runId, f.limit];
  const where = [assetVisible('a', '$1', '$2')];
  if (f.experimentId) where.push(`a.experiment_id = $${params.push(f.experimentId)}`);
  if (f.runId) where.push(`a.run_id = $${params.push(f.runId)}`);
  if (f.kind) where.push(`a.kind = $${params.push(f.kind)}`);
  if (f.state) where.push(`a.state = $${params.push(f.state)}`);
  if (f.name) where.push(`a.name = $${params.push(f.name)}`);
  if (f.afterId)
    where.push(
      `(a.created_at, a.id) < (SELECT c.created_at, c.id FROM assets c WHERE c.id = $${params.push(f.afterId)})`,
    );
  return db.query<AssetRow>(
    `SELECT ${COLUMNS} FROM assets a WHERE ${where.join(' AND ')} ORDER BY a.created_at DESC, a.id DESC LIMIT $3`,
    params,
  );
}

/**
 * The newest ready checkpoint along a run's chain: the run itself and, transitively, the run it recovers (a
 * lost instance), the run it retries (a sweep's failed trial) and the run it was created to resume from.
 * Another run of the variation is not on it: a new run starts from scratch unless it was asked to resume.
 */
export async function newestCheckpointOfChain(db: Queryable, runId: string): Promise<AssetRow | undefined> {
  const rows = await db.query<AssetRow>(
    `WITH RECURSIVE chain(id) AS (
       SELECT $1::uuid
       UNION
       SELECT x.link FROM chain JOIN runs c ON c.id = chain.id
         CROSS JOIN LATERAL (VALUES (c.recovers_run_id), (c.retries_run_id), (c.resumes_from_run_id)) AS x(link)
        WHERE x.link IS NOT NULL)
     SELECT ${COLUMNS} FROM assets a
      WHERE a.run_id IN (SELECT id FROM chain) AND a.kind = 'checkpoint' AND a.state = 'ready'
      ORDER BY a.finalized_at DESC, a.id DESC LIMIT 1`,
    [runId],
  );
  return rows[0];
}
