import type { RouteOptions } from 'fastify';
import type { TSchema } from 'typebox';
import { ErrorResponse } from '@assay/contract';

/** Adds the documented error answers to a route's response map. */
export function withErrors(
  responses: Record<number, TSchema>,
  ...statuses: number[]
): Record<number, TSchema> {
  const all: Record<number, TSchema> = { ...responses };
  for (const status of [400, 401, 403, 404, 422, ...statuses]) all[status] = ErrorResponse;
  return all;
}

// Methods whose bodies Fastify parses, and so may refuse before any handler: over the body limit (413) or of
// a media type no parser reads (415).
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * An onRoute hook: every documented route that reads a body also documents the 413 and 415 Fastify
 * may answer.
 */
export function documentBodyErrors(route: RouteOptions): void {
  const response = route.schema?.response as Record<number, unknown> | undefined;
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (!response || !methods.some((m) => BODY_METHODS.has(m))) return;
  response[413] ??= ErrorResponse;
  response[415] ??= ErrorResponse;
}

/**
 * An onRoute hook: a route that may answer 401 may also answer 429 once the caller's address failed
 * too often.
 */
export function documentAuthLimit(route: RouteOptions): void {
  const response = route.schema?.response as Record<number, unknown> | undefined;
  if (response?.[401]) response[429] ??= ErrorResponse;
}

export function iso(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return (value instanceof Date ? value : new Date(value)).toISOString();
}
