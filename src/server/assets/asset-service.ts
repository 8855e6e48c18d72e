import { createHash, randomUUID } from 'node:crypto';
import type { ComponentDeclaration, CreateAssetBody } from '@assay/contract';
import type { Principal } from '../auth/principal.ts';
import type { ServiceConfig } from '../config.ts';
import type { Db } from '../db/database.ts';
import { getVisibleExperiment } from '../experiments/experiment-service.ts';
import { AppError, badRequest, conflict, forbidden, notFound } from '../http/errors.ts';
import { iso } from '../http/schemas.ts';
import { resolveOwnerScope } from '../organizations/tenancy.ts';
import { getRun } from '../runs/run-service.ts';
import type { ObjectStorage } from '../storage/object-storage.ts';
import { uploadKey } from '../storage/storage-keys.ts';
import * as repo from './asset-repository.ts';
import { extractText, SEARCHABLE_KINDS } from './text-extraction.ts';

export interface AssetDeps {
  db: Db;
  storage: ObjectStorage;
  config: ServiceConfig;
}

export function toApi(row: repo.AssetRow) {
  return {
    id: row.id,
    kind: row.kind,
    name: row.name,
    state: row.state,
    inline: row.inline,
    components: Object.fromEntries(
      row.components.map((c) => [c.name, { size: c.size, content_type: c.content_type, sha256: c.sha256 }]),
    ),
    metadata: row.metadata,
    experiment_id: row.experiment_id,
    run_id: row.run_id,
    organization_id: row.organization_id,
    created_at: iso(row.created_at)!,
    finalized_at: iso(row.finalized_at),
  };
}

const storageKey = (assetId: string, component: string) => `assets/${assetId}/${component}`;

const UPLOAD_KEY = /^uploads\/assets\/([0-9a-f-]{36})\//;

/** Whether a presigned write to `key` may proceed: only while its asset is pending (409 once it is ready). */
export async function assertAcceptsUpload(db: Db, key: string): Promise<void> {
  const assetId = UPLOAD_KEY.exec(key)?.[1];
  const state = assetId ? await repo.findAssetState(db, assetId) : undefined;
  if (state !== 'pending')
    throw conflict('asset_ready', 'the asset is finalized (or gone) and takes no more uploads');
}

/** Where a new asset belongs: its run's or experiment's tenant when linked, else the caller's scope. */
async function placement(deps: AssetDeps, principal: Principal, input: CreateAssetBody) {
  if (principal.runId && !input.run)
    throw forbidden(
      'worker_key_restricted',
      'a worker key may create assets of its own run only: give `run`',
    );
  let experimentId = input.experiment_id ?? null;
  let runId: string | null = null;
  if (input.run) {
    if (experimentId && experimentId !== input.run.experiment_id)
      throw badRequest('link_mismatch', 'experiment_id and run.experiment_id differ');
    runId = (
      await getRun(deps.db, principal, {
        experimentId: input.run.experiment_id,
        n: input.run.n,
        r: input.run.r,
      })
    ).id;
    experimentId = input.run.experiment_id;
  }
  if (experimentId) {
    const experiment = await getVisibleExperiment(deps.db, principal, experimentId);
    return {
      experimentId,
      runId,
      organizationId: experiment.organization_id,
      ownerUserId: experiment.owner_user_id,
    };
  }
  return {
    experimentId: null,
    runId: null,
    organizationId: await resolveOwnerScope(deps.db, principal, input.organization_id),
    ownerUserId: principal.userId,
  };
}

/**
 * POST /assets: either presigned uploads for declared components, or small inline content finalized at once.
 */
