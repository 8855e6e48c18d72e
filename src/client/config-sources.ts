// The sources of client settings as layers (options, environment, YAML files), each a map of raw values.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { ConfigError } from './core/errors.ts';

const requireHere = createRequire(import.meta.url);

/** Environment variable of each setting. */
export const ENV_VARIABLES = {
  serverUrl: 'SERVICE_SERVER_URL',
  apiKey: 'SERVICE_API_KEY',
  timeout: 'SERVICE_TIMEOUT',
  maxUploadWorkers: 'SERVICE_MAX_UPLOAD_WORKERS',
  organizationId: 'SERVICE_ORGANIZATION_ID',
  organizationSlug: 'SERVICE_ORGANIZATION_SLUG',
} as const;

/** YAML key of each setting in config.yaml, credentials.yaml or a combined file. */
export const YAML_KEYS = {
  serverUrl: 'server_url',
  apiKey: 'api_key',
  timeout: 'timeout',
  maxUploadWorkers: 'max_upload_workers',
  organizationId: 'organization_id',
  organizationSlug: 'organization_slug',
} as const;

export type SettingName = keyof typeof YAML_KEYS;

/** Where a setting's value came from, for `assay auth status`. */
export type SettingSource =
  | { readonly kind: 'option' }
  | { readonly kind: 'env'; readonly variable: string }
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'default' };

/** A raw, not yet validated value and its source. */
export interface Entry {
  readonly value: unknown;
  readonly source: SettingSource;
}

/** One source's values; a setting the source does not give is absent. */
export type Layer = Partial<Record<SettingName, Entry>>;

const NAMES = Object.keys(YAML_KEYS) as SettingName[];

/**
 * Names a value's source in an error message: `SERVICE_TIMEOUT`, `timeout in /x/config.yaml`,
 * `option timeout`.
 */
export function where(name: SettingName, source: SettingSource): string {
  if (source.kind === 'env') return source.variable;
  if (source.kind === 'file') return `${YAML_KEYS[name]} in ${source.path}`;
  return `option ${name}`;
}

// Empty and blank strings count as "not given" in every source, as an exported-but-empty variable does.
function given(value: unknown): unknown {
  if (typeof value === 'string') return value.trim() === '' ? undefined : value.trim();
  return value ?? undefined;
}

function layer(read: (name: SettingName) => unknown, source: (name: SettingName) => SettingSource): Layer {
  const result: Layer = {};
  for (const name of NAMES) {
    const value = given(read(name));
    if (value !== undefined) result[name] = { value, source: source(name) };
  }
  return result;
}

/** The explicit options layer. */
export function optionLayer(options: Readonly<Partial<Record<SettingName, unknown>>>): Layer {
  return layer(
    (name) => options[name],
    () => ({ kind: 'option' }),
  );
}

/** The SERVICE_* environment layer. */
export function envLayer(env: Readonly<Record<string, string | undefined>>): Layer {
  const variable = (name: SettingName) => ENV_VARIABLES[name];
  return layer(
    (name) => env[variable(name)],
    (name) => ({ kind: 'env', variable: variable(name) }),
  );
}

/**
 * One YAML file's layer; an optional file that does not exist gives an empty layer. Every known key is
 * accepted in every file (files may hold any subset); unknown keys are ignored with a warning, so a
 * config.yaml written by a newer client does not break an older one.
 */
export function fileLayer(file: string, required: boolean, warnings: string[]): Layer {
  const mapping = readYamlMapping(file, required) ?? {};
  const known = new Set<string>(Object.values(YAML_KEYS));
  for (const key of Object.keys(mapping)) {
    if (!known.has(key)) warnings.push(`ignored unknown key "${key}" in ${file}`);
  }
  return layer(
    (name) => mapping[YAML_KEYS[name]],
    () => ({ kind: 'file', path: file }),
  );
}

/**
 * Returns the file's top-level mapping, or undefined when an optional file does not exist.
 * An empty file is an empty mapping; anything unreadable, malformed or not a mapping is a ConfigError.
 */
export function readYamlMapping(file: string, required: boolean): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !required) return undefined;
    const why = code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'is a directory' : String(error);
    throw new ConfigError(`cannot read client config file ${file}: ${why}`, { cause: error });
  }
  // Loaded only when a file exists: most runners (a managed instance) have none, and yaml is ~70 modules.
  const { parseDocument } = requireHere('yaml') as typeof import('yaml');
  const document = parseDocument(text, { prettyErrors: true });
  const [first] = document.errors;
  if (first) {
    const [pos] = first.linePos ?? [];
    // prettyErrors appends " at line L, column C:" and a source excerpt; the position goes first instead.
    const reason = first.message.replace(/ at line \d+, column \d+:[\s\S]*$/, '');
    const at = pos ? `${file}:${pos.line}:${pos.col}` : file;
    throw new ConfigError(`${at}: invalid YAML: ${reason}`, { cause: first });
  }
  let value: unknown;
  try {
    value = document.toJS();
  } catch (error) {
    throw new ConfigError(`${file}: invalid YAML: ${(error as Error).message}`, { cause: error }); // e.g. alias bombs
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    const kind = Array.isArray(value) ? 'a list' : `a ${typeof value}`;
    throw new ConfigError(`${file}: the top level must be a mapping of settings (key: value), got ${kind}`);
  }
  return value as Record<string, unknown>;
}
