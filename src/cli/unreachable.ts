// The one line `assay` prints when the service cannot be reached: the URL it tried, why, where that URL came
// from, and how to set another. Node's fetch says only "fetch failed", with the reason nested in its causes.
import { APIConnectionError, APITimeoutError } from '../client/index.ts';
import { describeSource, inspectSettings } from '../client/config.ts';

const REASONS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_SOCKET: 'connection closed',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed TLS certificate',
};

/** The line for an error that never got an answer from the service; undefined for any other error. */
export function unreachableLine(error: unknown): string | undefined {
  if (!(error instanceof APIConnectionError)) return undefined;
  let url = 'the configured URL';
  let from = '';
  try {
    const { settings, sources } = inspectSettings();
    url = settings.serverUrl;
    const source = sources.serverUrl;
    if (source) from = source.kind === 'default' ? 'the default' : `from ${describeSource(source)}`;
  } catch {
    // A configuration that cannot be read would have failed before any request; the URL stays unnamed.
  }
  const whence = from ? `the URL is ${from}; ` : '';
  const how = 'set SERVICE_SERVER_URL, or run `assay auth login --server-url URL` to store one';
  if (error instanceof APITimeoutError) {
    // "GET /experiments: no answer within 30 s" → "no answer within 30 s".
    const why = error.message.replace(/^\S+ \S+: /, '');
    return `the service at ${url} did not answer (${why}); ${whence}${how}; SERVICE_TIMEOUT sets the wait`;
  }
  return `cannot reach the service at ${url} (${reason(error)}); ${whence}${how}`;
}

// The first code in the cause chain (an AggregateError's, when both of localhost's addresses refused), else
// the innermost message (fetch's own refusals, such as "bad port", carry no code).
function reason(error: Error): string {
  const seen = new Set<unknown>();
  let e: unknown = error.cause;
  let message = 'no connection';
  while (typeof e === 'object' && e !== null && !seen.has(e)) {
    seen.add(e);
    const { code, errors, cause, message: text } = e as Record<string, unknown>;
    if (typeof code === 'string') return REASONS[code] ?? code;
    if (typeof text === 'string' && text !== '' && text !== 'fetch failed') message = text;
    e = cause ?? (Array.isArray(errors) ? errors[0] : undefined);
  }
  return message;
}
