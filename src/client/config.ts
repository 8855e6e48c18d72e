// Client configuration resolution: options → environment → YAML files → defaults, per setting.
import os from 'node:os';
import path from 'node:path';
import { envLayer, fileLayer, optionLayer, where } from './config-sources.ts';
import type { Layer, SettingName, SettingSource } from './config-sources.ts';
import {
  checkKey,
  checkString,
  checkTimeout,
  checkUrl,
  checkWorkers,
  DEFAULT_MAX_UPLOAD_WORKERS,
  DEFAULT_SERVER_URL,
  DEFAULT_TIMEOUT_SECONDS,
} from './config-values.ts';
import { ConfigError } from './core/errors.ts';

export { ENV_VARIABLES, YAML_KEYS } from './config-sources.ts';
export type { SettingName, SettingSource } from './config-sources.ts';
export { PERSONAL } from './core/organization.ts';

/** Names a single YAML file that replaces both default files. */
export const CONFIG_PATH_VARIABLE = 'SERVICE_CONFIG';

/** The resolved client settings; at most one of organizationId and organizationSlug is set. */
export interface Settings {
  readonly serverUrl: string;
  readonly apiKey: string;
  /** Per-request timeout in seconds. */
  readonly timeout: number;
  readonly maxUploadWorkers: number;
  readonly organizationId: string | undefined;
  /** Resolved to an id through /v1/me/scopes on first use. */
  readonly organizationSlug: string | undefined;
}

/** Settings as `auth status` and `auth login` see them: the API key may still be missing. */
export type PartialSettings = Omit<Settings, 'apiKey'> & { readonly apiKey: string | undefined };

/** Explicit settings, the highest-precedence source; undefined or '' means "not given". */
export type SettingsOptions = { readonly [K in SettingName]?: Settings[K] };

/** Settings plus the source of each value that is set; frozen. */
export interface ResolvedSettings<S = Settings> {
  readonly settings: S;
  readonly sources: Readonly<Partial<Record<SettingName, SettingSource>>>;
  /** Unknown YAML keys that were ignored, one line each. */
  readonly warnings: readonly string[];
}

/** Injected so tests (and embedders) never read the real environment or home directory. */
export interface ResolveContext {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly homeDir?: string;
}

/** The default files, `~/.assay/config.yaml` and `~/.assay/credentials.yaml`; `auth login` writes these. */
export function defaultConfigPaths(homeDir: string = os.homedir()): { config: string; credentials: string } {
  const dir = path.join(homeDir, '.assay');
  return { config: path.join(dir, 'config.yaml'), credentials: path.join(dir, 'credentials.yaml') };
}

/**
 * Resolves the settings from explicit options, the SERVICE_* environment, then either the file named by
 * SERVICE_CONFIG or `~/.assay/credentials.yaml` over `~/.assay/config.yaml`, then the defaults.
 * Throws ConfigError (before any network call) when no API key is found or a value is invalid.
 */
export function resolveSettings(
  options: SettingsOptions = {},
  context: ResolveContext = {},
): ResolvedSettings {
  const hint = 'pass apiKey, set SERVICE_API_KEY, or run `assay auth login`';
  return requireApiKey(inspectSettings(options, context), hint);
}

/**
 * Like resolveSettings, but a missing API key is not an error: for `assay auth status` and `assay auth
 * login`, which must work before any key exists. Invalid values still throw ConfigError.
 */
export function inspectSettings(
  options: SettingsOptions = {},
  context: ResolveContext = {},
): ResolvedSettings<PartialSettings> {
  const env = context.env ?? process.env;
  const homeDir = context.homeDir ?? os.homedir();
  const single = env[CONFIG_PATH_VARIABLE]?.trim();
  const warnings: string[] = [];
  let files: Layer[];
  if (single) {
    // A file named on purpose must exist; only the default files are optional.
    files = [fileLayer(path.resolve(expandHome(single, homeDir)), true, warnings)];
  } else {
    const paths = defaultConfigPaths(homeDir);
    files = [fileLayer(paths.credentials, false, warnings), fileLayer(paths.config, false, warnings)];
  }
  return resolveLayers([optionLayer(options), envLayer(env), ...files], warnings);
}

/**
 * Resolves from explicit options and the given files only. "Ignores the environment" is read as: no SERVICE_*
 * variables, no SERVICE_CONFIG, and no HOME-based default files (the home directory is environment too);
 * built-in defaults still apply. Either path may be omitted; a combined file may be passed as configPath.
 * The credentials file wins over the config file; a path that is given must exist.
 */
