// Validation of single setting values, wherever they came from; `where` names the source in the message.
import { ConfigError } from './core/errors.ts';

export const DEFAULT_SERVER_URL = 'http://127.0.0.1:8080';
export const DEFAULT_TIMEOUT_SECONDS = 30;
export const DEFAULT_MAX_UPLOAD_WORKERS = 2;
/**
 * Files larger than this go in parts of this size (grown past 10,000 parts), each part hashed for the store
 * to verify on upload. Small enough for a resume to lose little, large enough for S3's 5 MiB minimum.
 */
export const DEFAULT_UPLOAD_PART_BYTES = 64 * 1024 * 1024;

/** A string setting (ids, slugs). */
export function checkString(value: unknown, where: string): string {
  if (typeof value !== 'string')
    throw new ConfigError(`${where} must be a string, got ${JSON.stringify(value)}`);
  return value;
}

/** An http(s) base URL, returned without trailing slashes. */
export function checkUrl(value: unknown, where: string): string {
  const text = checkString(value, where);
  if (!URL.canParse(text) || !/^https?:$/.test(new URL(text).protocol)) {
    throw new ConfigError(`${where} must be an http(s) URL, got ${JSON.stringify(text)}`);
  }
  // The transport appends paths, so a trailing slash would double up.
  return text.replace(/\/+$/, '');
}

/** An API key or JWT, used verbatim as the bearer token. */
export function checkKey(value: unknown, where: string): string {
  const text = checkString(value, where);
  // A stray space or newline (a pasted key) would make an invalid Authorization header.
  if (/\s/.test(text)) throw new ConfigError(`${where} must not contain whitespace`);
  return text;
}

function toNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  return typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
}

/** A positive number of seconds; fractions allowed. Numeric strings come from the environment. */
export function checkTimeout(value: unknown, where: string): number {
  const seconds = toNumber(value);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new ConfigError(`${where} must be a positive number of seconds, got ${JSON.stringify(value)}`);
  }
  return seconds;
}

/** A positive whole number of upload workers. */
export function checkWorkers(value: unknown, where: string): number {
  const workers = toNumber(value);
  if (!Number.isInteger(workers) || workers <= 0) {
    throw new ConfigError(`${where} must be a positive integer, got ${JSON.stringify(value)}`);
  }
  return workers;
}
