import type { StorageConfig } from '../storage/storage-config.ts';

/**
 * Where the browser uploads to and downloads from: presigned URLs point at the bucket's endpoint (S3) or at
 * the service's public URL (local storage), which may differ from the origin the page was loaded from.
 */
export function storageOrigins(storage: StorageConfig): string[] {
  if (storage.kind === 'local') return [new URL(storage.publicUrl).origin];
  const endpoint = new URL(storage.endpoint ?? `https://s3.${storage.region}.amazonaws.com`);
  if (storage.forcePathStyle) return [endpoint.origin];
  // Virtual-hosted style: the bucket is a subdomain of the endpoint.
  return [`${endpoint.protocol}//${storage.bucket}.${endpoint.host}`];
}

/**
 * The policy of every UI response: scripts and styles from this origin only (no inline code, no eval),
 * connections to this origin and the storage, no framing, no plugins, no <base> rewriting.
 */
export function contentSecurityPolicy(storage: StorageConfig): string {
  const connect = ["'self'", ...storageOrigins(storage)];
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src ${[...new Set(connect)].join(' ')}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}
