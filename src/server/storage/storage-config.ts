import path from 'node:path';
import { ConfigError } from '../config-error.ts';
import { flag, integer, text, type Env } from '../env-values.ts';

const MIB = 1024 ** 2;
const GIB = 1024 ** 3;

interface CommonStorageConfig {
  /** Lifetime of presigned upload URLs. */
  readonly uploadUrlTtlS: number;
  /** Components larger than this upload in parts. */
  readonly multipartThresholdBytes: number;
  /** Requested part size (a backend may grow it to stay within 10,000 parts). */
  readonly multipartPartBytes: number;
}

export interface LocalStorageConfig extends CommonStorageConfig {
  readonly kind: 'local';
  readonly dir: string;
  /** ASSAY_STORAGE_SECRET; when undefined the factory uses (or creates) `secretFile`. */
  readonly secret: string | undefined;
  readonly secretFile: string;
  /** Base of the signed URLs, without a trailing slash. */
  readonly publicUrl: string;
}

export interface S3StorageConfig extends CommonStorageConfig {
  readonly kind: 's3';
  readonly bucket: string;
  readonly region: string;
  readonly endpoint: string | undefined;
  readonly forcePathStyle: boolean;
  /** Undefined: the AWS default credential chain (environment, profile, instance role). */
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string } | undefined;
}

export type StorageConfig = LocalStorageConfig | S3StorageConfig;

/** Rows for the README's configuration table, like SETTINGS in config.ts. */
export const STORAGE_SETTINGS = [
  [
    'ASSAY_STORAGE',
    'local',
    'Object storage backend: `local` (files in ASSAY_STORAGE_DIR, served on signed URLs by the service) or `s3`',
  ],
  ['ASSAY_STORAGE_DIR', '<ASSAY_DATA_DIR>/objects', 'Directory of the local backend'],
  [
    'ASSAY_STORAGE_SECRET',
    '(generated once into <ASSAY_DATA_DIR>/storage-secret)',
    'HMAC key of local signed URLs, at least 32 characters; replicas must share it',
  ],
  ['S3_BUCKET', '(required with s3)', 'Bucket of the s3 backend'],
  ['S3_REGION', 'us-east-1', 'Region of the bucket'],
  ['S3_ENDPOINT', '(AWS)', 'Endpoint URL of an S3-compatible store'],
  ['S3_FORCE_PATH_STYLE', 'false', 'Address the bucket as a path (most S3-compatible stores need true)'],
  ['S3_ACCESS_KEY_ID', '(AWS default chain)', 'Access key; set with S3_SECRET_ACCESS_KEY or neither'],
  ['S3_SECRET_ACCESS_KEY', '(AWS default chain)', 'Secret key'],
  ['ASSAY_UPLOAD_URL_TTL_S', '3600', 'Lifetime of presigned upload and download URLs, up to 604800 (7 days)'],
  [
    'ASSAY_MULTIPART_THRESHOLD_BYTES',
    '5368709120',
    'Components larger than this upload in parts (at most 5 GiB with s3)',
  ],
  [
    'ASSAY_MULTIPART_PART_BYTES',
    '536870912',
    'Part size of multipart uploads: 5 MiB to 5 GiB with s3; any size from 1 byte with local (for tests)',
  ],
] as const;

function httpUrl(value: string, name: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError(`${name} must be an http(s) URL, got ${JSON.stringify(value)}`);
  return value.replace(/\/+$/, '');
}

/**
 * Reads the storage settings (pure: no file is touched; the local secret file is read or created by
 * `createObjectStorage`). Throws ConfigError naming the variable.
 */
export function storageConfig(env: Env, o: { dataDir: string; publicUrl: string }): StorageConfig {
  const kind = text(env, 'ASSAY_STORAGE');
  if (kind === undefined && text(env, 'S3_BUCKET')) {
    // Silently storing on local disk while the operator configured a bucket would lose data on redeploy.
    throw new ConfigError(
      'S3_BUCKET is set but ASSAY_STORAGE is not: set ASSAY_STORAGE=s3 (or ASSAY_STORAGE=local to keep files in the data directory)',
    );
  }
  if (kind !== undefined && kind !== 'local' && kind !== 's3')
    throw new ConfigError(`ASSAY_STORAGE must be local or s3, got ${JSON.stringify(kind)}`);
  const s3 = kind === 's3';
  const common: CommonStorageConfig = {
    uploadUrlTtlS: integer(env, 'ASSAY_UPLOAD_URL_TTL_S', 3600, 1, 604_800),
    // A single S3 PUT takes at most 5 GiB, so larger components must go in parts.
    multipartThresholdBytes: integer(
      env,
      'ASSAY_MULTIPART_THRESHOLD_BYTES',
      5 * GIB,
      1,
      s3 ? 5 * GIB : Number.MAX_SAFE_INTEGER,
    ),
    // S3 refuses parts under 5 MiB (but the last); local has no such floor, so tests can cut small files in parts.
    multipartPartBytes: integer(env, 'ASSAY_MULTIPART_PART_BYTES', 512 * MIB, s3 ? 5 * MIB : 1, 5 * GIB),
  };
  if (s3) return Object.freeze({ ...common, ...s3Settings(env) });

  const secret = text(env, 'ASSAY_STORAGE_SECRET');
  if (secret !== undefined && secret.length < 32)
    throw new ConfigError('ASSAY_STORAGE_SECRET must be at least 32 characters');
  return Object.freeze({
    ...common,
    kind: 'local',
    dir: path.resolve(text(env, 'ASSAY_STORAGE_DIR') ?? path.join(o.dataDir, 'objects')),
    secret,
    secretFile: path.join(path.resolve(o.dataDir), 'storage-secret'),
    publicUrl: httpUrl(o.publicUrl, 'ASSAY_PUBLIC_URL'),
  });
}

function s3Settings(env: Env): Omit<S3StorageConfig, keyof CommonStorageConfig> {
  const bucket = text(env, 'S3_BUCKET');
  if (!bucket) throw new ConfigError('S3_BUCKET is required when ASSAY_STORAGE=s3');
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    throw new ConfigError(`S3_BUCKET is not a valid bucket name: ${JSON.stringify(bucket)}`);
  const endpoint = text(env, 'S3_ENDPOINT');
  const accessKeyId = text(env, 'S3_ACCESS_KEY_ID');
  const secretAccessKey = text(env, 'S3_SECRET_ACCESS_KEY');
  if (!accessKeyId !== !secretAccessKey)
    throw new ConfigError(
      'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together (or neither, for the AWS default chain)',
    );
  return {
    kind: 's3',
    bucket,
    region: text(env, 'S3_REGION') ?? 'us-east-1',
    endpoint: endpoint === undefined ? undefined : httpUrl(endpoint, 'S3_ENDPOINT'),
    forcePathStyle: flag(env, 'S3_FORCE_PATH_STYLE', false),
    credentials: accessKeyId && secretAccessKey ? Object.freeze({ accessKeyId, secretAccessKey }) : undefined,
  };
}
