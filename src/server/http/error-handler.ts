import type { ErrorResponse } from '@assay/contract';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from './errors.ts';

// Postgres SQLSTATEs that mean the input could not be stored as given (NUL bytes, bad encodings, out
// of range).
const BAD_INPUT_SQLSTATES: Record<string, string> = {
  '22P05': 'text contains a character the database cannot store (such as \\u0000)',
  '22021': 'text contains a byte sequence that is not valid UTF-8',
  '22P02': 'a value has the wrong format',
  '22003': 'a number is out of range',
  '22001': 'a value is too long',
  '54000': 'a value is too large',
  '54001': 'a value is nested too deeply',
};
// Connection-level failures: the database is down or overloaded, which the caller may retry.
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND']);

function isDatabaseUnavailable(error: { code?: unknown; message?: unknown }): boolean {
  const code = typeof error.code === 'string' ? error.code : '';
  const message = typeof error.message === 'string' ? error.message : '';
  return (
    UNAVAILABLE_SQLSTATES.has(code) ||
    UNAVAILABLE_ERRNOS.has(code) ||
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(
      message,
    )
  );
}

/** Maps any thrown value to a status and body; the only place that decides how errors look on the wire. */
export function toErrorResponse(error: unknown): { status: number; body: ErrorResponse; internal: boolean } {
  if (error instanceof AppError) {
    const body: ErrorResponse = { error: { code: error.code, message: error.message } };
    if (error.details !== undefined) body.error.details = error.details;
    return { status: error.statusCode, body, internal: false };
  }
  const e = (error ?? {}) as FastifyError & { validationContext?: string; code?: string };
  if (e.validation) {
    // A body that parses but breaks the schema is 422; bad path or query parameters are 400.
    const inBody = e.validationContext === 'body';
    const details = e.validation.map((v) => ({
      location: e.validationContext,
      path: v.instancePath || '/',
      message: v.message,
      ...(v.params && 'additionalProperty' in v.params ? { property: v.params.additionalProperty } : {}),
    }));
    return {
      status: inBody ? 422 : 400,
      body: {
        error: {
          code: inBody ? 'validation_failed' : 'invalid_parameter',
          message:
            `${e.validationContext ?? 'request'} ${e.validation[0]?.instancePath || ''} ${e.validation[0]?.message ?? 'is invalid'}`
              .replace(/\s+/g, ' ')
              .trim(),
          details,
        },
      },
      internal: false,
    };
  }
  if (typeof e.code === 'string' && e.code in BAD_INPUT_SQLSTATES) {
    return {
      status: 400,
      body: { error: { code: 'invalid_value', message: BAD_INPUT_SQLSTATES[e.code]! } },
      internal: false,
    };
  }
  // JSON.parse accepts nesting that JSON.stringify (the database driver, the serializer) then overflows on.
  if (error instanceof RangeError && /Maximum call stack size exceeded/.test(error.message)) {
    return {
      status: 400,
      body: { error: { code: 'too_deeply_nested', message: 'the input is nested too deeply to process' } },
      internal: false,
    };
  }
  // statement_timeout and idle_in_transaction_session_timeout: the server gave up on work that took too long.
  if (e.code === '57014' || e.code === '25P03') {
    return {
      status: 503,
      body: { error: { code: 'database_timeout', message: 'the database took too long; retry shortly' } },
      internal: true,
    };
  }
  if (isDatabaseUnavailable(e)) {
    return {
      status: 503,
      body: {
        error: { code: 'database_unavailable', message: 'the database is unavailable; retry shortly' },
      },
      internal: true,
    };
  }
  // Fastify's own client errors (malformed JSON, wrong content type, body too large) carry a 4xx status.
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    const code =
      e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || e.name === 'SyntaxError'
        ? 'malformed_body'
        : snake(e.code ?? 'bad_request');
    return { status: e.statusCode, body: { error: { code, message: e.message } }, internal: false };
  }
  return {
    status: 500,
    body: {
      error: {
        code: 'internal_error',
        message: 'internal error; the request id identifies it in the server logs',
      },
    },
    internal: true,
  };
}

function snake(code: string): string {
  return code.replace(/^FST_ERR_/, '').toLowerCase();
}

/**
 * Fastify's `frameworkErrors` option: bad URL encodings and over-long path parameters get the same body and
 * request id.
 */
export function handleFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const { status, body } = toErrorResponse(error);
  void reply.header('x-request-id', request.id).status(status).send(body);
}

/**
 * Installs the single error handler and the 404 handler; 5xx internals go to the log, never to the caller.
 */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const { status, body, internal } = toErrorResponse(error);
    if (status >= 500 && internal) request.log.error({ err: error }, 'request failed');
    else if (status >= 500) request.log.warn({ code: body.error.code }, body.error.message);
    if (error instanceof AppError) void reply.headers(error.headers);
    void reply.status(status).send(body);
  });
  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send({
      error: {
        code: 'route_not_found',
        message: `no route ${request.method} ${request.url.split('?')[0]}`,
      },
    });
  });
}
