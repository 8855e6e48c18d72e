import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../http/errors.ts';

/** Everything a local storage URL grants, all of it covered by the signature. */
export interface SignedGrant {
  method: 'PUT' | 'GET';
  key: string;
  /** Unix seconds. */
  expires: number;
  /** Exact byte count a PUT must send. */
  size?: number;
  uploadId?: string;
  part?: number;
  /** Download name for Content-Disposition (GET). */
  filename?: string;
}

// JSON of a fixed-order array: unambiguous whatever characters the key or filename hold.
function canonical(g: SignedGrant): string {
  return JSON.stringify([
    'assay-storage-v1',
    g.method,
    g.key,
    g.expires,
    g.size ?? null,
    g.uploadId ?? null,
    g.part ?? null,
    g.filename ?? null,
  ]);
}

export function signGrant(secret: Buffer, grant: SignedGrant): string {
  return createHmac('sha256', secret).update(canonical(grant)).digest('base64url');
}

/** The query string of a signed URL. */
export function grantQuery(secret: Buffer, grant: SignedGrant): string {
  const q = new URLSearchParams({ expires: String(grant.expires) });
  if (grant.size !== undefined) q.set('size', String(grant.size));
  if (grant.uploadId !== undefined) q.set('upload_id', grant.uploadId);
  if (grant.part !== undefined) q.set('part', String(grant.part));
  if (grant.filename !== undefined) q.set('filename', grant.filename);
  q.set('signature', signGrant(secret, grant));
  return q.toString();
}

const denied = (code: 'signature_invalid' | 'url_expired', message: string) =>
  new AppError(403, code, message);

function field(query: Record<string, unknown>, name: string, pattern: RegExp): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !pattern.test(value))
    throw denied('signature_invalid', `malformed ${name} in the signed URL`);
  return value;
}

/**
 * Rebuilds the grant from a request's method, key and query and checks it: a wrong signature (anything
 * edited) is `signature_invalid`, a correct one past its time is `url_expired`; both 403. Signature first, so
 * editing `expires` can never turn into "expired" instead of "tampered".
 */
export function verifyGrant(
  secret: Buffer,
  method: 'PUT' | 'GET',
  key: string,
  query: Record<string, unknown>,
  nowMs = Date.now(),
): SignedGrant {
  const signature = field(query, 'signature', /^[A-Za-z0-9_-]{43}$/);
  const expires = field(query, 'expires', /^\d{1,12}$/);
  if (!signature || !expires) throw denied('signature_invalid', 'the URL carries no signature or expiry');
  const size = field(query, 'size', /^\d{1,16}$/);
  const part = field(query, 'part', /^\d{1,5}$/);
  const grant: SignedGrant = {
    method,
    key,
    expires: Number(expires),
    ...(size !== undefined ? { size: Number(size) } : {}),
    ...(query.upload_id !== undefined ? { uploadId: field(query, 'upload_id', /^[0-9a-f]{32}$/) } : {}),
    ...(part !== undefined ? { part: Number(part) } : {}),
    ...(query.filename !== undefined ? { filename: field(query, 'filename', /^[^]{1,1024}$/) } : {}),
  };
  // Compared as text: decoding base64 would ignore the spare low bits of the last character.
  const expected = Buffer.from(signGrant(secret, grant));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw denied(
      'signature_invalid',
      'the URL signature does not match; it was altered or signed by another server',
    );
  }
  if (grant.expires * 1000 <= nowMs)
    throw denied('url_expired', `the URL expired at ${new Date(grant.expires * 1000).toISOString()}`);
  return grant;
}
