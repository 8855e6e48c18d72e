import type { PresignedRequest } from '@assay/contract';
import { createHash, randomBytes } from 'node:crypto';
import {
  type FileHandle,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  rmdir,
  stat,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import { fileIdentity, syncDir, writeFileAtomically } from './atomic-write.ts';
import {
  type MultipartUpload,
  type ObjectStorage,
  StorageError,
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
import { grantQuery, type SignedGrant, verifyGrant } from './url-signing.ts';

export interface LocalStorageOptions {
  dir: string;
  /** HMAC key of the signed URLs. */
  secret: Buffer;
  /** Base URL clients reach this service at; a function when it is known only after listening (port 0). */
  publicUrl: string | (() => string);
}

const GIB = 1024 ** 3;
const UPLOAD_ID = /^[0-9a-f]{32}$/;
// Temp files older than this at start are leftovers of a crash (uploads in flight are never this old).
const STALE_TEMP_MS = 24 * 3600 * 1000;

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * Objects as files under one directory; clients PUT and GET them through signed URLs served
 * by `localStorageRoutes`.
 */
export class LocalStorage implements ObjectStorage {
  readonly kind = 'local' as const;
  readonly dir: string;
  readonly #secret: Buffer;
  readonly #publicUrl: () => string;
  readonly #completing = new Map<string, Promise<void>>();

  constructor(o: LocalStorageOptions) {
    this.dir = path.resolve(o.dir);
    this.#secret = o.secret;
    const { publicUrl } = o;
    this.#publicUrl = typeof publicUrl === 'string' ? () => publicUrl : publicUrl;
  }

  /** Creates the directory layout and removes temp files a crash left behind. */
  static async open(o: LocalStorageOptions): Promise<LocalStorage> {
    const storage = new LocalStorage(o);
    const tmp = path.join(storage.dir, '.tmp');
    await mkdir(tmp, { recursive: true, mode: 0o700 });
    await mkdir(path.join(storage.dir, '.digests'), { recursive: true, mode: 0o700 });
    for (const name of await readdir(tmp)) {
      const file = path.join(tmp, name);
      const info = await stat(file).catch(() => undefined);
      if (info && Date.now() - info.mtimeMs > STALE_TEMP_MS) await rm(file, { force: true });
    }
    return storage;
  }

  async presignPut(
    key: string,
    // The PUT hashes what it writes whatever was declared: `vouches` compares at finalize.
    o: { size: number; contentType: string; expiresInS: number; sha256?: string | null },
  ): Promise<PresignedRequest> {
    assertValidKey(key);
    assertSize(o.size);
    assertExpiry(o.expiresInS);
    return this.#presign(
      { method: 'PUT', key, expires: expiry(o.expiresInS), size: o.size },
      { 'content-type': o.contentType },
    );
  }

  async startMultipart(
    key: string,
    o: { size: number; contentType: string; partSize: number; expiresInS: number },
  ): Promise<MultipartUpload> {
    assertValidKey(key);
    assertExpiry(o.expiresInS);
    const partSize = choosePartSize(o.size, o.partSize, { min: 1, max: 5 * GIB });
    const uploadId = randomBytes(16).toString('hex');
    await mkdir(this.uploadDir(key, uploadId), { recursive: true, mode: 0o700 });
    const all = Array.from({ length: partCount(o.size, partSize) }, (_, i) => i + 1);
    return {
      upload_id: uploadId,
      part_size: partSize,
      // Completion hashes the whole object as it joins the parts: part checksums add nothing here.
      part_sha256: null,
      parts: this.#partRequests(key, uploadId, o.size, partSize, all, o.expiresInS),
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
    if (!(await this.uploadExists(key, uploadId)))
      throw new StorageError('not_found', `no upload ${uploadId} in progress for this key`);
    return this.#partRequests(key, uploadId, o.size, o.partSize, o.partNumbers, o.expiresInS);
  }

  async completeMultipart(
    key: string,
    uploadId: string,
    o: { size: number; partSize: number },
  ): Promise<void> {
    assertValidKey(key);
    // Two concurrent completions of one upload share the first one's work instead of racing over the parts.
    const running = this.#completing.get(uploadId);
    if (running) return running;
    const work = this.#complete(key, uploadId, o.size, o.partSize).finally(() =>
      this.#completing.delete(uploadId),
    );
    this.#completing.set(uploadId, work);
    return work;
  }

  async #complete(key: string, uploadId: string, size: number, partSize: number): Promise<void> {
    const count = assertLayout(size, partSize);
    const numbers = Array.from({ length: count }, (_, i) => i + 1);
    if (!(await this.uploadExists(key, uploadId))) {
      if ((await this.head(key))?.size === size) return; // completed before
      throw incompleteUpload(numbers, []);
    }
    const missing: number[] = [];
    const wrongSize: number[] = [];
    for (const n of numbers) {
      const info = await stat(this.partPath(key, uploadId, n)).catch(() => undefined);
      if (!info) missing.push(n);
      else if (info.size !== partSizeOf(size, partSize, n)) wrongSize.push(n);
    }
    if (missing.length > 0 || wrongSize.length > 0) throw incompleteUpload(missing, wrongSize);
    const partPath = (n: number) => this.partPath(key, uploadId, n);
    async function* parts() {
      for (const n of numbers)
        yield* (await open(partPath(n), 'r')).createReadStream() as AsyncIterable<Buffer>;
    }
    await this.writeObject(key, parts(), size);
    const dir = this.uploadDir(key, uploadId);
    await rm(dir, { recursive: true, force: true });
    await rmdir(path.dirname(dir)).catch(() => undefined); // other uploads of the key may still be there
  }

  async head(key: string): Promise<StoredObject | undefined> {
    assertValidKey(key);
    try {
      const info = await stat(this.objectPath(key));
      return info.isFile() ? { size: info.size } : undefined;
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async sha256(key: string): Promise<string> {
    const { fh } = await this.openForRead(key);
    const hash = createHash('sha256');
    for await (const chunk of fh.createReadStream()) hash.update(chunk as Buffer);
    return hash.digest('hex');
  }

  async vouches(key: string, c: { sha256: string }): Promise<boolean> {
    assertValidKey(key);
    const recorded = await readFile(this.digestPath(key), 'utf8').then(
      (text) => JSON.parse(text) as { sha256: string; identity: string },
      () => undefined,
    );
    if (recorded?.sha256 !== c.sha256) return false;
    // The digest holds for the file it was taken of: a later write (a new file) or a lost rename shows here.
    return (await fileIdentity(this.objectPath(key)).catch(() => undefined)) === recorded.identity;
  }

  async presignGet(key: string, o: { expiresInS: number; filename?: string }): Promise<PresignedRequest> {
    assertValidKey(key);
    assertExpiry(o.expiresInS);
    const filename = o.filename?.toWellFormed();
    return this.#presign(
      { method: 'GET', key, expires: expiry(o.expiresInS), ...(filename ? { filename } : {}) },
      {},
    );
  }

  async moveObject(from: string, to: string): Promise<void> {
    assertValidKey(from);
    assertValidKey(to);
    const target = this.objectPath(to);
    await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    try {
      // One rename: a PUT still writing `from` lands in a new file there, never in `to`.
      await rename(this.objectPath(from), target);
    } catch (error) {
      if (isMissing(error)) throw new StorageError('not_found', 'object not found');
      throw error;
    }
    // The digest follows the file; it still names the file's identity, so it holds only if this rename did.
    await rename(this.digestPath(from), this.digestPath(to)).catch((error: unknown) => {
      if (!isMissing(error)) throw error;
    });
    await syncDir(path.dirname(target));
    await rmdir(path.dirname(this.objectPath(from))).catch(() => undefined); // other components may remain
  }

  async deleteObject(key: string, o: { uploadId?: string | null } = {}): Promise<void> {
    assertValidKey(key);
    await rm(this.objectPath(key), { force: true });
    await rm(this.digestPath(key), { force: true });
    await rmdir(path.dirname(this.objectPath(key))).catch(() => undefined); // other components may remain
    if (o.uploadId && UPLOAD_ID.test(o.uploadId)) {
      const dir = this.uploadDir(key, o.uploadId);
      await rm(dir, { recursive: true, force: true });
      await rmdir(path.dirname(dir)).catch(() => undefined);
    }
  }

  async putObject(key: string, body: Buffer, _contentType: string): Promise<void> {
    assertValidKey(key);
    await this.writeAtomically(this.objectPath(key), [body], body.length);
  }

  async getObject(key: string): Promise<NodeJS.ReadableStream> {
    const { fh } = await this.openForRead(key);
    return fh.createReadStream();
  }

  async close(): Promise<void> {
    // Nothing held open between calls.
  }

  async check(): Promise<void> {
    // Its own directory, created at open: there is no address or bucket that could be wrong.
  }

  // ——— used by localStorageRoutes ———

  /**
   * Checks a request against its signed URL (403 AppError when tampered with or expired) and returns what
   * it grants.
   */
  verify(method: 'PUT' | 'GET', key: string, query: Record<string, unknown>): SignedGrant {
    return verifyGrant(this.#secret, method, key, query);
  }

  objectPath(key: string): string {
    return path.join(this.dir, ...key.split('/'));
  }

  /** Parts live apart from the objects, under a hash of the key: no key can collide with them. */
  uploadDir(key: string, uploadId: string): string {
    if (!UPLOAD_ID.test(uploadId))
      throw new StorageError('not_found', `no upload ${JSON.stringify(uploadId)}`);
    return path.join(this.dir, '.multipart', createHash('sha256').update(key).digest('hex'), uploadId);
  }

  partPath(key: string, uploadId: string, n: number): string {
    return path.join(this.uploadDir(key, uploadId), String(n));
  }

  async uploadExists(key: string, uploadId: string): Promise<boolean> {
    return (await stat(this.uploadDir(key, uploadId)).catch(() => undefined))?.isDirectory() ?? false;
  }

  /** Opens an object for reading; StorageError('not_found') when there is none. */
  async openForRead(key: string): Promise<{ fh: FileHandle; size: number }> {
    assertValidKey(key);
    let fh: FileHandle;
    try {
      fh = await open(this.objectPath(key), 'r');
    } catch (error) {
      if (isMissing(error)) throw new StorageError('not_found', 'object not found');
      throw error;
    }
    const info = await fh.stat();
    if (info.isFile()) return { fh, size: info.size };
    await fh.close();
    throw new StorageError('not_found', 'object not found');
  }

  /**
   * Where the sha256 of an object's bytes, taken as they were written, is kept (with the file's identity).
   */
  digestPath(key: string): string {
    return path.join(this.dir, '.digests', createHash('sha256').update(key).digest('hex'));
  }

  /**
   * Writes an object like `writeAtomically`, hashing the bytes on the way: finalize then need not read
   * them again.
   */
  async writeObject(
    key: string,
    source: Iterable<Buffer> | AsyncIterable<Buffer>,
    size: number,
  ): Promise<void> {
    const digest = this.digestPath(key);
    await this.writeAtomically(this.objectPath(key), source, size, async (written) => {
      const tmp = `${digest}.${randomBytes(6).toString('hex')}`;
      await writeFile(tmp, JSON.stringify(written), { mode: 0o600 });
      await rename(tmp, digest);
    });
  }

  /**
   * Streams exactly `size` bytes to `target` through a temp file in `<dir>/.tmp` (same filesystem, so the
   * rename is atomic).
   */
  async writeAtomically(
    target: string,
    source: Iterable<Buffer> | AsyncIterable<Buffer>,
    size: number,
    onWritten?: Parameters<typeof writeFileAtomically>[4],
  ): Promise<void> {
    await writeFileAtomically(path.join(this.dir, '.tmp'), target, source, size, onWritten);
  }

  #partRequests(
    key: string,
    uploadId: string,
    size: number,
    partSize: number,
    numbers: number[],
    expiresInS: number,
  ): MultipartUpload['parts'] {
    const expires = expiry(expiresInS);
    return numbers.map((n) => {
      const partBytes = partSizeOf(size, partSize, n);
      return {
        part_number: n,
        size: partBytes,
        ...this.#presign({ method: 'PUT', key, expires, size: partBytes, uploadId, part: n }, {}),
      };
    });
  }

  #presign(grant: SignedGrant, headers: Record<string, string>): PresignedRequest {
    const base = this.#publicUrl().replace(/\/+$/, '');
    return {
      method: grant.method,
      url: `${base}/storage/${keyToUrlPath(grant.key)}?${grantQuery(this.#secret, grant)}`,
      headers,
      expires_at: new Date(grant.expires * 1000).toISOString(),
    };
  }
}

/** Rounded up, so a URL lives at least the asked time. */
function expiry(expiresInS: number): number {
  return Math.ceil(Date.now() / 1000) + expiresInS;
}
