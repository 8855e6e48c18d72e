import type { OrganizationChoice, OrganizationDefault } from '../core/organization.ts';
import { query } from '../core/path.ts';
import type { Transport } from '../core/transport.ts';

export interface SearchHit {
  asset_id: string;
  kind: string;
  name: string;
  experiment_id: string | null;
  run_id: string | null;
  created_at: string;
  rank: number;
  /** Matches wrapped in <mark></mark>; the text itself is not HTML-escaped. */
  snippet: string;
}

export interface SearchResponse {
  query: string;
  items: SearchHit[];
}

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
