import { Type, type Static } from 'typebox';
import { Nullable, OrganizationRef, Timestamp, Uuid } from './common.ts';
import { OwnerScope } from './organizations.ts';

export const SearchQuery = Type.Object(
  {
    q: Type.String({ minLength: 1, maxLength: 1000 }),
    kind: Type.Optional(Type.String({ maxLength: 40 })),
    organization_id: Type.Optional(OrganizationRef),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  },
  { additionalProperties: false },
);
export type SearchQuery = Static<typeof SearchQuery>;

export const SearchHit = Type.Object({
  asset_id: Uuid,
  kind: Type.String(),
  name: Type.String(),
  experiment_id: Nullable(Uuid),
  run_id: Nullable(Uuid),
  created_at: Timestamp,
  rank: Type.Number(),
  snippet: Type.String({
    description: 'matches wrapped in <mark></mark>; the text is not HTML-escaped',
  }),
});
export type SearchHit = Static<typeof SearchHit>;

/** Another scope the caller can search, and how many ready documents in it match (counted up to 1000). */
export const ScopeHits = Type.Object({ scope: OwnerScope, hits: Type.Integer({ minimum: 0 }) });
export type ScopeHits = Static<typeof ScopeHits>;

export const SearchResponse = Type.Object(
  {
    query: Type.String(),
    /** The scope searched. */
    scope: OwnerScope,
    items: Type.Array(SearchHit),
    other_scopes: Type.Array(ScopeHits, {
      description:
        'when items is empty: each other scope the caller can search that has matches (empty otherwise)',
    }),
  },
  { $id: 'SearchResponse' },
);
export type SearchResponse = Static<typeof SearchResponse>;