export async function createAsset(deps: AssetDeps, principal: Principal, input: CreateAssetBody) {
  const hasInline = input.content !== undefined || input.content_json !== undefined;
  if (input.presign === true) {
    if (hasInline)
      throw badRequest('ambiguous_asset', 'give either presign with components, or inline content, not both');
    if (!input.components?.length)
      throw badRequest('components_required', 'presign: true needs at least one component declaration');
    return createPresigned(deps, principal, input, input.components);
  }
  if (input.content !== undefined && input.content_json !== undefined)
    throw badRequest('ambiguous_asset', 'give content or content_json, not both');
  if (!hasInline)
    throw badRequest(
      'content_required',
      'give presign: true with components, or inline content (content or content_json)',
    );
  if (input.components)
    throw badRequest('ambiguous_asset', 'components are declared only with presign: true');
  if (input.deferred_checksums)
    throw badRequest('ambiguous_asset', 'deferred_checksums goes with presign: true only');
  return createInline(deps, principal, input);
}

async function createPresigned(
  deps: AssetDeps,
  principal: Principal,
  input: CreateAssetBody,
  declared: ComponentDeclaration[],
) {
  const names = new Set(declared.map((c) => c.name));
  if (names.size !== declared.length)
    throw badRequest('duplicate_component', 'component names must be unique');
  const deferred = input.deferred_checksums === true;
  const early = deferred
    ? declared.find((c) => c.sha256 !== undefined || c.part_sha256 !== undefined)
    : undefined;
  if (early)
    throw badRequest(
      'invalid_part_checksums',
      `component ${early.name}: with deferred_checksums, sha256 and part_sha256 are declared with POST /assets/{id}/checksums`,
    );
  const where = await placement(deps, principal, input);
  const id = randomUUID();
  const components = declared.map((c) => ({
    name: c.name,
    size: c.size,
    content_type: c.content_type ?? 'application/octet-stream',
    sha256: c.sha256?.toLowerCase() ?? null,
    storage_key: storageKey(id, c.name),
    ...(deferred ? deferredLayout(deps, c) : partLayout(deps, c)),
  }));
  await deps.db.transaction((tx) =>
    repo.insertAsset(
      tx,
      { id, ...where, kind: input.kind, name: input.name, metadata: input.metadata ?? {}, inline: false },
      components,
    ),
  );
  const uploads = await presignUploads(deps, id, components, undefined);
  if (deferred) {
    // Every URL comes from POST /assets/{id}/checksums, with its digest signed in: none is answered here.
    for (const [name, target] of Object.entries(uploads)) {
      if ('multipart' in (target as object)) (target as { parts: unknown[] }).parts = [];
      else delete uploads[name];
    }
  }
  const asset = (await repo.findAsset(deps.db, principal, id))!;
  return { ...toApi(asset), uploads };
}

/**
 * Whether a component goes in parts, and which. A client that declares part checksums chose its layout, and
 * the store can verify each part on upload only in that layout: it is taken whenever it makes at least two
 * parts (a store that cannot keep it drops the checksums at start). Otherwise components above the threshold
 * go in the configured part size.
 */
function partLayout(deps: AssetDeps, c: ComponentDeclaration) {
  const { multipartThresholdBytes, multipartPartBytes } = deps.config.storage;
  if (c.part_sha256 !== undefined || c.part_size !== undefined) {
    if (c.part_sha256 === undefined || c.part_size === undefined || c.sha256 === undefined)
      throw badRequest('invalid_part_checksums', 'part_size and part_sha256 come together, with sha256');
    if (c.part_sha256.length !== Math.ceil(c.size / c.part_size))
      throw badRequest(
        'invalid_part_checksums',
        `component ${c.name}: ${c.size} bytes in parts of ${c.part_size} make ${Math.ceil(c.size / c.part_size)} parts; ${c.part_sha256.length} checksums were given`,
      );
    return { part_size: c.part_size, part_sha256: c.part_sha256.map((h) => h.toLowerCase()) };
  }
  return { part_size: c.size > multipartThresholdBytes ? multipartPartBytes : null, part_sha256: null };
}

