// The error hierarchy (docs/architecture.md) and the single status → class mapping, after
// openai-node's core/error.ts.
import { statusLine } from './status-text.ts';

/** Response headers as fetch gives them (`Headers`) or as node:http gives them (a plain record). */
export type HeadersLike = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/** Base of every error the client raises, so callers can catch the client's failures in one clause. */
export class ServiceError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    // new.target names the concrete subclass, so no subclass has to repeat its own name.
    this.name = new.target.name;
  }
}

/** Invalid or missing client configuration; always raised before any network call. */
export class ConfigError extends ServiceError {}

/** The server answered with a non-2xx status. */
export class APIError extends ServiceError {
  /** HTTP status of the response. */
  readonly statusCode: number;
  /** The server's snake_case error code, or `http_<status>` when the body carried none. */
  readonly code: string;
  /** The server's `error.details`, when it sent any. */
  readonly details: unknown;
  /** The `x-request-id` response header, to quote when reporting a problem. */
  readonly requestId: string | undefined;
  /** The body as received (parsed JSON, or text when it was not JSON), for bodies off the usual format. */
  readonly body: unknown;

  constructor(
    statusCode: number,
    code: string,
    message: string,
    details: unknown,
    requestId?: string,
    body?: unknown,
  ) {
    super(message);
    this.statusCode = statusCode;
    this.code = code;
    this.details = details;
    this.requestId = requestId;
    this.body = body;
  }
}

/** 400 (malformed request) or 422 (request that fails the schema). */
export class BadRequestError extends APIError {}
/** 401: missing, invalid, expired or revoked credential. */
export class AuthenticationError extends APIError {}
/** 403: the credential is valid but lacks the scope or membership. */
export class PermissionDeniedError extends APIError {}
/** 404. */
export class NotFoundError extends APIError {}
/** 409: the request conflicts with the resource's current state. */
export class ConflictError extends APIError {}
/** Any 5xx; `statusCode` keeps the exact status (503 when search is not configured). */
export class ServerError extends APIError {}

/** The request never produced a response: DNS, refused connection, reset socket. */
export class APIConnectionError extends ServiceError {
  constructor({ message, cause }: { message?: string; cause?: unknown } = {}) {
    super(message ?? 'could not connect to the server', { cause });
  }
}

/** No response within the configured per-request timeout. */
export class APITimeoutError extends APIConnectionError {
  constructor({ message, cause }: { message?: string; cause?: unknown } = {}) {
    super({ message: message ?? 'request timed out', cause });
  }
}

/** One upload that did not complete: its local id in the recovery store, its asset once created, and why. */
export interface UploadFailure {
  readonly uploadId: string;
  readonly assetId: string | undefined;
  readonly cause: unknown;
}

/**
 * One or more uploads failed (a PUT answered non-2xx, a file changed or vanished since it was registered, an
 * API call failed). Each stays in the recovery store, resumable with `client.resumeUploads()`.
 */
export class UploadError extends ServiceError {
  readonly failures: readonly UploadFailure[];

  constructor(failures: readonly UploadFailure[], message?: string) {
    const why = failures.map(
      (f) => `upload ${f.uploadId}${f.assetId ? ` (asset ${f.assetId})` : ''}: ${causeText(f.cause)}`,
    );
    super(message ?? `${failures.length} upload(s) failed; ${why.join('; ')}`, {
      cause: failures.length === 1 ? failures[0]!.cause : undefined,
    });
    this.failures = failures;
  }

  /** Local ids of the failed uploads, as `client.resumeUploads()` lists them. */
  get uploadIds(): string[] {
    return this.failures.map((f) => f.uploadId);
  }
}

/**
 * Metric points that a run handle buffered and could not deliver: the service refused a batch (a 4xx, e.g.
 * 409 `run_ended`), or kept failing (unreachable, 5xx) longer than the handle retries. `dropped` points were
 * discarded with it, since resending cannot help; `cause` is the last error. Raised by the handle's next
 * `logMetrics`, `flushMetrics`, `succeed` or `fail` call.
 */
export class MetricsError extends ServiceError {
  readonly dropped: number;

  constructor(dropped: number, cause: unknown) {
    const code = cause instanceof APIError ? ` (${cause.code})` : '';
    super(`${dropped} metric point(s) not stored: ${causeText(cause)}${code}`, { cause });
    this.dropped = dropped;
  }
}

function causeText(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}

type APIErrorClass = new (...args: ConstructorParameters<typeof APIError>) => APIError;

const CLASS_BY_STATUS: Readonly<Record<number, APIErrorClass>> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  422: BadRequestError,
};

/**
 * Builds the typed error for a non-2xx response. `body` may be parsed JSON, raw text or bytes, or empty; a
 * body off the `{"error": {code, message, details}}` format still gives the right class and a
 * readable message.
 */
export function fromResponse(status: number, body: unknown, headers?: HeadersLike): APIError {
  const parsed = parseBody(body);
  const envelope = errorEnvelope(parsed);
  const code = typeof envelope?.code === 'string' && envelope.code !== '' ? envelope.code : `http_${status}`;
  const message = envelopeMessage(envelope) ?? fallbackMessage(status, parsed);
  const Class = CLASS_BY_STATUS[status] ?? (status >= 500 && status <= 599 ? ServerError : APIError);
  return new Class(status, code, message, envelope?.details, header(headers, 'x-request-id'), parsed);
}

function parseBody(body: unknown): unknown {
  const text = body instanceof Uint8Array ? new TextDecoder().decode(body) : body;
  if (typeof text !== 'string') return text ?? undefined;
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text; // a proxy's HTML page or plain text: kept for the message
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// Our format nests under "error"; a bare {code, message} (e.g. Fastify's default handler) is accepted too.
function errorEnvelope(parsed: unknown): Record<string, unknown> | undefined {
  if (!isRecord(parsed)) return undefined;
  if (isRecord(parsed.error)) return parsed.error;
  if (typeof parsed.error === 'string') return { ...parsed, message: parsed.message ?? parsed.error };
  return parsed;
}

function envelopeMessage(envelope: Record<string, unknown> | undefined): string | undefined {
  const message = envelope?.message;
  if (message === undefined || message === null) return undefined;
  if (typeof message !== 'string') return JSON.stringify(message);
  return message.trim() === '' ? undefined : message;
}

function fallbackMessage(status: number, parsed: unknown): string {
  const reason = statusLine(status);
  if (parsed === undefined) return `${reason} (empty body)`;
  const text = typeof parsed === 'string' ? parsed : JSON.stringify(parsed);
  const snippet = text.replace(/\s+/g, ' ').trim();
  return `${reason}: ${snippet.length > 200 ? `${snippet.slice(0, 200)}…` : snippet}`;
}

function isHeaders(headers: HeadersLike): headers is Headers {
  return typeof (headers as Partial<Headers>).get === 'function';
}

function header(headers: HeadersLike | undefined, name: string): string | undefined {
  if (headers === undefined) return undefined;
  // Told apart by shape: naming the global Headers would load Node's undici (see node-fetch.ts) for an error.
  if (isHeaders(headers)) return headers.get(name) ?? undefined;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : headers[key];
  return typeof value === 'string' ? value : value?.[0];
}
