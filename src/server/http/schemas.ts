import type { RouteOptions } from 'fastify';
import { Type, type TSchema } from 'typebox';

/** Shared wire shapes: ids are UUID text, timestamps RFC 3339 text, nullable where a moment may not have come. */
export const Uuid = Type.String({ format: 'uuid' });
export const Timestamp = Type.String({ format: 'date-time' });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const JsonObject = Type.Record(Type.String(), Type.Unknown());

/** `personal` (the client's PERSONAL) or an organization id. */
export const OrganizationRef = Type.Union([Type.Literal('personal'), Uuid]);

export const ErrorResponse = Type.Object({
  error: Type.Object({
    code: Type.String({ description: 'stable snake_case code' }),
    message: Type.String(),
    details: Type.Optional(Type.Unknown()),
  }),
});

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

/** An onRoute hook: every documented route that reads a body also documents the 413 and 415 Fastify may answer. */
export function documentBodyErrors(route: RouteOptions): void {
  const response = route.schema?.response as Record<number, unknown> | undefined;
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (!response || !methods.some((m) => BODY_METHODS.has(m))) return;
  response[413] ??= ErrorResponse;
  response[415] ??= ErrorResponse;
}

/** An onRoute hook: a route that may answer 401 may also answer 429 once the caller's address failed too often. */
export function documentAuthLimit(route: RouteOptions): void {
  const response = route.schema?.response as Record<number, unknown> | undefined;
  if (response?.[401]) response[429] ??= ErrorResponse;
}

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
};

/** Text fields: bounded so a client mistake cannot grow a row without limit. */
export const ShortText = (maxLength = 200) => Type.String({ minLength: 1, maxLength });
export const LongText = (maxLength = 20_000) => Type.String({ maxLength });

export function iso(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return (value instanceof Date ? value : new Date(value)).toISOString();
}
