import path from 'node:path';
import { ConfigError } from '../../settings/config-error.ts';
import { httpUrl, type Env } from '../../settings/env-values.ts';
import { isSet, readSetting } from '../../settings/read-setting.ts';

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
  /**
   * Whether the store's sha256 checks may replace finalize's read (`auto`: when a probe shows it verifies).
   */
  readonly checksums: 'auto' | 'off';
}

export type StorageConfig = LocalStorageConfig | S3StorageConfig;

/** The service's base URL (read from ASSAY_PUBLIC_URL, or derived), checked again since callers pass it. */
function publicBase(value: string): string {
  return httpUrl({ ASSAY_PUBLIC_URL: value }, 'ASSAY_PUBLIC_URL')!.replace(/\/+$/, '');
}

/**
 * Reads the storage settings (pure: no file is touched; the local secret file is read or created by
 * `createObjectStorage`). Throws ConfigError naming the variable.
 */
export function storageConfig(env: Env, o: { dataDir: string; publicUrl: string }): StorageConfig {
  if (!isSet(env, 'ASSAY_STORAGE') && isSet(env, 'S3_BUCKET')) {
    // Silently storing on local disk while the operator configured a bucket would lose data on redeploy.
    throw new ConfigError(
      'S3_BUCKET is set but ASSAY_STORAGE is not: set ASSAY_STORAGE=s3 (or ASSAY_STORAGE=local to keep files in the data directory)',
    );
  }
  const s3 = readSetting(env, 'ASSAY_STORAGE') === 's3';
  const common: CommonStorageConfig = {
    uploadUrlTtlS: readSetting(env, 'ASSAY_UPLOAD_URL_TTL_S'),
    // A single S3 PUT takes at most 5 GiB, so larger components must go in parts.
    multipartThresholdBytes: readSetting(env, 'ASSAY_MULTIPART_THRESHOLD_BYTES', s3 ? { max: 5 * GIB } : {}),
    // S3 refuses parts under 5 MiB (but the last); local has no such floor, so tests can cut small files
    // in parts.
    multipartPartBytes: readSetting(env, 'ASSAY_MULTIPART_PART_BYTES', s3 ? { min: 5 * MIB } : {}),
  };
  if (s3) return Object.freeze({ ...common, ...s3Settings(env) });

  const secret = readSetting(env, 'ASSAY_STORAGE_SECRET');
  if (secret !== undefined && secret.length < 32)
    throw new ConfigError('ASSAY_STORAGE_SECRET must be at least 32 characters');
  return Object.freeze({
    ...common,
    kind: 'local',
    dir: path.resolve(readSetting(env, 'ASSAY_STORAGE_DIR') ?? path.join(o.dataDir, 'objects')),
    secret,
    secretFile: path.join(path.resolve(o.dataDir), 'storage-secret'),
    publicUrl: publicBase(o.publicUrl),
  });
}

function s3Settings(env: Env): Omit<S3StorageConfig, keyof CommonStorageConfig> {
  const bucket = readSetting(env, 'S3_BUCKET');
  if (!bucket) throw new ConfigError('S3_BUCKET is required when ASSAY_STORAGE=s3');
  const accessKeyId = readSetting(env, 'S3_ACCESS_KEY_ID');
  const secretAccessKey = readSetting(env, 'S3_SECRET_ACCESS_KEY');
  if (!accessKeyId !== !secretAccessKey)
    throw new ConfigError(
      'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together (or neither, for the AWS default chain)',
    );
  return {
    kind: 's3',
    bucket,
    region: readSetting(env, 'S3_REGION'),
    endpoint: readSetting(env, 'S3_ENDPOINT'),
    forcePathStyle: readSetting(env, 'S3_FORCE_PATH_STYLE'),
    credentials: accessKeyId && secretAccessKey ? Object.freeze({ accessKeyId, secretAccessKey }) : undefined,
    checksums: readSetting(env, 'ASSAY_S3_CHECKSUMS') === 'off' ? 'off' : 'auto',
  };
}
