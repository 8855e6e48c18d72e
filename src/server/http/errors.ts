import type { ErrorCode } from '@assay/contract';

/**
 * The one error type of the service: an HTTP status and a stable snake_case code the client can branch on.
 */
export class AppError extends Error {
  override name = 'AppError';
  readonly statusCode: number;
  readonly code: ErrorCode;
  readonly details: unknown;
  /** Response headers the answer must carry, such as Retry-After on a 429. */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    statusCode: number,
    code: ErrorCode,
    message: string,
    details?: unknown,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.statusCode = statusCode;
    this.code = code;
    this.details = details;
    this.headers = headers;
  }
}

export const badRequest = (code: ErrorCode, message: string, details?: unknown) =>
  new AppError(400, code, message, details);
export const unauthorized = (message = 'missing or invalid credentials') =>
  new AppError(401, 'unauthenticated', message);
export const forbidden = (code: ErrorCode, message: string) => new AppError(403, code, message);
export const notFound = (what: string) => new AppError(404, 'not_found', `${what} not found`);
export const conflict = (code: ErrorCode, message: string, details?: unknown) =>
  new AppError(409, code, message, details);
export const tooManyRequests = (code: ErrorCode, message: string, retryAfterSeconds: number) =>
  new AppError(
    429,
    code,
    message,
    { retry_after_s: retryAfterSeconds },
    { 'retry-after': String(retryAfterSeconds) },
  );
export const unavailable = (code: ErrorCode, message: string, details?: unknown) =>
  new AppError(503, code, message, details);