/**
 * The layout of a component whose digests come later: the client's part size when it gives one (it hashes in
 * those parts), else the configured threshold and part size. A multipart component starts with no part digest
 * known (a null each), which asks the store to verify every part's checksum, as declared later.
 */
function deferredLayout(deps: AssetDeps, c: ComponentDeclaration) {
  const { multipartThresholdBytes, multipartPartBytes } = deps.config.storage;
  const partSize =
    c.part_size !== undefined
      ? c.size > c.part_size
        ? c.part_size
        : null
      : c.size > multipartThresholdBytes
        ? multipartPartBytes
        : null;
  return {
    part_size: partSize,
    part_sha256: partSize === null ? null : new Array<string | null>(Math.ceil(c.size / partSize)).fill(null),
  };
}

/**
 * Upload URLs keyed by component name; multipart components start (or, on re-presign, continue) their upload.
 */
async function presignUploads(
  deps: AssetDeps,
  assetId: string,
  components: Array<
    Pick<
      repo.ComponentRow,
      'name' | 'size' | 'content_type' | 'sha256' | 'storage_key' | 'part_size' | 'part_sha256'
    > & {
      upload_id?: string | null;
    }
  >,
  only: string[] | undefined,
) {
  const ttl = deps.config.storage.uploadUrlTtlS;
  const uploads: Record<string, unknown> = {};
  for (const c of components) {
    if (only && !only.includes(c.name)) continue;
    if (c.part_size === null) {
      uploads[c.name] = await presignSinglePut(deps, c, ttl);
    } else if (!c.upload_id) {
      const { part_sha256: partSha256, ...mp } = await deps.storage.startMultipart(uploadKey(c.storage_key), {
        size: c.size,
        contentType: c.content_type,
        partSize: c.part_size,
        expiresInS: ttl,
        partSha256: c.part_sha256,
      });
      await repo.setUploadId(deps.db, assetId, c.name, {
        uploadId: mp.upload_id,
        partSize: mp.part_size,
        partSha256,
      });
      uploads[c.name] = { multipart: true, ...mp };
    } else {
      const count = Math.max(1, Math.ceil(c.size / c.part_size));
      // A part whose digest is still to be declared gets its URL from POST /assets/{id}/checksums only.
      const partNumbers = Array.from({ length: count }, (_, i) => i + 1).filter(
        (n) => c.part_sha256?.[n - 1] !== null,
      );
      const parts = await deps.storage.presignParts(uploadKey(c.storage_key), c.upload_id, {
        size: c.size,
        partSize: c.part_size,
        partNumbers,
        expiresInS: ttl,
        partSha256: c.part_sha256,
      });
      uploads[c.name] = { multipart: true, upload_id: c.upload_id, part_size: c.part_size, parts };
    }
  }
  return uploads;
}

async function createInline(deps: AssetDeps, principal: Principal, input: CreateAssetBody) {
  const json = input.content_json !== undefined;
  const text = json ? JSON.stringify(input.content_json) : input.content!;
  const body = Buffer.from(text, 'utf8');
  if (body.length > deps.config.inlineMaxBytes) {
    throw badRequest(
      'inline_too_large',
      `inline content is ${body.length} bytes; the limit is ${deps.config.inlineMaxBytes} (use presign: true for larger assets)`,
    );
  }
  const where = await placement(deps, principal, input);
  const id = randomUUID();
  const contentType = input.content_type ?? (json ? 'application/json' : 'text/plain; charset=utf-8');
  const component = {
    name: 'content',
    size: body.length,
    content_type: contentType,
    sha256: createHash('sha256').update(body).digest('hex'),
    storage_key: storageKey(id, 'content'),
    part_size: null,
    part_sha256: null,
  };
  // Bytes first: a record is never ready without its content behind it.
  await deps.storage.putObject(component.storage_key, body, contentType);
  const searchable = SEARCHABLE_KINDS.includes(input.kind);
  await deps.db.transaction(async (tx) => {
    await repo.insertAsset(
      tx,
      { id, ...where, kind: input.kind, name: input.name, metadata: input.metadata ?? {}, inline: true },
      [component],
    );
    await repo.markReady(tx, id, searchable ? text.replaceAll('\u0000', '') : null, searchable);
  });
  return toApi((await repo.findAsset(deps.db, principal, id))!);
}

