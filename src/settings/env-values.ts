import { ConfigError } from './config-error.ts';

/** The environment as configuration reads it; injected so tests never touch process.env. */
export type Env = Readonly<Record<string, string | undefined>>;

/** A variable's trimmed value; empty counts as unset. */
export function text(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  return raw === undefined || raw === '' ? undefined : raw;
}

/** A whole number in [min, max]; the error names the variable and what it got. */
export function integer(
  env: Env,
  name: string,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

/**
 * Seconds in the environment, milliseconds in the config; fractions allowed so tests can use short timeouts.
 */
export function seconds(env: Env, name: string, fallbackSeconds: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallbackSeconds * 1000;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new ConfigError(`${name} must be a positive number of seconds, got ${JSON.stringify(raw)}`);
  return Math.round(value * 1000);
}

/** on/off, true/false, yes/no, 1/0. */
export function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['on', 'true', '1', 'yes'].includes(raw)) return true;
  if (['off', 'false', '0', 'no'].includes(raw)) return false;
  throw new ConfigError(`${name} must be on or off (true or false), got ${JSON.stringify(env[name])}`);
}

/** An http(s) URL, as given. */
export function httpUrl(env: Env, name: string): string | undefined {
  const value = text(env, name);
  if (value === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.host)
    throw new ConfigError(`${name} must be an http(s) URL, got ${JSON.stringify(value)}`);
  return value;
}
