import { Type, type Static, type TLiteral, type TSchema, type TUnion } from 'typebox';

/** Ids are UUID text, timestamps RFC 3339 text, nullable where a moment may not have come. */
export const Uuid = Type.String({ format: 'uuid' });
export const Timestamp = Type.String({ format: 'date-time' });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const JsonObject = Type.Record(Type.String(), Type.Unknown());
export type JsonObject = Static<typeof JsonObject>;

/** A positive 32-bit integer: variation numbers n and run numbers r. */
export const PositiveInt32 = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });

/** `personal` (the client's PERSONAL) or an organization id. */
export const OrganizationRef = Type.Union([Type.Literal('personal'), Uuid]);

/** Text fields: bounded so a client mistake cannot grow a row without limit. */
export const ShortText = (maxLength = 200) => Type.String({ minLength: 1, maxLength });
export const LongText = (maxLength = 20_000) => Type.String({ maxLength });

/** The query of a cursor-paged list. */
export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
};

/** One page of a cursor-paged list; `next_cursor` is null on the last. */
export const Page = <T extends TSchema>(item: T) =>
  Type.Object({ items: Type.Array(item), next_cursor: Nullable(Type.String()) });
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** A whole (unpaged) list. */
export const ItemList = <T extends TSchema>(item: T) => Type.Object({ items: Type.Array(item) });

/** A 204 answer: no body (the OpenAPI document shows no content). */
export const NoContent = Type.Null({ description: 'No content' });

/** The body of a move that takes no input: absent, or `{}`. */
export const NoBody = Type.Optional(Type.Object({}, { additionalProperties: false }));

type Literals<T extends readonly string[]> = T extends readonly [
  infer Head extends string,
  ...infer Rest extends readonly string[],
]
  ? [TLiteral<Head>, ...Literals<Rest>]
  : [];

/** A union of string literals from a `const` array, so that the array stays the one list of the values. */
export const OneOf = <const T extends readonly string[]>(
  values: T,
  options: { description?: string; default?: T[number] } = {},
): TUnion<Literals<T>> =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  ) as never;

/** What the liveness and readiness probes answer when all is well. */
export const ProbeStatus = Type.Object({ status: Type.String() });
