import { StorageError } from './object-storage.ts';

// The arithmetic and bounds both backends share, so a layout valid on one is valid on the other.

/** S3's cap on parts per upload; the local backend keeps it so both agree on a layout. */
export const MAX_PARTS = 10_000;
const MIB = 1024 * 1024;

function invalid(message: string): never {
  throw new StorageError('invalid_argument', message);
}

export function assertSize(size: number, what = 'size'): void {
  if (!Number.isSafeInteger(size) || size < 0) invalid(`${what} must be a non-negative integer, got ${size}`);
}

/** Number of parts of an upload of `size` bytes cut into `partSize` pieces (the last one shorter). */
export function partCount(size: number, partSize: number): number {
  return Math.ceil(size / partSize);
}

/** Size of part `n` (1-based). */
export function partSizeOf(size: number, partSize: number, n: number): number {
  return n < partCount(size, partSize) ? partSize : size - (n - 1) * partSize;
}

/**
 * The part size actually used: at least the requested one, grown (to a whole MiB) when the requested one
 * would need more than MAX_PARTS parts. Throws when even `maxPartSize` cannot cover `size`.
 */
export function choosePartSize(
  size: number,
  requested: number,
  limits: { min: number; max: number },
): number {
  assertSize(size);
  if (size === 0) invalid('a multipart upload needs at least one byte');
  if (!Number.isSafeInteger(requested) || requested < limits.min || requested > limits.max) {
    invalid(`part size must be an integer between ${limits.min} and ${limits.max}, got ${requested}`);
  }
  if (partCount(size, requested) <= MAX_PARTS) return requested;
  const grown = Math.ceil(size / MAX_PARTS / MIB) * MIB;
  if (grown > limits.max)
    invalid(`${size} bytes do not fit in ${MAX_PARTS} parts of at most ${limits.max} bytes`);
  return grown;
}

/**
 * Checks a layout received back from the caller (presignParts, completeMultipart) and returns its part count.
 */
export function assertLayout(size: number, partSize: number): number {
  assertSize(size);
  if (!Number.isSafeInteger(partSize) || partSize < 1)
    invalid(`part size must be a positive integer, got ${partSize}`);
  const count = partCount(size, partSize);
  if (count < 1 || count > MAX_PARTS)
    invalid(`${size} bytes in parts of ${partSize} make ${count} parts (1 to ${MAX_PARTS} allowed)`);
  return count;
}

export function assertPartNumbers(partNumbers: number[], count: number): void {
  for (const n of partNumbers) {
    if (!Number.isInteger(n) || n < 1 || n > count) invalid(`part number ${n} is outside 1..${count}`);
  }
}

/**
 * Seconds a presigned URL lives: at least 1, at most SigV4's 7 days (the local backend keeps the same bound).
 */
export function assertExpiry(expiresInS: number): void {
  if (!Number.isInteger(expiresInS) || expiresInS < 1 || expiresInS > 604_800) {
    invalid(`expiresInS must be an integer between 1 and 604800, got ${expiresInS}`);
  }
}

/** The error completeMultipart throws, naming the parts the store lacks or holds at the wrong size. */
export function incompleteUpload(missing: number[], wrongSize: number[]): StorageError {
  const list = (ns: number[]) =>
    ns.slice(0, 10).join(', ') + (ns.length > 10 ? ` and ${ns.length - 10} more` : '');
  const said = [
    missing.length ? `missing parts ${list(missing)}` : '',
    wrongSize.length ? `parts of the wrong size ${list(wrongSize)}` : '',
  ];
  return new StorageError(
    'incomplete_upload',
    `the upload is incomplete: ${said.filter(Boolean).join('; ')}`,
    { missing_parts: missing, wrong_size_parts: wrongSize },
  );
}
