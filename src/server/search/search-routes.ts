import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../db/database.ts';
import { ErrorResponse, Nullable, OrganizationRef, Timestamp, Uuid, withErrors } from '../http/schemas.ts';
import { search, searchDisabled } from './search-service.ts';

const SearchResponse = Type.Object(
  {
    query: Type.String(),
    items: Type.Array(
      Type.Object({
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
      }),
    ),
  },
  { $id: 'SearchResponse' },
);

export function searchRoutes(db: Db, enabled: boolean) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/search',
      {
        config: { scope: 'search:read' },
        schema: {
          tags: ['search'],
          summary:
            'Full-text search over research documents and papers (websearch syntax); 503 when search is off',
          querystring: Type.Object(
            {
              q: Type.String({ minLength: 1, maxLength: 1000 }),
              kind: Type.Optional(Type.String({ maxLength: 40 })),
              organization_id: Type.Optional(OrganizationRef),
              limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
            },
            { additionalProperties: false },
          ),
          response: withErrors({ 200: SearchResponse, 503: ErrorResponse }),
        },
      },
      async (req) => {
        if (!enabled) throw searchDisabled();
        return search(db, req.principal, req.query);
      },
    );
  };
}
