import type { Asset, AssetDownload, AssetState, DeclaredUploads, PresignedAsset } from '@assay/contract';
import type { OrganizationChoice, OrganizationDefault } from '../core/organization.ts';
import { path, query } from '../core/path.ts';
import type { Transport } from '../core/transport.ts';
import type { Page } from './experiments.ts';

export type {
  AssetState,
  ComponentInfo,
  MultipartTarget,
  PresignedAsset,
  PresignedRequest,
  UploadTarget,
} from '@assay/contract';

/** An asset as the service answers it (the contract's Asset). */
export type AssetData = Asset;
/** Presigned download URLs of a ready asset's components. */
export type DownloadData = AssetDownload;

/** A run as the client addresses it in a call: experiment id, variation number and run number. */
export interface RunRef {
  experimentId: string;
  n: number;
  r: number;
}

export interface AssetLinks {
  kind: string;
  name: string;
  metadata?: Record<string, unknown>;
  experimentId?: string;
  run?: RunRef;
  organizationId?: OrganizationChoice;
}

export interface ComponentDeclaration {
  name: string;
  size: number;
  contentType?: string;
  sha256?: string;
  /** The layout `partSha256` was computed for; with it the service uploads the component in those parts. */
  partSize?: number;
  /** The sha256 (hex) of each part of `partSize` bytes: the store verifies every part against it. */
  partSha256?: string[];
}

/** The assets namespace: records whose bytes live in object storage, uploaded through presigned URLs. */
export class Assets {
  readonly #t: Transport;
  readonly #org: OrganizationDefault;

  constructor(transport: Transport, organization: OrganizationDefault) {
    this.#t = transport;
    this.#org = organization;
  }

  async #links(links: AssetLinks) {
    const linked = links.run !== undefined || links.experimentId !== undefined;
    return {
      kind: links.kind,
      name: links.name,
      metadata: links.metadata,
      experiment_id: links.experimentId,
      run: links.run && { experiment_id: links.run.experimentId, n: links.run.n, r: links.run.r },
      // A linked asset lives where its experiment lives; the scope matters only for unlinked ones.
      organization_id: linked ? undefined : await this.#org.forCall(links.organizationId),
    };
  }

  /** Step 1 of an upload: declares the components and answers presigned upload targets keyed by name. */
  async createPresigned(
    links: AssetLinks & {
      components: ComponentDeclaration[];
      /** Digests come later, through `declareChecksums`, which answers each URL (none are answered here). */
      deferredChecksums?: boolean;
    },
  ): Promise<PresignedAsset> {
    const components = links.components.map((c) => ({
      name: c.name,
      size: c.size,
      content_type: c.contentType,
      sha256: c.sha256,
      part_size: c.partSize,
      part_sha256: c.partSha256,
    }));
    return this.#t.post('/assets', {
      ...(await this.#links(links)),
      presign: true,
      components,
      deferred_checksums: links.deferredChecksums,
    });
  }

  /**
   * Declares the sha256 of components (or of parts of multipart ones) of a pending asset; answers the upload
   * targets of exactly what was declared, with the digest signed in where the store verifies it.
   */
  declareChecksums(
    id: string,
    components: Array<{
      name: string;
      sha256?: string;
      parts?: Array<{ partNumber: number; sha256: string }>;
    }>,
  ): Promise<DeclaredUploads> {
    return this.#t.post(path`/assets/${id}/checksums`, {
      components: components.map((c) => ({
        name: c.name,
        sha256: c.sha256,
        parts: c.parts?.map((p) => ({ part_number: p.partNumber, sha256: p.sha256 })),
      })),
    });
  }

  /** A small asset (report, environment snapshot) with inline content; the server finalizes it at once. */
  async createInline(
    links: AssetLinks &
      ({ content: string; contentType?: string } | { contentJson: Record<string, unknown> }),
  ): Promise<AssetData> {
    const body =
      'contentJson' in links
        ? { content_json: links.contentJson }
        : { content: links.content, content_type: links.contentType };
    return this.#t.post('/assets', { ...(await this.#links(links)), ...body });
  }

  /** Fresh upload targets for a pending asset whose earlier URLs expired. */
  presign(id: string, components?: string[]): Promise<PresignedAsset> {
    return this.#t.post(path`/assets/${id}/presign`, { components });
  }

  /**
   * Step 3: the server checks every component is stored as declared; the asset becomes ready and immutable.
   */
  finalize(id: string): Promise<AssetData> {
    return this.#t.request('PUT', path`/assets/${id}/finalize`);
  }

  get(id: string): Promise<AssetData> {
    return this.#t.get(path`/assets/${id}`);
  }

  /** Presigned download URLs of a ready asset. */
  download(id: string): Promise<DownloadData> {
    return this.#t.get(path`/assets/${id}/download`);
  }

  /** Assets by experiment, run, kind or state, newest first. */
  list(
    params: {
      experimentId?: string;
      run?: RunRef;
      kind?: string;
      state?: AssetState;
      /** Only assets of exactly this name. */
      name?: string;
      limit?: number;
      cursor?: string;
    } = {},
  ): Promise<Page<AssetData>> {
    const run = params.run;
    return this.#t.get(
      `/assets${query({ experiment_id: run?.experimentId ?? params.experimentId, n: run?.n, r: run?.r, kind: params.kind, state: params.state, name: params.name, limit: params.limit, cursor: params.cursor })}`,
    );
  }
}
