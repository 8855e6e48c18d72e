import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { decodeCursor, encodeCursor } from '../http/cursor.ts';
import { notFound } from '../http/errors.ts';
import {
  JsonObject,
  Nullable,
  NullableTimestamp,
  OrganizationRef,
  PageQuery,
  Timestamp,
  Uuid,
  withErrors,
} from '../http/schemas.ts';
import { getRun } from '../runs/run-service.ts';
import { newestCheckpoint } from './asset-repository.ts';
import * as service from './asset-service.ts';

const tags = ['assets'];
const MAX_OBJECT_BYTES = 5 * 1024 ** 4; // S3's limit for one object: 5 TiB
const Int = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });
// Path-like names (`plots/loss.png`) whose segments never start with a dot, so `..` cannot appear.
const ComponentName = Type.String({
  pattern: '^[A-Za-z0-9_][A-Za-z0-9._-]*(/[A-Za-z0-9_][A-Za-z0-9._-]*)*$',
  maxLength: 255,
});
const Kind = Type.String({
  pattern: '^[a-z][a-z0-9_]{0,39}$',
  description: 'report, environment, paper, document, output, checkpoint, …',
});
const Sha256 = Type.String({ pattern: '^[0-9a-fA-F]{64}$' });
const RunRef = Type.Object({ experiment_id: Uuid, n: Int, r: Int }, { additionalProperties: false });

const Component = Type.Object({
  size: Type.Integer(),
  content_type: Type.String(),
  sha256: Nullable(Type.String()),
});
export const Asset = Type.Object(
  {
    id: Uuid,
    kind: Type.String(),
    name: Type.String(),
    state: Type.Union([Type.Literal('pending'), Type.Literal('ready')]),
    inline: Type.Boolean(),
    components: Type.Record(Type.String(), Component),
    metadata: JsonObject,
    experiment_id: Nullable(Uuid),
    run_id: Nullable(Uuid),
    organization_id: Nullable(Uuid),
    created_at: Timestamp,
    finalized_at: NullableTimestamp,
  },
  { $id: 'Asset' },
);
const Presigned = Type.Object({
  method: Type.String(),
  url: Type.String(),
  headers: Type.Record(Type.String(), Type.String()),
  expires_at: Timestamp,
});
const Upload = Type.Union([
  Presigned,
  Type.Object({
    multipart: Type.Literal(true),
    upload_id: Type.String(),
    part_size: Type.Integer(),
    parts: Type.Array(
      Type.Object({ part_number: Type.Integer(), size: Type.Integer(), ...Presigned.properties }),
    ),
  }),
]);
const AssetWithUploads = Type.Object({
  ...Asset.properties,
  uploads: Type.Record(Type.String(), Upload, { description: 'upload targets keyed by component name' }),
});
const Download = Type.Object({
  asset_id: Uuid,
  components: Type.Record(Type.String(), Type.Object({ ...Component.properties, ...Presigned.properties })),
});

const CreateAsset = Type.Object(
  {
    kind: Kind,
    name: Type.String({ minLength: 1, maxLength: 500 }),
    metadata: Type.Optional(JsonObject),
    experiment_id: Type.Optional(Uuid),
    run: Type.Optional(RunRef),
    organization_id: Type.Optional(OrganizationRef),
    presign: Type.Optional(Type.Boolean()),
    components: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: ComponentName,
            size: Type.Integer({ minimum: 0, maximum: MAX_OBJECT_BYTES }),
            content_type: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            sha256: Type.Optional(Sha256),
          },
          { additionalProperties: false },
        ),
        { minItems: 1, maxItems: 1000 },
      ),
    ),
    content: Type.Optional(Type.String()),
    content_json: Type.Optional(JsonObject),
    content_type: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);

export function assetRoutes(deps: service.AssetDeps) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const read = { scope: 'assets:read' as const, workerKeys: true };
    const write = { scope: 'assets:write' as const, workerKeys: true };
    const Params = Type.Object({ id: Uuid });

    app.post(
      '/assets',
      {
        config: write,
        schema: {
          tags,
          summary:
            'Create an asset: presign: true with component declarations, or inline content (finalized at once)',
          body: CreateAsset,
          response: withErrors({ 201: Type.Union([AssetWithUploads, Asset]) }),
        },
      },
      async (req, reply) => {
        reply.code(201);
        return service.createAsset(deps, req.principal, req.body);
      },
    );
    app.get(
      '/assets',
      {
        config: read,
        schema: {
          tags,
          summary: 'List assets by experiment, run (experiment_id, n, r), kind or state',
          querystring: Type.Object(
            {
              ...PageQuery,
              experiment_id: Type.Optional(Uuid),
              n: Type.Optional(Int),
              r: Type.Optional(Int),
              kind: Type.Optional(Kind),
              state: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('ready')])),
            },
            { additionalProperties: false },
          ),
          response: withErrors({
            200: Type.Object({ items: Type.Array(Asset), next_cursor: Nullable(Type.String()) }),
          }),
        },
      },
      async (req) => {
        const { items, last } = await service.listAssets(
          deps,
          req.principal,
          req.query,
          decodeCursor(req.query.cursor),
        );
        return { items, next_cursor: last ? encodeCursor(last) : null };
      },
    );
    app.get(
      '/assets/:id',
      {
        config: read,
        schema: { tags, summary: 'Asset metadata', params: Params, response: withErrors({ 200: Asset }) },
      },
      async (req) => service.toApi(await service.getAsset(deps, req.principal, req.params.id)),
    );
    app.post(
      '/assets/:id/presign',
      {
        config: write,
        schema: {
          tags,
          summary: 'Fresh upload URLs for a pending asset (resume after the first ones expired)',
          params: Params,
          body: Type.Object(
            { components: Type.Optional(Type.Array(ComponentName, { maxItems: 1000 })) },
            { additionalProperties: false },
          ),
          response: withErrors({ 200: AssetWithUploads }, 409),
        },
      },
      (req) => service.representAsset(deps, req.principal, req.params.id, req.body.components),
    );
    app.put(
      '/assets/:id/finalize',
      {
        config: write,
        schema: {
          tags,
          summary: 'Check every component is in storage as declared, then ready and immutable',
          params: Params,
          body: Type.Optional(Type.Object({}, { additionalProperties: false })),
          response: withErrors({ 200: Asset }, 409),
        },
      },
      (req) => service.finalizeAsset(deps, req.principal, req.params.id, req.log),
    );
    app.get(
      '/assets/:id/download',
      {
        config: read,
        schema: {
          tags,
          summary: 'Presigned download URLs of a ready asset',
          params: Params,
          response: withErrors({ 200: Download }, 409),
        },
      },
      async (req) => service.downloadUrls(deps, await service.getAsset(deps, req.principal, req.params.id)),
    );
    app.get(
      '/experiments/:id/variations/:n/runs/:r/checkpoint',
      {
        config: read,
        schema: {
          tags: ['runs'],
          summary: 'The newest ready checkpoint of the variation, with download URLs (404 when none)',
          params: Type.Object({ id: Uuid, n: Int, r: Int }),
          response: withErrors({ 200: Type.Object({ asset: Asset, download: Download }) }),
        },
      },
      async (req) => {
        const run = await getRun(deps.db, req.principal, {
          experimentId: req.params.id,
          n: req.params.n,
          r: req.params.r,
        });
        const checkpoint = await newestCheckpoint(deps.db, run.experiment_id, run.n);
        if (!checkpoint) throw notFound('checkpoint');
        return { asset: service.toApi(checkpoint), download: await service.downloadUrls(deps, checkpoint) };
      },
    );
  };
}
