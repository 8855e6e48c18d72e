import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

// What a caller's id may be: UUIDs, ULIDs, hex trace ids (W3C traceparent), short names such as `req-42`.
const SAFE_ID = /^[A-Za-z0-9.:-]{1,64}$/;
// A key's secret is 43 characters of base64url and an access token is longer still: letters of both cases
// across this many characters are a credential's entropy, not an id (UUIDs, hex and ULIDs are one case).
const MIXED_CASE_FROM = 20;
// No part of an id between separators is longer than a 32-digit hex trace id; a hex secret would be.
const LONGEST_PART = 32;

/** Whether a caller's x-request-id is an id, and not something shaped like a key, a secret or a token. */
export function isSafeRequestId(id: string): boolean {
  if (!SAFE_ID.test(id)) return false;
  const alnum = id.replace(/[.:-]/g, '');
  if (alnum.length >= MIXED_CASE_FROM && /[a-z]/.test(alnum) && /[A-Z]/.test(alnum)) return false;
  if (/^sk\W/i.test(id)) return false;
  return id.split(/[.:-]/).every((part) => part.length <= LONGEST_PART);
}

/** Keeps a caller's x-request-id when it is harmless to log and echo; otherwise mints one. */
export function requestIdFor(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && isSafeRequestId(given) ? given : randomUUID();
}
