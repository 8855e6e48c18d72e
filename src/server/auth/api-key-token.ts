import type { ApiKeyKind } from '@assay/contract';
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

export type KeyKind = ApiKeyKind;

/**
 * Keys, plus the one-time exchange tokens a managed instance trades for its worker key (never an API key).
 */
export type TokenKind = KeyKind | 'exchange';

const TOKEN = /^sk_(user|agent|worker|exchange)_([0-9a-f]{32})([A-Za-z0-9_-]{43})$/;

/**
 * A fresh token: `sk_<kind>_<id as 32 hex><secret, 32 random bytes base64url>`; only the secret's hash
 * is stored.
 */
export function mintToken(kind: TokenKind): { id: string; token: string; secretHash: Buffer } {
  const id = randomUUID();
  const secret = randomBytes(32).toString('base64url');
  return { id, token: `sk_${kind}_${id.replaceAll('-', '')}${secret}`, secretHash: hashSecret(secret) };
}

/** Splits a token into kind, key id and secret; undefined when it is not one of our keys. */
export function parseToken(token: string): { kind: TokenKind; id: string; secret: string } | undefined {
  const m = TOKEN.exec(token);
  if (!m) return undefined;
  const hex = m[2]!;
  const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return { kind: m[1] as TokenKind, id, secret: m[3]! };
}

/** The secret has 256 bits of entropy, so a fast hash is enough: no dictionary to defend against. */
export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

export function secretMatches(secret: string, storedHash: Uint8Array): boolean {
  const candidate = hashSecret(secret);
  const stored = Buffer.from(storedHash);
  return stored.length === candidate.length && timingSafeEqual(candidate, stored);
}

/** Tokens look like keys when they carry one of our prefixes; everything else is tried as a JWT. */
export function looksLikeApiKey(token: string): boolean {
  return token.startsWith('sk_');
}
