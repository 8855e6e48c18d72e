import type { Transport } from '../core/transport.ts';

export interface MeData {
  id: string;
  email: string | null;
  name: string | null;
  is_admin: boolean;
  default_organization_id: string | null;
  auth: { via: string; key_id: string | null; scopes: string[]; run_id: string | null };
}

export interface OrganizationScope {
  id: string;
  slug: string;
  name: string;
  role: 'owner' | 'member';
  created_at: string;
}

export interface ScopesData {
  personal: { user_id: string };
  default_organization_id: string | null;
  organizations: OrganizationScope[];
}

/** The caller: who the key belongs to, and the organizations they can act in. */
export class Me {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  get(): Promise<MeData> {
    return this.#t.get('/v1/me');
  }

  /** The caller's personal scope and organization memberships (GET /v1/me/scopes). */
  scopes(): Promise<ScopesData> {
    return this.#t.get('/v1/me/scopes');
  }

  /** Sets the server-side default organization (null: personal). */
  setDefaultOrganization(organizationId: string | null): Promise<MeData> {
    return this.#t.request('PATCH', '/v1/me', { body: { default_organization_id: organizationId } });
  }
}
