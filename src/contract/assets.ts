import { Type, type Static } from 'typebox';
import {
  JsonObject,
  Nullable,
  NullableTimestamp,
  OneOf,
  OrganizationRef,
  Page,
  PageQuery,
  PositiveInt32,
  Timestamp,
  Uuid,
} from './common.ts';
import { RunAddress } from './runs.ts';
import { ASSET_KINDS, ASSET_STATES } from './enums.ts';

export const AssetStateSchema = OneOf(ASSET_STATES);

export const MAX_OBJECT_BYTES = 5 * 1024 ** 4; // S3's limit for one object: 5 TiB

// Path-like names (`plots/loss.png`) whose segments never start with a dot, so `..` cannot appear.
export const ComponentName = Type.String({
  pattern: '^[A-Za-z0-9_][A-Za-z0-9._-]*(/[A-Za-z0-9_][A-Za-z0-9._-]*)*$',
  maxLength: 255,
});
export const AssetKind = Type.String({
  pattern: '^[a-z][a-z0-9_]{0,39}$',
  description: `${ASSET_KINDS.join(', ')}, …`,
});
const Sha256 = Type.String({ pattern: '^[0-9a-fA-F]{64}$' });

export const ComponentInfo = Type.Object({
  size: Type.Integer(),
  content_type: Type.String(),
  sha256: Nullable(Type.String()),
});
export type ComponentInfo = Static<typeof ComponentInfo>;

export const Asset = Type.Object(
  {
    id: Uuid,
    kind: Type.String(),
    name: Type.String(),
    state: AssetStateSchema,
    inline: Type.Boolean(),
    components: Type.Record(Type.String(), ComponentInfo),
    metadata: JsonObject,
    experiment_id: Nullable(Uuid),
    run_id: Nullable(Uuid),
    organization_id: Nullable(Uuid),
    created_at: Timestamp,
    finalized_at: NullableTimestamp,
  },
  { $id: 'Asset' },
);
export type Asset = Static<typeof Asset>;

/** One HTTP request the caller makes straight to object storage, signed by the service. */
export const PresignedRequest = Type.Object({
  method: OneOf(['PUT', 'GET']),
  url: Type.String(),
  headers: Type.Record(Type.String(), Type.String()),
  expires_at: Timestamp,
});
export type PresignedRequest = Static<typeof PresignedRequest>;

export const MultipartTarget = Type.Object({
  multipart: Type.Literal(true),
  upload_id: Type.String(),
  part_size: Type.Integer(),
  parts: Type.Array(
    Type.Object({ part_number: Type.Integer(), size: Type.Integer(), ...PresignedRequest.properties }),
  ),
});
export type MultipartTarget = Static<typeof MultipartTarget>;

/** Where one component's bytes go: a single PUT, or the parts of a multipart upload. */
export const UploadTarget = Type.Union([PresignedRequest, MultipartTarget]);
export type UploadTarget = Static<typeof UploadTarget>;

export const PresignedAsset = Type.Object({
  ...Asset.properties,
  uploads: Type.Record(Type.String(), UploadTarget, {
    description: 'upload targets keyed by component name',
  }),
});
export type PresignedAsset = Static<typeof PresignedAsset>;

/** What creating an asset answers: with upload targets when presigned, the finalized asset when inline. */
export const CreatedAsset = Type.Union([PresignedAsset, Asset]);

export const AssetDownload = Type.Object({
  asset_id: Uuid,
  components: Type.Record(
    Type.String(),
    Type.Object({ ...ComponentInfo.properties, ...PresignedRequest.properties }),
  ),
});
export type AssetDownload = Static<typeof AssetDownload>;

