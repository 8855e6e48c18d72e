// `assay organizations …`: create an organization, list the caller's, list and add members.
import type { Client, OrganizationRole } from '../client/index.ts';
import { openClient } from './cli-client.ts';
import { UsageError } from './command-args.ts';
import { printJson, printTable } from './output.ts';
import type { JsonOptions } from './program/shared-options.ts';

export interface CreateOptions extends JsonOptions {
  slug?: string;
}

export interface AddMemberOptions extends JsonOptions {
  role: OrganizationRole;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// The contract's slug: lowercase letters, digits and dashes, 2 to 63 characters, not "personal".
const SLUG = /^(?!personal$)[a-z0-9][a-z0-9-]{1,62}$/;

export async function create(name: string, values: CreateOptions): Promise<number> {
  const slug = values.slug ?? slugOf(name);
  if (!SLUG.test(slug))
    throw new UsageError(
      `"${slug}" is not a usable slug: lowercase letters, digits and dashes, 2 to 63 characters, not ` +
        '"personal"; pass --slug',
    );
  const org = await openClient().client.organizations.create({ slug, name });
  if (values.json) printJson(org);
  else
    process.stdout.write(
      `created organization "${org.slug}" (${org.id}); act in it with --organization ${org.slug}, ` +
        `or make it your default with \`assay auth login --organization ${org.slug}\`\n`,
    );
  return 0;
}

export async function list(values: JsonOptions): Promise<number> {
  const scopes = await openClient().client.me.scopes();
  if (values.json) {
    printJson(scopes);
    return 0;
  }
  const defaultId = scopes.default_organization_id;
  printTable(scopes.organizations, [
    ['SLUG', (o) => o.slug],
    ['NAME', (o) => o.name],
    ['ROLE', (o) => o.role],
    ['DEFAULT', (o) => (o.id === defaultId ? 'yes' : '')],
    ['ID', (o) => o.id],
  ]);
  process.stderr.write(
    scopes.organizations.length === 0
      ? 'no organizations: you act in your personal scope; `assay organizations create NAME` makes one\n'
      : `(and your personal scope: --organization personal${defaultId === null ? ', the default' : ''})\n`,
  );
  return 0;
}

export async function listMembers(organization: string, values: JsonOptions): Promise<number> {
  const { client } = openClient();
  const members = await client.organizations.members(await organizationId(client, organization));
  if (values.json) printJson({ items: members });
  else
    printTable(members, [
      ['EMAIL', (m) => m.email],
      ['NAME', (m) => m.name],
      ['ROLE', (m) => m.role],
      ['SINCE', (m) => m.created_at],
      ['USER ID', (m) => m.user_id],
    ]);
  return 0;
}

export async function addMember(
  organization: string,
  user: string,
  values: AddMemberOptions,
): Promise<number> {
  const { client } = openClient();
  const id = await organizationId(client, organization);
  const who = UUID.test(user) ? { user_id: user } : { email: user };
  const added = await client.organizations.addMember(id, { ...who, role: values.role });
  if (values.json) printJson(added);
  else
    // The service answers alike whether or not the user exists (so that adding cannot probe for accounts):
    // the members list says who is in.
    process.stdout.write(
      `asked to add ${user} to ${organization} as ${added.role}; an address with no account adds no one ` +
        `(\`assay organizations members list ${organization}\` shows who is in)\n`,
    );
  return 0;
}

/** "ML Lab" → "ml-lab". */
export function slugOf(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
}

/** An id as given; a slug looked up among the caller's organizations. */
async function organizationId(client: Client, organization: string): Promise<string> {
  if (UUID.test(organization)) return organization;
  const scopes = await client.me.scopes();
  const match = scopes.organizations.find((o) => o.slug === organization);
  if (match) return match.id;
  const yours = scopes.organizations.map((o) => o.slug).join(', ') || 'none';
  throw new Error(`"${organization}" is not one of your organizations (yours: ${yours})`);
}
