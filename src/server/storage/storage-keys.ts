import { StorageError } from './object-storage.ts';

/** S3's own limit; the local backend keeps to it too, so a key valid on one backend is valid on the other. */
export const MAX_KEY_BYTES = 1024;
/** NAME_MAX of common filesystems: each segment becomes a file or directory name in the local backend. */
export const MAX_SEGMENT_BYTES = 255;

const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Throws StorageError('invalid_key') unless `key` is `seg/seg/…` with no empty, `.` or `..` segment, no
 * leading slash, no control character (NUL included), well-formed Unicode, and bounded lengths. A first
 * segment starting with `.` is reserved for the backends' own bookkeeping (temporary files, multipart parts).
 */
export function assertValidKey(key: string): void {
  const fail = (why: string): never => {
    throw new StorageError('invalid_key', `invalid storage key: ${why}`);
  };
  if (typeof key !== 'string' || key === '') fail('empty');
  if (!key.isWellFormed()) fail('not well-formed Unicode');
  if (CONTROL.test(key)) fail('contains a control character');
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) fail(`longer than ${MAX_KEY_BYTES} bytes`);
  if (key.startsWith('/')) fail('starts with "/"');
  const segments = key.split('/');
  for (const segment of segments) {
    if (segment === '') fail('has an empty segment');
    if (segment === '.' || segment === '..') fail(`has a "${segment}" segment`);
    if (Buffer.byteLength(segment) > MAX_SEGMENT_BYTES)
      fail(`has a segment longer than ${MAX_SEGMENT_BYTES} bytes`);
  }
  if (segments[0]!.startsWith('.')) fail('first segment starts with "." (reserved)');
}

/** The key as a URL path: each segment percent-encoded, so `#`, `?`, `%` and spaces survive the trip. */
export function keyToUrlPath(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}

/**
 * Where presigned URLs write an asset component: apart from its `storage_key`, which only finalize (by moving
 * the upload there) and inline creation write. An upload URL still alive after finalize thus cannot change a
 * ready asset.
 */
export const uploadKey = (storageKey: string) => `uploads/${storageKey}`;
