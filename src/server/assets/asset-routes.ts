import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import {
  Asset,
  AssetDownload,
  AssetList,
  AssetParams,
  Checkpoint,
  CreatedAsset,
  CreateAssetBody,
  DeclareChecksumsBody,
  DeclaredUploads,
  ListAssetsQuery,
  NoBody,
  PresignAssetBody,
  PresignedAsset,
  RunParams,
} from '@assay/contract';
import { decodeCursor, encodeCursor } from '../http/cursor.ts';
import { notFound } from '../http/errors.ts';
import { withErrors } from '../http/schemas.ts';
import { getRun } from '../runs/run-service.ts';
import { newestCheckpointOfChain } from './asset-repository.ts';
import * as service from './asset-service.ts';

const tags = ['assets'];

export function assetRoutes(deps: service.AssetDeps) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const read = { scope: 'assets:read' as const, workerKeys: true };
    const write = { scope: 'assets:write' as const, workerKeys: true };

    app.post(
      '/assets',
      {
        config: write,
        schema: {
          tags,
          operationId: 'createAsset',
          summary:
            'Create an asset: presign: true with component declarations, or inline content (finalized at once)',
          body: CreateAssetBody,
          response: withErrors({ 201: CreatedAsset }),
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
          operationId: 'listAssets',
          summary: 'List assets by experiment, run (experiment_id, n, r), kind, state or name',
          querystring: ListAssetsQuery,
          response: withErrors({ 200: AssetList }),
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
        schema: {
          tags,
          operationId: 'getAsset',
          summary: 'Asset metadata',
          params: AssetParams,
          response: withErrors({ 200: Asset }),
        },
      },
      async (req) => service.toApi(await service.getAsset(deps, req.principal, req.params.id)),
    );
    app.post(
      '/assets/:id/presign',
      {
        config: write,
        schema: {
          tags,
          operationId: 'presignAsset',
          summary: 'Fresh upload URLs for a pending asset (resume after the first ones expired)',
          params: AssetParams,
          body: PresignAssetBody,
          response: withErrors({ 200: PresignedAsset }, 409),
        },
      },
      (req) => service.representAsset(deps, req.principal, req.params.id, req.body.components),
    );
    app.post(
      '/assets/:id/checksums',
      {
        config: write,
        schema: {
          tags,
          operationId: 'declareAssetChecksums',
          summary:
            'Declare the sha256 of components (or of parts) of a pending asset created with deferred_checksums; answers their upload URLs',
          params: AssetParams,
          body: DeclareChecksumsBody,
          response: withErrors({ 200: DeclaredUploads }, 409),
        },
      },
      (req) => service.declareChecksums(deps, req.principal, req.params.id, req.body.components),
    );
    app.put(
      '/assets/:id/finalize',
      {
        config: write,
        schema: {
          tags,
          operationId: 'finalizeAsset',
          summary: 'Check every component is in storage as declared, then ready and immutable',
          params: AssetParams,
          body: NoBody,
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
          operationId: 'downloadAsset',
          summary: 'Presigned download URLs of a ready asset',
          params: AssetParams,
          response: withErrors({ 200: AssetDownload }, 409),
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
          operationId: 'getRunCheckpoint',
          summary: "The newest ready checkpoint of the run's chain, with download URLs (404 when none)",
          description:
            'The chain is the run itself and, transitively, the run it recovers (`recovers_run_id`, a lost ' +
            'instance), the sweep run it retries (`retries_run_id`) and the run it was created to resume from ' +
            '(`resumes_from_run_id`). Other runs of the variation are not on it: a new run without ' +
            '`resume_from` gets 404 and starts from scratch.',
          params: RunParams,
          response: withErrors({ 200: Checkpoint }),
        },
      },
      async (req) => {
        const run = await getRun(deps.db, req.principal, {
          experimentId: req.params.id,
          n: req.params.n,
          r: req.params.r,
        });
        const checkpoint = await newestCheckpointOfChain(deps.db, run.id);
        if (!checkpoint) throw notFound('checkpoint');
        return { asset: service.toApi(checkpoint), download: await service.downloadUrls(deps, checkpoint) };
      },
    );
  };
}
