import { ConfigError } from './errors.ts';
import type { Transport } from './transport.ts';

/** Passed as organizationId on a call, forces personal scope (sent as `organization_id: "personal"`). */
export const PERSONAL = 'personal';

/**
 * `organization_id` to send on a call: an explicit choice, else the client's default, else none
 * (server default).
 */
export type OrganizationChoice = string | undefined;

/** Resolves the client's default organization once: an id as given, or a slug through /v1/me/scopes. */
export class OrganizationDefault {
  #resolved: Promise<string | undefined> | undefined;
  readonly #transport: Transport;
  readonly #id: string | undefined;
  readonly #slug: string | undefined;

  constructor(transport: Transport, id: string | undefined, slug: string | undefined) {
    this.#transport = transport;
    this.#id = id;
    this.#slug = slug;
  }

  /** The organization_id for a call: the call's own choice (an id or PERSONAL) wins over the default. */
  async forCall(choice: OrganizationChoice): Promise<string | undefined> {
    if (choice !== undefined) return choice;
    if (this.#id !== undefined || this.#slug === undefined) return this.#id;
    this.#resolved ??= this.#resolveSlug(this.#slug).catch((error: unknown) => {
      this.#resolved = undefined; // a failed lookup (network, auth) is tried again on the next call
      throw error;
    });
    return this.#resolved;
  }

  async #resolveSlug(slug: string): Promise<string> {
    const scopes = await this.#transport.get<{ organizations: Array<{ id: string; slug: string }> }>(
      '/v1/me/scopes',
    );
    const match = scopes.organizations.find((o) => o.slug === slug);
    if (!match) {
      const known = scopes.organizations.map((o) => o.slug).join(', ') || 'none';
      throw new ConfigError(`organization slug "${slug}" is not one of your organizations (yours: ${known})`);
    }
    return match.id;
  }
}