export async function getAsset(deps: AssetDeps, principal: Principal, id: string) {
  const row = await repo.findAsset(deps.db, principal, id);
  if (!row) throw notFound('asset');
  return row;
}

/**
 * Fresh upload URLs for a pending asset (a resumed client whose URLs expired); a ready asset is immutable.
 */
export async function representAsset(
  deps: AssetDeps,
  principal: Principal,
  id: string,
  only: string[] | undefined,
) {
  const asset = await getAsset(deps, principal, id);
  if (asset.state === 'ready')
    throw conflict('asset_ready', 'the asset is ready and immutable; create a new asset instead');
  const unknown = (only ?? []).filter((n) => !asset.components.some((c) => c.name === n));
  if (unknown.length > 0) throw badRequest('unknown_component', `no such component: ${unknown.join(', ')}`);
  return { ...toApi(asset), uploads: await presignUploads(deps, id, asset.components, only) };
}

/**
 * POST /assets/{id}/checksums: records digests declared after create (each once; the same again is fine) and
 * answers the upload URLs of what was declared, with the digest signed in where the store verifies checksums.
 * A client hashes the next file (or part) while this one is sent.
 */
export async function declareChecksums(
  deps: AssetDeps,
  principal: Principal,
  id: string,
  declared: Array<{ name: string; sha256?: string; parts?: Array<{ part_number: number; sha256: string }> }>,
) {
  // Called once per batch of files hashed: the state and the named components only, not the whole asset.
  const state = await repo.findVisibleAssetState(deps.db, principal, id);
  if (!state) throw notFound('asset');
  const ready = () => conflict('asset_ready', 'the asset is ready and immutable; create a new asset instead');
  if (state === 'ready') throw ready();
  const names = declared.map((d) => d.name);
  if (new Set(names).size !== names.length)
    throw badRequest('duplicate_component', 'each component is named once per call');
  const rows = await deps.db.transaction(async (tx) => {
    const locked = await repo.lockComponents(tx, id, names);
    const unknown = names.filter((n) => !locked.some((c) => c.name === n));
    if (unknown.length > 0) throw badRequest('unknown_component', `no such component: ${unknown.join(', ')}`);
    if (locked.some((c) => c.state !== 'pending')) throw ready();
    const merged = locked.map((row) =>
      mergeChecksums(
        row,
        declared.find((d) => d.name === row.name)!,
      ),
    );
    await repo.setComponentChecksums(tx, id, merged);
    return merged;
  });
  const ttl = deps.config.storage.uploadUrlTtlS;
  const uploads: Record<string, unknown> = {};
  for (const c of rows) {
    const d = declared.find((x) => x.name === c.name)!;
    if (c.part_size === null) {
      uploads[c.name] = await presignSinglePut(deps, c, ttl);
    } else {
      const parts = d.parts?.length
        ? await deps.storage.presignParts(uploadKey(c.storage_key), c.upload_id!, {
            size: c.size,
            partSize: c.part_size,
            partNumbers: d.parts.map((p) => p.part_number),
            expiresInS: ttl,
            partSha256: c.part_sha256,
          })
        : [];
      uploads[c.name] = { multipart: true, upload_id: c.upload_id, part_size: c.part_size, parts };
    }
  }
  return { uploads };
}

/**
 * The one PUT of a component uploaded whole, its sha256 signed in when it is known and the store verifies it.
 */
