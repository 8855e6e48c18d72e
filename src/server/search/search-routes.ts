import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { ErrorResponse, SearchQuery, SearchResponse } from '@assay/contract';
import type { Db } from '../db/database.ts';
import { withErrors } from '../http/schemas.ts';
import { search, searchDisabled } from './search-service.ts';

export function searchRoutes(db: Db, enabled: boolean) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/search',
      {
        config: { scope: 'search:read' },
        schema: {
          tags: ['search'],
          operationId: 'search',
          summary:
            'Full-text search over research documents and papers (websearch syntax); 503 when search is off',
          querystring: SearchQuery,
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