export function resolveSettingsFromFile(
  configPath?: string,
  credentialsPath?: string,
  options: SettingsOptions = {},
): ResolvedSettings {
  const warnings: string[] = [];
  const layers = [optionLayer(options)];
  if (credentialsPath !== undefined) layers.push(fileLayer(path.resolve(credentialsPath), true, warnings));
  if (configPath !== undefined) layers.push(fileLayer(path.resolve(configPath), true, warnings));
  const files = [credentialsPath, configPath].filter((p) => p !== undefined);
  const hint =
    files.length > 0 ? `pass apiKey or put api_key in ${files.join(' or ')}` : 'pass apiKey or a file';
  return requireApiKey(resolveLayers(layers, warnings), hint);
}

/**
 * Masks a key for display: keeps a `sk_<kind>_` prefix and the last 4 characters, e.g. `sk_user_****wxyz`.
 */
export function maskKey(key: string): string {
  const prefix = /^sk_[a-z]+_/.exec(key)?.[0] ?? '';
  const rest = key.slice(prefix.length);
  // Four characters of a short secret would give away too much of it.
  return rest.length >= 12 ? `${prefix}****${rest.slice(-4)}` : `${prefix}****`;
}

/**
 * One-line description of a source, e.g. `env SERVICE_API_KEY` or `file /home/me/.assay/credentials.yaml`.
 */
export function describeSource(source: SettingSource): string {
  switch (source.kind) {
    case 'option':
      return 'explicit option';
    case 'env':
      return `env ${source.variable}`;
    case 'file':
      return `file ${source.path}`;
    case 'default':
      return 'default';
  }
}

function requireApiKey(resolved: ResolvedSettings<PartialSettings>, hint: string): ResolvedSettings {
  if (resolved.settings.apiKey === undefined) throw new ConfigError(`no API key: ${hint}`);
  return resolved as ResolvedSettings;
}

function expandHome(file: string, homeDir: string): string {
  return file === '~' || file.startsWith('~/') ? path.join(homeDir, file.slice(1)) : file;
}

type Sources = Partial<Record<SettingName, SettingSource>>;

function resolveLayers(layers: Layer[], warnings: string[]): ResolvedSettings<PartialSettings> {
  const sources: Sources = {};
  const fallback = <T>(name: SettingName, value: T): T => {
    sources[name] = { kind: 'default' };
    return value;
  };
  const organization = organizationLayers(layers);
  const settings: PartialSettings = {
    serverUrl: take(layers, 'serverUrl', checkUrl, sources) ?? fallback('serverUrl', DEFAULT_SERVER_URL),
    apiKey: take(layers, 'apiKey', checkKey, sources),
    timeout: take(layers, 'timeout', checkTimeout, sources) ?? fallback('timeout', DEFAULT_TIMEOUT_SECONDS),
    maxUploadWorkers:
      take(layers, 'maxUploadWorkers', checkWorkers, sources) ??
      fallback('maxUploadWorkers', DEFAULT_MAX_UPLOAD_WORKERS),
    organizationId: take(organization, 'organizationId', checkString, sources),
    organizationSlug: take(organization, 'organizationSlug', checkString, sources),
  };
  return Object.freeze({
    settings: Object.freeze(settings),
    sources: Object.freeze(sources),
    warnings: Object.freeze(warnings),
  });
}

// The first layer that has the setting decides it; only its value is checked, lower layers are
// never consulted.
function take<T>(
  layers: Layer[],
  name: SettingName,
  check: (value: unknown, where: string) => T,
  sources: Sources,
): T | undefined {
  const entry = layers.find((layer) => layer[name] !== undefined)?.[name];
  if (entry === undefined) return undefined;
  sources[name] = entry.source;
  return check(entry.value, where(name, entry.source));
}

// The organization is one setting spelled two ways: the highest source naming either decides it, and one
// source naming both is an error; so an id from one source never meets a slug from another.
function organizationLayers(layers: Layer[]): Layer[] {
  const layer = layers.find((l) => l.organizationId !== undefined || l.organizationSlug !== undefined);
  if (layer === undefined) return [];
  const { organizationId: id, organizationSlug: slug } = layer;
  if (id !== undefined && slug !== undefined) {
    const both = `${where('organizationId', id.source)} and ${where('organizationSlug', slug.source)}`;
    throw new ConfigError(`set an organization id or slug, not both: ${both} are both set`);
  }
  return [layer];
}
