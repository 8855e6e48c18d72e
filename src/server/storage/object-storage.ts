import type { PresignedRequest } from '@assay/contract';
import { AppError } from '../http/errors.ts';

// A presigned request (the contract's PresignedRequest) is sent exactly: these headers and, for a PUT,
// exactly the declared bytes.

/**
 * A multipart upload: `part_size` may be larger than asked for (a store takes at most 10,000 parts), so keep
 * the returned one.
 */
export interface MultipartUpload {
  upload_id: string;
  part_size: number;
  /**
   * The part checksums the store verifies this upload's parts against; null when it does not (or none were
   * given). A null entry is a part whose checksum is declared later, before its URL is signed.
   */
  part_sha256: Array<string | null> | null;
  parts: Array<{ part_number: number; size: number } & PresignedRequest>;
}

export interface StoredObject {
  size: number;
}

/**
 * Where component bytes live; keys are `assets/<uuid>/<component name>`, made by the caller and checked by
 * `assertValidKey`. Checksums (`sha256`, `partSha256`) are hex sha256 digests the uploader declared; a store
 * that verifies them refuses other bytes on upload, so finalize can ask `vouches` instead of reading every
 * byte again.
 */
export interface ObjectStorage {
  readonly kind: 'local' | 's3';
  presignPut(
    key: string,
    o: { size: number; contentType: string; expiresInS: number; sha256?: string | null },
  ): Promise<PresignedRequest>;
  /**
   * `partSha256`, one per part of `partSize`, is taken only when the store keeps that layout and
   * verifies checksums.
   */
  startMultipart(
    key: string,
    o: {
      size: number;
      contentType: string;
      partSize: number;
      expiresInS: number;
      partSha256?: Array<string | null> | null;
    },
  ): Promise<MultipartUpload>;
  /** Fresh URLs for parts of an upload in progress (a resumed client whose URLs expired). */
  presignParts(
    key: string,
    uploadId: string,
    o: {
      size: number;
      partSize: number;
      partNumbers: number[];
      expiresInS: number;
      /** Signed into the URLs of the parts that have one (a null entry: a URL without a checksum). */
      partSha256?: Array<string | null> | null;
    },
  ): Promise<MultipartUpload['parts']>;
  /**
   * Completes from the parts the store holds (the client reports no ETags); throws
   * StorageError('incomplete_upload') naming missing parts, or StorageError('checksum_mismatch') when a part
   * differs from `partSha256`. Idempotent once complete.
   */
  completeMultipart(
    key: string,
    uploadId: string,
    o: { size: number; partSize: number; partSha256?: string[] | null },
  ): Promise<void>;
  head(key: string): Promise<StoredObject | undefined>;
  /**
   * Streams the object through SHA-256 (hex); for finalize's checksum check.
   * Throws StorageError('not_found').
   */
  sha256(key: string): Promise<string>;
  /**
   * True when the store itself guarantees, without anyone reading the bytes again, that `key` holds bytes
   * with this sha256 (or these part checksums): it verified them on upload. False when it cannot say; then
   * the caller reads the object through `sha256`.
   */
  vouches(key: string, c: { sha256: string; partSha256: string[] | null }): Promise<boolean>;
  presignGet(key: string, o: { expiresInS: number; filename?: string }): Promise<PresignedRequest>;
  /**
   * Moves `from` to `to`, overwriting it: afterwards `to` holds exactly the bytes `from` held and `from` is
   * gone. Throws StorageError('not_found') when `from` is missing. Finalize moves uploads out of the keys
   * that presigned URLs can write, so a URL still alive after finalize cannot touch what downloads read.
   */
  moveObject(from: string, to: string): Promise<void>;
  /**
   * Removes the object at `key`, and with `uploadId` that multipart upload's parts too (an upload that never
   * completed); nothing to remove is not an error. For a deleted draft's assets.
   */
  deleteObject(key: string, o?: { uploadId?: string | null }): Promise<void>;
  /** Plain streaming read/write for small server-side objects (inline assets). */
  putObject(key: string, body: Buffer, contentType: string): Promise<void>;
  /** Throws StorageError('not_found') before returning when the object is missing. */
  getObject(key: string): Promise<NodeJS.ReadableStream>;
  /** Releases connections (the S3 client's sockets); for the service's shutdown. */
  close(): Promise<void>;
  /**
   * Throws StorageUnavailable, naming the setting to look at, when the store cannot serve (at
   * start, /readyz).
   */
  check(o: { timeoutMs: number }): Promise<void>;
}

/**
 * The configured store cannot be used; the message names the setting to fix, the cause says what happened.
 */
export class StorageUnavailable extends Error {
  override name = 'StorageUnavailable';
}

export type StorageErrorCode =
  'invalid_key' | 'invalid_argument' | 'incomplete_upload' | 'checksum_mismatch' | 'not_found';

const STATUS: Record<StorageErrorCode, number> = {
  invalid_key: 400,
  invalid_argument: 400,
  incomplete_upload: 409,
  checksum_mismatch: 409,
  not_found: 404,
};

/**
 * A storage failure the caller can act on. It is an AppError, so one left uncaught still answers with a
 * sensible status; `incomplete_upload` carries `details: { missing_parts, wrong_size_parts }`.
 */
export class StorageError extends AppError {
  override name = 'StorageError';
  declare readonly code: StorageErrorCode;

  constructor(code: StorageErrorCode, message: string, details?: unknown) {
    super(STATUS[code], code, message, details);
  }
}
