// What `assay auth login` writes: config.yaml merged in place (comments and other keys kept),
// credentials.yaml replaced.
import { chmod, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseDocument, stringify } from 'yaml';
import { ConfigError } from '../client/index.ts';

/** The organization default to store: an id, a slug, none (personal), or leave the file's as it is. */
export type OrganizationSetting = { id: string } | { slug: string } | 'personal' | 'keep';

/** The organization config.yaml names now, if any. */
export async function currentOrganization(configPath: string): Promise<{ id?: string; slug?: string }> {
  const doc = await readDocument(configPath);
  const value = (key: string) => {
    const v: unknown = doc.get(key);
    return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
  };
  return { id: value('organization_id'), slug: value('organization_slug') };
}

/** Merges server_url and the organization into config.yaml; every other key and comment stays. */
export async function mergeConfig(
  configPath: string,
  changes: { serverUrl?: string; organization: OrganizationSetting },
): Promise<void> {
  const doc = await readDocument(configPath);
  if (changes.serverUrl !== undefined) doc.set('server_url', changes.serverUrl);
  const org = changes.organization;
  if (org !== 'keep') {
    // One of the two keys only: the new choice replaces both.
    doc.delete('organization_id');
    doc.delete('organization_slug');
    if (typeof org === 'object' && 'id' in org) doc.set('organization_id', org.id);
    if (typeof org === 'object' && 'slug' in org) doc.set('organization_slug', org.slug);
  }
  // A config.yaml the user made private stays private.
  const mode = await stat(configPath).then(
    (s) => s.mode & 0o777,
    () => 0o644,
  );
  await writeAtomically(configPath, doc.toString(), mode);
}

/** Replaces credentials.yaml with the key alone, mode 600: a re-login rotates the key. */
export async function writeCredentials(credentialsPath: string, apiKey: string): Promise<void> {
  await writeAtomically(credentialsPath, stringify({ api_key: apiKey }), 0o600);
}

async function readDocument(file: string) {
  let text = '';
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new ConfigError(`cannot read ${file}: ${(error as Error).message}`);
  }
  const doc = parseDocument(text);
  // Never overwrite a file we could not read back: the user's other settings would be lost.
  if (doc.errors.length > 0)
    throw new ConfigError(
      `${file}: invalid YAML (${doc.errors[0]!.message.split('\n')[0]}); fix or remove it, then log in again`,
    );
  const value: unknown = doc.toJS();
  if (value !== null && value !== undefined && (typeof value !== 'object' || Array.isArray(value))) {
    throw new ConfigError(
      `${file}: the top level must be a mapping of settings; fix or remove it, then log in again`,
    );
  }
  return doc;
}

// Written beside the target and renamed over it, so a crash never leaves half a file; the mode is set before
// any byte is written, so the key is never readable by others, not even for a moment.
async function writeAtomically(file: string, text: string, mode: number): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, text, { mode });
  await chmod(temp, mode); // the umask may have taken bits away from a 644 config; 600 stays 600
  await rename(temp, file);
}
