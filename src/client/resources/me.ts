import type { Me as MeShape, MyScopes, Organization } from '@assay/contract';
import type { Transport } from '../core/transport.ts';

/** The caller and the credential in use (the contract's Me). */
export type MeData = MeShape;
/** An organization the caller belongs to, with their role in it. */
export type OrganizationScope = Organization;
/** The caller's personal scope and organization memberships (the contract's MyScopes). */
export type ScopesData = MyScopes;

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
