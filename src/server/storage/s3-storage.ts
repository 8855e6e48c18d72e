import type { PresignedRequest } from '@assay/contract';
import { createHash } from 'node:crypto';
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
  /** Objects larger than this are moved by a multipart copy; S3's own limit for one CopyObject, lowered by tests. */
  maxSingleCopyBytes?: number;
}

const MIB = 1024 ** 2;
const GIB = 1024 ** 3;
// S3's limits: one PUT up to 5 GiB, parts of 5 MiB to 5 GiB, objects up to 5 TiB.
const MAX_PUT = 5 * GIB;
const MAX_OBJECT = 5 * 1024 * GIB;
// Signed, so the store refuses a body of any other size or type than the one declared. A part's type is not
// signed: the SDK gives UploadPart a default one that clients would otherwise have to echo.
const SIGNED_HEADERS = new Set(['content-length', 'content-type']);
const SIGNED_PART_HEADERS = new Set(['content-length']);

function isNotFound(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NotFound' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404;
}

/** Objects in an S3 bucket (AWS or any S3-compatible store); clients talk to the store directly on presigned URLs. */
export class S3Storage implements ObjectStorage {
  readonly kind = 's3' as const;
  readonly client: S3Client;
  readonly #bucket: string;
  readonly #endpoint: string;
  readonly #maxSingleCopy: number;

  constructor(o: S3StorageOptions) {
    this.#bucket = o.bucket;
    this.#endpoint = o.endpoint ?? `AWS (${o.region})`;
    this.#maxSingleCopy = o.maxSingleCopyBytes ?? MAX_PUT;
    this.client = new S3Client({
      region: o.region,
      ...(o.endpoint ? { endpoint: o.endpoint } : {}),
      forcePathStyle: o.forcePathStyle ?? false,
      // A copy: the SDK writes bookkeeping into the credentials object, and the config's is frozen.
      ...(o.credentials ? { credentials: { ...o.credentials } } : {}),
      // The SDK's default CRC32 checksums would be signed into presigned URLs as the checksum of an empty body,
      // and S3-compatible stores differ in what they accept; checksums are added only where the API requires them.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async presignPut(
    key: string,
    o: { size: number; contentType: string; expiresInS: number },
  ): Promise<PresignedRequest> {
    assertValidKey(key);
    assertSize(o.size);
    assertExpiry(o.expiresInS);
    if (o.size > MAX_PUT)
      throw new StorageError(
        'invalid_argument',
        `a single upload takes at most ${MAX_PUT} bytes; use a multipart upload`,
      );
    const command = new PutObjectCommand({
      Bucket: this.#bucket,
      Key: key,
      ContentLength: o.size,
      ContentType: o.contentType,
    });
    const expires_at = expiresAt(o.expiresInS);
    return {
      method: 'PUT',
      url: await getSignedUrl(this.client, command, presignOptions(o.expiresInS)),
      headers: { 'content-type': o.contentType },
      expires_at,
    };
  }

  async startMultipart(
    key: string,
    o: { size: number; contentType: string; partSize: number; expiresInS: number },
  ): Promise<MultipartUpload> {
    assertValidKey(key);
    assertExpiry(o.expiresInS);
    if (o.size > MAX_OBJECT)
      throw new StorageError('invalid_argument', `an object takes at most ${MAX_OBJECT} bytes`);
    const partSize = choosePartSize(o.size, o.partSize, { min: 5 * MIB, max: 5 * GIB });
    const started = await this.client.send(
      new CreateMultipartUploadCommand({ Bucket: this.#bucket, Key: key, ContentType: o.contentType }),
    );
    const uploadId = started.UploadId!;
    const all = Array.from({ length: partCount(o.size, partSize) }, (_, i) => i + 1);
    return {
      upload_id: uploadId,
      part_size: partSize,
      parts: await this.#partRequests(key, uploadId, o.size, partSize, all, o.expiresInS),
    };
  }

  async presignParts(
    key: string,
    uploadId: string,
    o: { size: number; partSize: number; partNumbers: number[]; expiresInS: number },
  ): Promise<MultipartUpload['parts']> {
    assertValidKey(key);
    assertExpiry(o.expiresInS);
    assertPartNumbers(o.partNumbers, assertLayout(o.size, o.partSize));
    return this.#partRequests(key, uploadId, o.size, o.partSize, o.partNumbers, o.expiresInS);
  }

  async completeMultipart(
    key: string,
    uploadId: string,
    o: { size: number; partSize: number },
  ): Promise<void> {
    assertValidKey(key);
    const count = assertLayout(o.size, o.partSize);
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
    const parts: Array<{ PartNumber: number; ETag: string }> = [];
    for (let n = 1; n <= count; n++) {
      const part = byNumber.get(n);
      if (!part?.ETag) missing.push(n);
      else if (part.Size !== partSizeOf(o.size, o.partSize, n)) wrongSize.push(n);
      else parts.push({ PartNumber: n, ETag: part.ETag });
    }
    if (missing.length > 0 || wrongSize.length > 0) throw incompleteUpload(missing, wrongSize);
    await this.client.send(
      new CompleteMultipartUploadCommand({
        Bucket: this.#bucket,
        Key: key,
        UploadId: uploadId,
        MultipartUpload: { Parts: parts },
      }),
    );
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
    // A copy is made of the source as it is when the store reads it; a PUT racing this one lands in `from` only.
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
  ): Promise<MultipartUpload['parts']> {
    const expires_at = expiresAt(expiresInS);
    return Promise.all(
      numbers.map(async (n) => {
        const partBytes = partSizeOf(size, partSize, n);
        const command = new UploadPartCommand({
          Bucket: this.#bucket,
          Key: key,
          UploadId: uploadId,
          PartNumber: n,
          ContentLength: partBytes,
        });
        const url = await getSignedUrl(this.client, command, {
          expiresIn: expiresInS,
          signableHeaders: SIGNED_PART_HEADERS,
        });
        return { part_number: n, size: partBytes, method: 'PUT' as const, url, headers: {}, expires_at };
      }),
    );
  }
}

/** Taken before signing, so the URL lives at least until then. */
function expiresAt(expiresInS: number): string {
  return new Date(Date.now() + expiresInS * 1000).toISOString();
}

function presignOptions(expiresInS: number) {
  return { expiresIn: expiresInS, signableHeaders: SIGNED_HEADERS };
}
