import type { AddMemberBody, Member, MemberAddition, Organization } from '@assay/contract';
import { path } from '../core/path.ts';
import type { Transport } from '../core/transport.ts';

export type { Member, MemberAddition, Organization, OrganizationRole } from '@assay/contract';

/** The organizations namespace: create one, read it, list and add its members. */
export class Organizations {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Creates an organization; the caller becomes its owner. A taken slug raises ConflictError (409). */
  create(params: { slug: string; name: string }): Promise<Organization> {
    return this.#t.post('/organizations', { slug: params.slug, name: params.name });
  }

  /** An organization the caller belongs to, with the caller's role in it. */
  get(id: string): Promise<Organization> {
    return this.#t.get(path`/organizations/${id}`);
  }

  /** Its members, with their roles. */
  async members(id: string): Promise<Member[]> {
    return (await this.#t.get<{ items: Member[] }>(path`/organizations/${id}/members`)).items;
  }

  /**
   * Adds an existing user by id or email (owners only); a member already in raises ConflictError (409). The
   * answer echoes the request whether or not the user exists (an unknown one adds no one): `members()` shows
   * who is in.
   */
  addMember(id: string, member: AddMemberBody): Promise<MemberAddition> {
    return this.#t.post(path`/organizations/${id}/members`, member);
  }
}