/** One component declared when an asset is created: its name, size and, when known, digests. */
export const ComponentDeclaration = Type.Object(
  {
    name: ComponentName,
    size: Type.Integer({ minimum: 0, maximum: MAX_OBJECT_BYTES }),
    content_type: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    sha256: Type.Optional(Sha256),
    part_size: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          'the part layout part_sha256 was computed for; give both or neither (see part_sha256). With deferred_checksums, alone: the layout whose part digests come later',
      }),
    ),
    part_sha256: Type.Optional(
      Type.Array(Sha256, {
        minItems: 2,
        maxItems: 10_000,
        description:
          'sha256 of each part of the file cut in parts of part_size bytes. The service then uploads the component in those parts and has the store verify every part on upload, when the store takes that layout and verifies checksums; otherwise it is ignored',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ComponentDeclaration = Static<typeof ComponentDeclaration>;

export const CreateAssetBody = Type.Object(
  {
    kind: AssetKind,
    name: Type.String({ minLength: 1, maxLength: 500 }),
    metadata: Type.Optional(JsonObject),
    experiment_id: Type.Optional(Uuid),
    run: Type.Optional(RunAddress),
    organization_id: Type.Optional(OrganizationRef),
    presign: Type.Optional(Type.Boolean()),
    components: Type.Optional(Type.Array(ComponentDeclaration, { minItems: 1, maxItems: 1000 })),
    deferred_checksums: Type.Optional(
      Type.Boolean({
        description:
          'with presign: the components are declared without sha256 (and part_sha256); each digest is declared later with POST /assets/{id}/checksums, which answers the upload URL with the digest signed in. The uploads then hold only multipart components, with no parts yet. Lets a client hash a file while the previous one is being sent',
      }),
    ),
    content: Type.Optional(Type.String()),
    content_json: Type.Optional(JsonObject),
    content_type: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type CreateAssetBody = Static<typeof CreateAssetBody>;

export const ListAssetsQuery = Type.Object(
  {
    ...PageQuery,
    experiment_id: Type.Optional(Uuid),
    n: Type.Optional(PositiveInt32),
    r: Type.Optional(PositiveInt32),
    kind: Type.Optional(AssetKind),
    state: Type.Optional(AssetStateSchema),
    name: Type.Optional(
      Type.String({ minLength: 1, maxLength: 500, description: 'exactly this asset name' }),
    ),
  },
  { additionalProperties: false },
);
export type ListAssetsQuery = Static<typeof ListAssetsQuery>;

export const AssetList = Page(Asset);

export const PresignAssetBody = Type.Object(
  { components: Type.Optional(Type.Array(ComponentName, { maxItems: 1000 })) },
  { additionalProperties: false },
);

/**
 * Digests of components (and of parts of multipart components) declared after the asset was created: each is
 * recorded once (the same digest again is fine, another one a 409), and the answer holds the upload URLs of
 * exactly what this call declared, with the digest signed in where the store verifies it.
 */
export const DeclareChecksumsBody = Type.Object(
  {
    components: Type.Array(
      Type.Object(
        {
          name: ComponentName,
          sha256: Type.Optional(Sha256),
          parts: Type.Optional(
            Type.Array(
              Type.Object(
                { part_number: Type.Integer({ minimum: 1, maximum: 10_000 }), sha256: Sha256 },
                { additionalProperties: false },
              ),
              { minItems: 1, maxItems: 10_000 },
            ),
          ),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 1000 },
    ),
  },
  { additionalProperties: false },
);
export type DeclareChecksumsBody = Static<typeof DeclareChecksumsBody>;

/**
 * Upload targets of what a checksums call declared, keyed by component name: a single PUT for a component
 * whose sha256 was declared, the declared parts for a multipart one (none when only its whole sha256 was).
 */
export const DeclaredUploads = Type.Object({
  uploads: Type.Record(Type.String(), UploadTarget, {
    description: 'upload targets keyed by component name',
  }),
});
export type DeclaredUploads = Static<typeof DeclaredUploads>;

/** The newest ready checkpoint of a run's variation, with its download URLs. */
export const Checkpoint = Type.Object({ asset: Asset, download: AssetDownload });
export type Checkpoint = Static<typeof Checkpoint>;

/** A run's asset as the orchestrator lists it, without components. */
export const RunAssetSummary = Type.Object({
  id: Uuid,
  kind: Type.String(),
  name: Type.String(),
  state: AssetStateSchema,
});
export type RunAssetSummary = Static<typeof RunAssetSummary>;

export const AssetParams = Type.Object({ id: Uuid });
