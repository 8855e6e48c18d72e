// `assay auth login`: a hidden prompt for a key or token, a live check, a default organization, then the
// two files.
import { defaultConfigPaths, inspectSettings, maskKey } from '../client/config.ts';
import { checkKey, checkUrl } from '../client/config-values.ts';
import { ApiClient, type OrganizationScope } from '../client/index.ts';
import {
  currentOrganization,
  mergeConfig,
  writeCredentials,
  type OrganizationSetting,
} from './auth-files.ts';
import { UsageError } from './command-args.ts';
import { Prompter } from './prompt.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface LoginOptions {
  serverUrl?: string;
  organization?: string;
  personal?: boolean;
  /** False with --no-verify. */
  verify: boolean;
}

export async function authLogin(values: LoginOptions): Promise<number> {
  const givenUrl = values.serverUrl === undefined ? undefined : checkUrl(values.serverUrl, '--server-url');
  const serverUrl = givenUrl ?? inspectSettings().settings.serverUrl;
  const paths = defaultConfigPaths();
  const prompter = new Prompter();
  try {
    process.stderr.write(`Logging in to ${serverUrl}\n`);
    const key = await prompter.hidden('API key or access token');
    if (key === '') throw new UsageError('no key given');
    checkKey(key, 'the key');
    let organization: OrganizationSetting;
    if (!values.verify) {
      process.stderr.write('Not verified (--no-verify).\n');
      organization = values.personal
        ? 'personal'
        : values.organization !== undefined
          ? asGiven(values.organization)
          : 'keep';
    } else {
      const { me } = new ApiClient({ serverUrl, apiKey: key, timeout: 30 });
      const who = await me.get();
      process.stderr.write(`Verified: ${who.email ?? who.name ?? who.id} (${maskKey(key)}).\n`);
      const { organizations } = await me.scopes();
      if (values.personal) organization = 'personal';
      else if (values.organization !== undefined)
        organization = { id: find(organizations, values.organization).id };
      else organization = await choose(prompter, organizations, await currentOrganization(paths.config));
    }
    await mergeConfig(paths.config, { serverUrl: givenUrl, organization });
    await writeCredentials(paths.credentials, key);
    process.stdout.write(`Saved ${paths.config}\nSaved ${paths.credentials} (mode 600)\n`);
    warnAboutEnvironment();
    return 0;
  } finally {
    prompter.close();
  }
}

function asGiven(value: string): OrganizationSetting {
  if (value === 'personal') return 'personal';
  return UUID.test(value) ? { id: value } : { slug: value };
}

function find(organizations: OrganizationScope[], idOrSlug: string): OrganizationScope {
  const match = organizations.find((o) => o.id === idOrSlug || o.slug === idOrSlug);
  if (match) return match;
  const yours = organizations.map((o) => o.slug).join(', ') || 'none';
  throw new UsageError(`"${idOrSlug}" is not one of your organizations (yours: ${yours})`);
}

/** Lists the organizations and asks; a wrong answer is asked again, three times at most. */
async function choose(
  prompter: Prompter,
  organizations: OrganizationScope[],
  current: { id?: string; slug?: string },
): Promise<OrganizationSetting> {
  if (organizations.length === 0) {
    process.stderr.write('You belong to no organization: calls use your personal scope.\n');
    return 'keep';
  }
  const now = organizations.find((o) => o.id === current.id || o.slug === current.slug);
  const keeps = now ? now.slug : (current.id ?? current.slug ?? 'personal scope');
  const width = Math.max(...organizations.map((o) => o.slug.length));
  const lines = organizations.map(
    (o, i) => `  ${i + 1}  ${o.slug.padEnd(width)}  ${o.name} (${o.role})${o === now ? '  [current]' : ''}`,
  );
  process.stderr.write(
    `Your organizations:\n  0  ${'personal'.padEnd(width)}  your personal scope\n${lines.join('\n')}\n`,
  );
  for (let attempt = 0; attempt < 3; attempt++) {
    const answer = await prompter.line(`Default organization (number or slug; Enter keeps ${keeps}): `);
    if (answer === '') return 'keep';
    if (answer === '0' || answer === 'personal') return 'personal';
    const picked = /^\d+$/.test(answer)
      ? organizations[Number(answer) - 1]
      : organizations.find((o) => o.slug === answer || o.id === answer);
    if (picked) {
      process.stderr.write(`Default organization: ${picked.slug} (${picked.id})\n`);
      return { id: picked.id };
    }
    process.stderr.write(`"${answer}" is not on the list.\n`);
    if (!prompter.interactive) break;
  }
  throw new UsageError('no organization chosen');
}

// Variables outrank the files just written; say so, or the new login seems to have no effect.
function warnAboutEnvironment(): void {
  for (const name of [
    'SERVICE_API_KEY',
    'SERVICE_SERVER_URL',
    'SERVICE_ORGANIZATION_ID',
    'SERVICE_ORGANIZATION_SLUG',
    'SERVICE_CONFIG',
  ]) {
    if (process.env[name]?.trim())
      process.stderr.write(`note: ${name} is set in this environment and takes precedence over the files\n`);
  }
}