function presignSinglePut(
  deps: AssetDeps,
  c: Pick<repo.ComponentRow, 'size' | 'content_type' | 'sha256' | 'storage_key'>,
  ttl: number,
) {
  return deps.storage.presignPut(uploadKey(c.storage_key), {
    size: c.size,
    contentType: c.content_type,
    expiresInS: ttl,
    sha256: c.sha256,
  });
}

/**
 * A component's digests with a declaration merged in; a digest already declared may only be declared again
 * as is.
 */
function mergeChecksums(
  row: repo.ComponentRow,
  d: { sha256?: string; parts?: Array<{ part_number: number; sha256: string }> },
): repo.ComponentRow {
  const clash = (what: string) =>
    conflict('checksum_conflict', `component ${row.name}: ${what} was declared before with another sha256`, {
      component: row.name,
    });
  let sha256 = row.sha256;
  if (d.sha256 !== undefined) {
    const declared = d.sha256.toLowerCase();
    if (sha256 !== null && sha256 !== declared) throw clash('its sha256');
    sha256 = declared;
  }
  let partSha256 = row.part_sha256;
  if (d.parts !== undefined) {
    if (row.part_size === null)
      throw badRequest(
        'invalid_part_checksums',
        `component ${row.name} goes in one PUT: declare its sha256, not parts`,
      );
    const count = Math.max(1, Math.ceil(row.size / row.part_size));
    const bad = d.parts.find((p) => p.part_number > count);
    if (bad)
      throw badRequest(
        'invalid_part_checksums',
        `component ${row.name} has ${count} parts; there is no part ${bad.part_number}`,
      );
    // Without part digests on the row the store does not verify this upload's parts: finalize reads it back.
    if (partSha256 !== null) {
      partSha256 = [...partSha256];
      for (const p of d.parts) {
        const declared = p.sha256.toLowerCase();
        const known = partSha256[p.part_number - 1];
        if (known != null && known !== declared) throw clash(`part ${p.part_number}`);
        partSha256[p.part_number - 1] = declared;
      }
    }
  }
  return { ...row, sha256, part_sha256: partSha256 };
}

/**
 * Checks every declared component is in storage with its declared size (and checksum), then marks the asset
 * ready. A missing or wrong component answers 409 naming it and leaves the asset pending. Finalizing a ready
 * asset answers it unchanged.
 */
export async function finalizeAsset(
  deps: AssetDeps,
  principal: Principal,
  id: string,
  log: { warn(o: object, m: string): void },
) {
  const asset = await getAsset(deps, principal, id);
  if (asset.state === 'ready') return toApi(asset);
  for (const c of asset.components) {
    // A deferred-checksums component must have every digest declared: the store verified its parts
    // against them.
    const undeclared = c.part_sha256?.findIndex((h) => h === null) ?? -1;
    if (c.part_sha256 && (undeclared >= 0 || c.sha256 === null))
      throw conflict(
        'component_checksum_missing',
        undeclared >= 0
          ? `component ${c.name}: the sha256 of part ${undeclared + 1} was never declared`
          : `component ${c.name}: its sha256 was never declared`,
        { component: c.name },
      );
    await moveUpload(deps, c);
    const stored = await deps.storage.head(c.storage_key);
    if (!stored)
      throw conflict('component_missing', `component ${c.name} has not been uploaded`, { component: c.name });
    if (stored.size !== c.size) {
      throw conflict(
        'component_size_mismatch',
        `component ${c.name} is ${stored.size} bytes in storage; ${c.size} were declared`,
        { component: c.name, declared: c.size, stored: stored.size },
      );
    }
    // The store vouches when it verified the declared checksums on upload; otherwise every byte is
    // read again.
    if (
      c.sha256 &&
      !(await deps.storage.vouches(c.storage_key, {
        sha256: c.sha256,
        partSha256: c.part_sha256 as string[] | null,
      }))
    ) {
      const actual = await deps.storage.sha256(c.storage_key);
      if (actual !== c.sha256)
        throw conflict(
          'component_checksum_mismatch',
          `component ${c.name} does not match its declared sha256`,
          { component: c.name, declared: c.sha256, stored: actual },
        );
    }
  }
  const searchable = SEARCHABLE_KINDS.includes(asset.kind);
  let text: string | null = null;
  if (searchable) {
    const parts: string[] = [];
    for (const c of asset.components) {
      const open = () => deps.storage.getObject(c.storage_key);
      // Text is a search aid: a PDF that cannot be read within the limits leaves the asset findable by name.
      const t = await extractText(c.content_type, c.size, open, deps.config.textExtraction).catch(
        (err: unknown) => {
          log.warn(
            { err, asset: id, component: c.name },
            'no text extracted; the asset is indexed without it',
          );
          return undefined;
        },
      );
      if (t) parts.push(t);
    }
    text = parts.join('\n\n') || null;
  }
  await repo.markReady(deps.db, id, text, searchable);
  return toApi((await repo.findAsset(deps.db, principal, id))!);
}

