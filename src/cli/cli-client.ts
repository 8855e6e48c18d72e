// The client every command uses: settings from SERVICE_* variables and ~/.assay, plus `--organization`.
import { Client } from '../client/client.ts';
import { PERSONAL } from '../client/config.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A client from the environment and files. `--organization` takes an id, a slug (resolved by the client
 * through /v1/me/scopes) or `personal`; `organizationId` is what to pass on scoped calls.
 */
export function openClient(organization?: string): { client: Client; organizationId: string | undefined } {
  if (organization === undefined) return { client: new Client(), organizationId: undefined };
  if (organization === PERSONAL) return { client: new Client(), organizationId: PERSONAL };
  if (UUID.test(organization))
    return { client: new Client({ organizationId: organization }), organizationId: undefined };
  return { client: new Client({ organizationSlug: organization }), organizationId: undefined };
}
