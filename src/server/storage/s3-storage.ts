import type { PresignedRequest } from '@assay/contract';
import { createHash, randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListPartsCommand,
  type Part,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { contentDisposition } from './content-disposition.ts';
import {
  type MultipartUpload,
  type ObjectStorage,
  StorageError,
  StorageUnavailable,
  type StoredObject,
} from './object-storage.ts';
import { assertValidKey, keyToUrlPath } from './storage-keys.ts';
import {
  assertExpiry,
  assertLayout,
  assertPartNumbers,
  assertSize,
  choosePartSize,
  incompleteUpload,
  partCount,
  partSizeOf,
} from './storage-limits.ts';

export interface S3StorageOptions {
  bucket: string;
  region: string;
  endpoint?: string | undefined;
  forcePathStyle?: boolean;
  credentials?: { accessKeyId: string; secretAccessKey: string } | undefined;
  /**
   * Objects larger than this are moved by a multipart copy; S3's own limit for one CopyObject, lowered
   * by tests.
   */
  maxSingleCopyBytes?: number;
  /**
   * `auto`: sign sha256 checksums into upload URLs and trust the store's checksum at finalize, once a probe
   * has shown the store refuses a body that does not match its checksum. `off`: never (finalize reads
   * every byte).
   */
  checksums?: 'auto' | 'off';
  /**
   * Told once what the probe found (a store that does not verify checksums costs a full read at finalize).
   */
  onChecksumProbe?: (verifies: boolean, detail: string) => void;
}

const MIB = 1024 ** 2;
const GIB = 1024 ** 3;
// S3's limits: one PUT up to 5 GiB, parts of 5 MiB to 5 GiB, objects up to 5 TiB.
const MAX_PUT = 5 * GIB;
const MAX_OBJECT = 5 * 1024 * GIB;
// Signed, so the store refuses a body of any other size or type than the one declared. A part's type is not
// signed: the SDK gives UploadPart a default one that clients would otherwise have to echo.
// The checksum header is signed and kept a header (not hoisted into the query), so a PUT without it, or with
// another value, is refused; the store then refuses a body whose sha256 differs (BadDigest).
const CHECKSUM_HEADER = 'x-amz-checksum-sha256';
const SIGNED_HEADERS = new Set(['content-length', 'content-type', CHECKSUM_HEADER]);
const SIGNED_PART_HEADERS = new Set(['content-length', CHECKSUM_HEADER]);
const UNHOISTABLE = new Set([CHECKSUM_HEADER]);

const base64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');

/**
 * S3's checksum of a multipart object with SHA256 parts: sha256 of the parts' raw digests, `-<part count>`.
 */
export function compositeSha256(partSha256: readonly string[]): string {
  const whole = createHash('sha256');
  for (const part of partSha256) whole.update(Buffer.from(part, 'hex'));
  return `${whole.digest('base64')}-${partSha256.length}`;
}

function isBadDigest(error: unknown): boolean {
  const e = error as { name?: string; Code?: string };
  return e.name === 'BadDigest' || e.Code === 'BadDigest' || e.name === 'InvalidDigest';
}

function isNotFound(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NotFound' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404;
}

/**
 * Objects in an S3 bucket (AWS or any S3-compatible store); clients talk to the store directly on
 * presigned URLs.
 */
export class S3Storage implements ObjectStorage {
  readonly kind = 's3' as const;
  readonly client: S3Client;
  readonly #bucket: string;
  readonly #endpoint: string;
  readonly #maxSingleCopy: number;
  readonly #checksumMode: 'auto' | 'off';
  readonly #onChecksumProbe: S3StorageOptions['onChecksumProbe'];
  #verifies: Promise<boolean> | undefined;

  constructor(o: S3StorageOptions) {
    this.#bucket = o.bucket;
    this.#endpoint = o.endpoint ?? `AWS (${o.region})`;
    this.#maxSingleCopy = o.maxSingleCopyBytes ?? MAX_PUT;
    this.#checksumMode = o.checksums ?? 'auto';
    this.#onChecksumProbe = o.onChecksumProbe;
    this.client = new S3Client({
      region: o.region,
      ...(o.endpoint ? { endpoint: o.endpoint } : {}),
      forcePathStyle: o.forcePathStyle ?? false,
      // A copy: the SDK writes bookkeeping into the credentials object, and the config's is frozen.
      ...(o.credentials ? { credentials: { ...o.credentials } } : {}),
      // The SDK's default CRC32 checksums would be signed into presigned URLs as the checksum of an empty
      // body, and S3-compatible stores differ in what they accept; checksums are added only where the API
      // requires them.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  /**
   * Whether this store verifies sha256 checksums on upload: asked once, by a PUT with a wrong checksum (it
   * must be refused) and one with the right one (HeadObject must answer it). Some S3-compatible stores ignore
   * the header or keep it without checking the body; their checksums are never trusted.
   */
  verifiesChecksums(): Promise<boolean> {
    if (this.#checksumMode === 'off') return Promise.resolve(false);
    this.#verifies ??= this.#probe().then(
      ({ verifies, detail }) => {
        this.#onChecksumProbe?.(verifies, detail);
        return verifies;
      },
      (error: unknown) => {
        this.#verifies = undefined; // the store was unreachable: ask again next time rather than decide now
        throw error;
      },
    );
    return this.#verifies;
  }

  async #probe(): Promise<{ verifies: boolean; detail: string }> {
    const key = `uploads/.checksum-probe/${randomUUID()}`;
    const body = Buffer.from('assay checksum probe');
    const sum = createHash('sha256').update(body).digest('base64');
    const wrong = createHash('sha256').update('something else').digest('base64');
    const put = (checksum: string) =>
      this.client.send(
        new PutObjectCommand({ Bucket: this.#bucket, Key: key, Body: body, ChecksumSHA256: checksum }),
      );
    const status = (error: unknown) =>
      (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0;
    try {
      try {
        await put(wrong);
        return {
          verifies: false,
          detail: 'it stored a body whose sha256 differs from x-amz-checksum-sha256',
        };
      } catch (error) {
        // A 5xx or no answer says nothing about checksums: the probe runs again at the next upload.
        if (!isBadDigest(error) && status(error) !== 400) throw error;
      }
      try {
        await put(sum);
        const got = await this.client.send(
          new HeadObjectCommand({ Bucket: this.#bucket, Key: key, ChecksumMode: 'ENABLED' }),
        );
        return got.ChecksumSHA256 === sum
          ? { verifies: true, detail: 'it refused a wrong x-amz-checksum-sha256 and answers ChecksumSHA256' }
          : { verifies: false, detail: 'HeadObject does not answer the stored ChecksumSHA256' };
      } catch (error) {
        // A store that refuses checksum headers outright: uploads go without them.
        if (status(error) >= 400 && status(error) < 500)
          return {
            verifies: false,
            detail: `a PUT with the right checksum failed: ${(error as Error).name}`,
          };
        throw error;
      }
    } finally {
      await this.client
        .send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: key }))
        .catch(() => undefined);
    }
  }

  async presignPut(
    key: string,
    o: { size: number; contentType: string; expiresInS: number; sha256?: string | null },
  ): Promise<PresignedRequest> {
    assertValidKey(key);
    assertSize(o.size);
    assertExpiry(o.expiresInS);
    if (o.size > MAX_PUT)
      throw new StorageError(
        'invalid_argument',
        `a single upload takes at most ${MAX_PUT} bytes; use a multipart upload`,
      );
    const checksum = o.sha256 && (await this.verifiesChecksums()) ? base64(o.sha256) : undefined;
    const command = new PutObjectCommand({
      Bucket: this.#bucket,
      Key: key,
      ContentLength: o.size,
      ContentType: o.contentType,
      ...(checksum ? { ChecksumSHA256: checksum } : {}),
    });
    const expires_at = expiresAt(o.expiresInS);
    return {
      method: 'PUT',
      url: await getSignedUrl(this.client, command, presignOptions(o.expiresInS)),
      headers: { 'content-type': o.contentType, ...(checksum ? { [CHECKSUM_HEADER]: checksum } : {}) },
      expires_at,
    };
  }

  async startMultipart(
    key: string,
    o: {
      size: number;
      contentType: string;
      partSize: number;
      expiresInS: number;
      partSha256?: Array<string | null> | null;
    },
  ): Promise<MultipartUpload> {
    assertValidKey(key);
    assertExpiry(o.expiresInS);
    if (o.size > MAX_OBJECT)
      throw new StorageError('invalid_argument', `an object takes at most ${MAX_OBJECT} bytes`);
    const limits = { min: 5 * MIB, max: 5 * GIB };
    // A layout a client chose with its checksums may not suit S3; it is then adjusted, and the
    // checksums dropped.
    const requested = o.partSha256 ? Math.min(limits.max, Math.max(limits.min, o.partSize)) : o.partSize;
    const partSize = choosePartSize(o.size, requested, limits);
    const count = partCount(o.size, partSize);
    // Part checksums hold only for the layout they were computed for.
    const partSha256 =
      o.partSha256 &&
      o.partSha256.length === count &&
      partSize === o.partSize &&
      (await this.verifiesChecksums())
        ? o.partSha256
        : null;
    const started = await this.client.send(
      new CreateMultipartUploadCommand({
        Bucket: this.#bucket,
        Key: key,
        ContentType: o.contentType,
        // The store then keeps each part's sha256, and completion checks them against the ones we pass.
        ...(partSha256 ? { ChecksumAlgorithm: 'SHA256' as const } : {}),
      }),
    );
    const uploadId = started.UploadId!;
    const all = Array.from({ length: count }, (_, i) => i + 1);
    return {
      upload_id: uploadId,
      part_size: partSize,
      part_sha256: partSha256,
      parts: await this.#partRequests(key, uploadId, o.size, partSize, all, o.expiresInS, partSha256),
    };
  }

  async presignParts(
    key: string,
    uploadId: string,
    o: {
      size: number;
      partSize: number;
      partNumbers: number[];
      expiresInS: number;
      partSha256?: Array<string | null> | null;
    },
  ): Promise<MultipartUpload['parts']> {
    assertValidKey(key);
    assertExpiry(o.expiresInS);
    assertPartNumbers(o.partNumbers, assertLayout(o.size, o.partSize));
    return this.#partRequests(
      key,
      uploadId,
      o.size,
      o.partSize,
      o.partNumbers,
      o.expiresInS,
      o.partSha256 ?? null,
    );
  }

  async completeMultipart(
    key: string,
    uploadId: string,
    o: { size: number; partSize: number; partSha256?: string[] | null },
  ): Promise<void> {
    assertValidKey(key);
    const count = assertLayout(o.size, o.partSize);
    const partSha256 = o.partSha256 ?? null;
    const held = await this.#listParts(key, uploadId);
    if (held === undefined) {
      // The upload is gone: completed before (idempotent success) or aborted.
      if ((await this.head(key))?.size === o.size) return;
      throw incompleteUpload(
        Array.from({ length: count }, (_, i) => i + 1),
        [],
      );
    }
    const byNumber = new Map(held.map((p) => [p.PartNumber, p]));
    const missing: number[] = [];
    const wrongSize: number[] = [];
    const parts: Array<{ PartNumber: number; ETag: string; ChecksumSHA256?: string }> = [];
    for (let n = 1; n <= count; n++) {
      const part = byNumber.get(n);
      if (!part?.ETag) missing.push(n);
      else if (part.Size !== partSizeOf(o.size, o.partSize, n)) wrongSize.push(n);
      else
        parts.push({
          PartNumber: n,
          ETag: part.ETag,
          // The declared checksums, not the store's: it refuses to complete when a part it holds differs.
          ...(partSha256 ? { ChecksumSHA256: base64(partSha256[n - 1]!) } : {}),
        });
    }
    if (missing.length > 0 || wrongSize.length > 0) throw incompleteUpload(missing, wrongSize);
    try {
      await this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.#bucket,
          Key: key,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts },
        }),
      );
    } catch (error) {
      if (partSha256 && isBadDigest(error))
        throw new StorageError(
          'checksum_mismatch',
          'a part the store holds does not match its declared sha256',
        );
      throw error;
    }
  }

  async vouches(key: string, c: { sha256: string; partSha256: string[] | null }): Promise<boolean> {
    assertValidKey(key);
    if (!(await this.verifiesChecksums())) return false;
    let got;
    try {
      got = await this.client.send(
        new HeadObjectCommand({ Bucket: this.#bucket, Key: key, ChecksumMode: 'ENABLED' }),
      );
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
    // An object written without a checksum (a URL signed before checksums were on) has none: read it instead.
    const expected = c.partSha256 ? compositeSha256(c.partSha256) : base64(c.sha256);
    return got.ChecksumSHA256 === expected;
  }

  async head(key: string): Promise<StoredObject | undefined> {
    assertValidKey(key);
    try {
      const got = await this.client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: key }));
      return { size: got.ContentLength ?? 0 };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async sha256(key: string): Promise<string> {
    const hash = createHash('sha256');
    for await (const chunk of (await this.getObject(key)) as Readable) hash.update(chunk as Buffer);
    return hash.digest('hex');
  }

  async presignGet(key: string, o: { expiresInS: number; filename?: string }): Promise<PresignedRequest> {
    assertValidKey(key);
    assertExpiry(o.expiresInS);
    const disposition = o.filename
      ? { ResponseContentDisposition: contentDisposition(o.filename.toWellFormed()) }
      : {};
    const command = new GetObjectCommand({ Bucket: this.#bucket, Key: key, ...disposition });
    const expires_at = expiresAt(o.expiresInS);
    return {
      method: 'GET',
      url: await getSignedUrl(this.client, command, presignOptions(o.expiresInS)),
      headers: {},
      expires_at,
    };
  }

  async moveObject(from: string, to: string): Promise<void> {
    assertValidKey(from);
    assertValidKey(to);
    const source = await this.head(from);
    if (!source) throw new StorageError('not_found', 'object not found');
    // A copy is made of the source as it is when the store reads it; a PUT racing this one lands in
    // `from` only.
    const copySource = `${this.#bucket}/${keyToUrlPath(from)}`;
    if (source.size <= this.#maxSingleCopy) {
      await this.client.send(
        new CopyObjectCommand({ Bucket: this.#bucket, Key: to, CopySource: copySource }),
      );
    } else {
      await this.#copyInParts(copySource, to, source.size);
    }
    await this.client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: from }));
  }

  /** UploadPartCopy in ranges: one CopyObject takes at most 5 GiB. */
  async #copyInParts(copySource: string, to: string, size: number): Promise<void> {
    const requested = Math.max(5 * MIB, Math.min(512 * MIB, this.#maxSingleCopy));
    const partSize = choosePartSize(size, requested, { min: 5 * MIB, max: 5 * GIB });
    const started = await this.client.send(
      new CreateMultipartUploadCommand({ Bucket: this.#bucket, Key: to }),
    );
    const uploadId = started.UploadId!;
    try {
      const parts: Array<{ PartNumber: number; ETag: string }> = [];
      for (let n = 1; n <= partCount(size, partSize); n++) {
        const start = (n - 1) * partSize;
        const end = start + partSizeOf(size, partSize, n) - 1;
        const copied = await this.client.send(
          new UploadPartCopyCommand({
            Bucket: this.#bucket,
            Key: to,
            UploadId: uploadId,
            PartNumber: n,
            CopySource: copySource,
            CopySourceRange: `bytes=${start}-${end}`,
          }),
        );
        parts.push({ PartNumber: n, ETag: copied.CopyPartResult!.ETag! });
      }
      await this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.#bucket,
          Key: to,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts },
        }),
      );
    } catch (error) {
      await this.client
        .send(new AbortMultipartUploadCommand({ Bucket: this.#bucket, Key: to, UploadId: uploadId }))
        .catch(() => undefined);
      throw error;
    }
  }

  async deleteObject(key: string, o: { uploadId?: string | null } = {}): Promise<void> {
    assertValidKey(key);
    // S3 answers a delete of a missing key with success.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: key }));
    if (o.uploadId)
      await this.client
        .send(new AbortMultipartUploadCommand({ Bucket: this.#bucket, Key: key, UploadId: o.uploadId }))
        .catch((error: unknown) => {
          // Completed or aborted before: nothing left to remove.
          if ((error as { name?: string }).name !== 'NoSuchUpload' && !isNotFound(error)) throw error;
        });
  }

  async putObject(key: string, body: Buffer, contentType: string): Promise<void> {
    assertValidKey(key);
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.#bucket,
        Key: key,
        Body: body,
        ContentLength: body.length,
        ContentType: contentType,
      }),
    );
  }

  async getObject(key: string): Promise<NodeJS.ReadableStream> {
    assertValidKey(key);
    try {
      const got = await this.client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: key }));
      return got.Body as Readable;
    } catch (error) {
      if (isNotFound(error)) throw new StorageError('not_found', 'object not found');
      throw error;
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
  }

  /**
   * The bucket, asked for through the configured endpoint: the same address presigned URLs carry, so a wrong
   * public endpoint shows here and not at the first upload.
   */
  async check(o: { timeoutMs: number }): Promise<void> {
    const where = `S3_BUCKET ${JSON.stringify(this.#bucket)} at S3_ENDPOINT ${this.#endpoint}`;
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.#bucket }), {
        abortSignal: AbortSignal.timeout(o.timeoutMs),
      });
    } catch (cause) {
      const status = (cause as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      const message =
        status === 404
          ? `${where} does not exist; check S3_BUCKET and S3_ENDPOINT`
          : status === 401 || status === 403
            ? `${where} refused access (${status}); check S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY`
            : status !== undefined
              ? `${where} answered ${status}; check S3_ENDPOINT`
              : `${where} is unreachable; check S3_ENDPOINT`;
      throw new StorageUnavailable(message, { cause });
    }
  }

  /** Every part the store holds for the upload, or undefined when it knows no such upload. */
  async #listParts(key: string, uploadId: string): Promise<Part[] | undefined> {
    const parts: Part[] = [];
    let marker: string | undefined;
    try {
      do {
        const page = await this.client.send(
          new ListPartsCommand({
            Bucket: this.#bucket,
            Key: key,
            UploadId: uploadId,
            ...(marker ? { PartNumberMarker: marker } : {}),
          }),
        );
        parts.push(...(page.Parts ?? []));
        marker = page.IsTruncated ? page.NextPartNumberMarker : undefined;
      } while (marker);
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchUpload' || isNotFound(error)) return undefined;
      throw error;
    }
    return parts;
  }

  async #partRequests(
    key: string,
    uploadId: string,
    size: number,
    partSize: number,
    numbers: number[],
    expiresInS: number,
    partSha256: Array<string | null> | null,
  ): Promise<MultipartUpload['parts']> {
    const expires_at = expiresAt(expiresInS);
    return Promise.all(
      numbers.map(async (n) => {
        const partBytes = partSizeOf(size, partSize, n);
        const hex = partSha256?.[n - 1];
        const checksum = hex == null ? undefined : base64(hex);
        const command = new UploadPartCommand({
          Bucket: this.#bucket,
          Key: key,
          UploadId: uploadId,
          PartNumber: n,
          ContentLength: partBytes,
          ...(checksum ? { ChecksumSHA256: checksum } : {}),
        });
        const url = await getSignedUrl(this.client, command, {
          expiresIn: expiresInS,
          signableHeaders: SIGNED_PART_HEADERS,
          unhoistableHeaders: UNHOISTABLE,
        });
        const headers: Record<string, string> = checksum ? { [CHECKSUM_HEADER]: checksum } : {};
        return { part_number: n, size: partBytes, method: 'PUT' as const, url, headers, expires_at };
      }),
    );
  }
}

/** Taken before signing, so the URL lives at least until then. */
function expiresAt(expiresInS: number): string {
  return new Date(Date.now() + expiresInS * 1000).toISOString();
}

function presignOptions(expiresInS: number) {
  return { expiresIn: expiresInS, signableHeaders: SIGNED_HEADERS, unhoistableHeaders: UNHOISTABLE };
}
