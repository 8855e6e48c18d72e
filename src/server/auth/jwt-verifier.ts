import { readFileSync } from 'node:fs';
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type { JwtConfig } from '../config.ts';

export type JwtVerifier = (token: string) => Promise<JWTPayload & { sub: string }>;

/**
 * Verifies identity-provider access tokens with `jose`: RS256 only (so `none` and HS256 tokens are refused
 * whatever their header says), the configured issuer and audience, `exp` (required: a token without one would
 * never expire) and `nbf`.
 */
export function createJwtVerifier(config: JwtConfig): JwtVerifier {
  const keys = config.jwksUrl
    ? createRemoteJWKSet(new URL(config.jwksUrl), { timeoutDuration: 5000, cooldownDuration: 30_000 })
    : createLocalJWKSet(JSON.parse(readFileSync(config.jwksFile!, 'utf8')));
  return async (token) => {
    const { payload } = await jwtVerify(token, keys, {
      issuer: config.issuer,
      audience: config.audience,
      algorithms: ['RS256'],
      requiredClaims: ['exp'],
      clockTolerance: 5,
    });
    if (typeof payload.sub !== 'string' || payload.sub === '') throw new Error('token has no subject');
    return payload as JWTPayload & { sub: string };
  };
}