/**
 * Moves a component's upload to its storage key, where the checks below and every download read it. Nothing
 * to move is fine: an earlier finalize that stopped at another component moved this one already.
 */
async function moveUpload(deps: AssetDeps, c: repo.ComponentRow): Promise<void> {
  const from = uploadKey(c.storage_key);
  if (c.upload_id) {
    try {
      await deps.storage.completeMultipart(from, c.upload_id, {
        size: c.size,
        partSize: c.part_size!,
        partSha256: c.part_sha256 as string[] | null,
      });
    } catch (err) {
      if ((await deps.storage.head(c.storage_key))?.size !== c.size) throw componentError(err, c.name);
    }
  }
  if (await deps.storage.head(from)) await deps.storage.moveObject(from, c.storage_key);
}

function componentError(err: unknown, component: string): AppError {
  const e = err as { code?: string; message?: string; details?: unknown };
  if (e.code === 'incomplete_upload')
    return conflict('component_incomplete', `component ${component}: ${e.message}`, {
      component,
      ...(e.details as object),
    });
  if (e.code === 'checksum_mismatch')
    return conflict('component_checksum_mismatch', `component ${component}: ${e.message}`, { component });
  throw err;
}

/** Presigned GET URLs for every component of a ready asset. */
export async function downloadUrls(deps: AssetDeps, asset: repo.AssetRow) {
  if (asset.state !== 'ready') throw conflict('asset_not_ready', 'the asset is not finalized yet');
  const ttl = deps.config.storage.uploadUrlTtlS;
  const components: Record<string, unknown> = {};
  for (const c of asset.components) {
    const filename = c.name.split('/').at(-1);
    components[c.name] = {
      size: c.size,
      content_type: c.content_type,
      sha256: c.sha256,
      ...(await deps.storage.presignGet(c.storage_key, { expiresInS: ttl, filename })),
    };
  }
  return { asset_id: asset.id, components };
}

export async function listAssets(
  deps: AssetDeps,
  principal: Principal,
  q: {
    experiment_id?: string;
    n?: number;
    r?: number;
    kind?: string;
    state?: string;
    name?: string;
    limit?: number;
    cursor?: string;
  },
  afterId: string | undefined,
) {
  let runId: string | undefined;
  if (q.n !== undefined || q.r !== undefined) {
    if (!q.experiment_id || q.n === undefined || q.r === undefined)
      throw badRequest('incomplete_run', 'filter by run with experiment_id, n and r together');
    runId = (await getRun(deps.db, principal, { experimentId: q.experiment_id, n: q.n, r: q.r })).id;
  }
  const limit = q.limit ?? 50;
  const rows = await repo.listAssets(deps.db, principal, {
    experimentId: q.experiment_id,
    runId,
    kind: q.kind,
    state: q.state,
    name: q.name,
    afterId,
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  return { items: page.map(toApi), last: rows.length > limit ? page.at(-1)!.id : undefined };
}
