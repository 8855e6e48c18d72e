import { createHash } from 'node:crypto';
import type { PresignedRequest } from '@assay/contract';

export interface HttpAnswer {
  status: number;
  headers: Headers;
  body: Buffer;
}

/** Sends a presigned request exactly as a client would: its method, its headers, and the body (if any). */
export async function send(
  req: Pick<PresignedRequest, 'method' | 'url' | 'headers'>,
  body?: Buffer,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  const res = await fetch(req.url, {
    method: req.method,
    headers: { ...req.headers, ...headers },
    ...(body ? { body } : {}),
  });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

/** The `error.code` of a JSON error body, or the S3 XML `<Code>`. */
export function errorCode(answer: HttpAnswer): string | undefined {
  const text = answer.body.toString('utf8');
  try {
    return (JSON.parse(text) as { error?: { code?: string } }).error?.code;
  } catch {
    return /<Code>([^<]+)<\/Code>/.exec(text)?.[1];
  }
}

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * Replaces one character in the middle of a query parameter's value, leaving the rest of the URL byte
 * for byte.
 */
export function tamperParam(url: string, name: string): string {
  const match = new RegExp(`[?&]${name}=([^&]+)`).exec(url);
  if (!match) throw new Error(`no ${name} in ${url}`);
  const value = match[1]!;
  const i = Math.floor(value.length / 2);
  const tampered = value.slice(0, i) + (value[i] === 'a' ? 'b' : 'a') + value.slice(i + 1);
  const start = match.index + match[0].length - value.length;
  return url.slice(0, start) + tampered + url.slice(start + value.length);
}

/** Sets a query parameter to a new value, leaving the rest of the URL byte for byte. */
export function replaceParam(url: string, name: string, value: string): string {
  return url.replace(new RegExp(`([?&]${name}=)[^&]*`), `$1${encodeURIComponent(value)}`);
}

/** Drops a query parameter, leaving the rest of the URL byte for byte. */
export function removeParam(url: string, name: string): string {
  const match = new RegExp(`([?&])${name}=[^&]*&?`).exec(url);
  if (!match) throw new Error(`no ${name} in ${url}`);
  const rest = url.slice(match.index + match[0].length);
  const kept = match[1] === '?' ? '?' : rest === '' ? '' : '&';
  return url.slice(0, match.index) + kept + rest;
}
