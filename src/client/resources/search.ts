import type { SearchResponse } from '@assay/contract';
import type { OrganizationChoice, OrganizationDefault } from '../core/organization.ts';
import { query } from '../core/path.ts';
import type { Transport } from '../core/transport.ts';

export type { ScopeHits, SearchHit, SearchResponse } from '@assay/contract';

/** Full-text search over research documents and papers. A server without search raises ServerError (503). */
export class Search {
  readonly #t: Transport;
  readonly #org: OrganizationDefault;

  constructor(transport: Transport, organization: OrganizationDefault) {
    this.#t = transport;
    this.#org = organization;
  }

  /** Websearch syntax: words, "quoted phrases", -exclusions, or. */
  async query(
    q: string,
    params: { kind?: string; limit?: number; organizationId?: OrganizationChoice } = {},
  ): Promise<SearchResponse> {
    const organization_id = await this.#org.forCall(params.organizationId);
    return this.#t.get(`/search${query({ q, kind: params.kind, limit: params.limit, organization_id })}`);
  }
}
