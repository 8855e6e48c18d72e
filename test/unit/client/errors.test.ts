import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  AuthenticationError,
  BadRequestError,
  ConfigError,
  ConflictError,
  fromResponse,
  NotFoundError,
  PermissionDeniedError,
  ServerError,
  ServiceError,
} from '../../../src/client/core/errors.ts';

const envelope = (code: string, message: string, details?: unknown) => ({
  error: { code, message, details },
});

void describe('fromResponse status mapping', () => {
  const cases: [number, typeof APIError][] = [
    [400, BadRequestError],
    [422, BadRequestError],
    [401, AuthenticationError],
    [403, PermissionDeniedError],
    [404, NotFoundError],
    [409, ConflictError],
    [500, ServerError],
    [502, ServerError],
    [503, ServerError],
    [599, ServerError],
    [418, APIError],
    [429, APIError],
  ];
  for (const [status, Class] of cases) {
    void it(`${status} → ${Class.name}`, () => {
      const error = fromResponse(status, envelope('some_code', 'went wrong'), { 'x-request-id': 'req-1' });
      assert.equal(error.constructor, Class);
      assert.ok(error instanceof APIError);
      assert.ok(error instanceof ServiceError);
      assert.ok(error instanceof Error);
      assert.equal(error.name, Class.name);
      assert.equal(error.statusCode, status);
    });
  }

  void it('a search 503 is a ServerError keeping statusCode 503', () => {
    const error = fromResponse(503, envelope('search_unavailable', 'search backend is not configured'), {});
    assert.ok(error instanceof ServerError);
    assert.equal(error.statusCode, 503);
    assert.equal(error.code, 'search_unavailable');
  });

  void it('an unlisted 4xx is a plain APIError, none of the subclasses', () => {
    const error = fromResponse(418, envelope('teapot', 'short and stout'));
    for (const Sub of [BadRequestError, AuthenticationError, NotFoundError, ConflictError, ServerError]) {
      assert.ok(!(error instanceof Sub), Sub.name);
    }
  });
});

void describe('fromResponse fields', () => {
  void it('takes code, message and details from the error envelope and the request id from the header', () => {
    const details = [{ path: '/name', message: 'must be string' }];
    const error = fromResponse(422, envelope('validation_failed', 'body/name must be string', details), {
      'x-request-id': 'req-42',
    });
    assert.equal(error.code, 'validation_failed');
    assert.equal(error.message, 'body/name must be string');
    assert.deepEqual(error.details, details);
    assert.equal(error.requestId, 'req-42');
    assert.equal(String(error), 'BadRequestError: body/name must be string');
  });

  void it('reads the request id from fetch Headers and from records in any case', () => {
    assert.equal(fromResponse(404, {}, new Headers({ 'X-Request-Id': 'a' })).requestId, 'a');
    assert.equal(fromResponse(404, {}, { 'X-Request-ID': 'b' }).requestId, 'b');
    assert.equal(fromResponse(404, {}, { 'x-request-id': ['c', 'd'] }).requestId, 'c');
    assert.equal(fromResponse(404, {}).requestId, undefined);
  });

  void it('parses a JSON body given as text or bytes', () => {
    const text = JSON.stringify(envelope('not_found', 'experiment not found'));
    for (const body of [text, new TextEncoder().encode(text)]) {
      const error = fromResponse(404, body, {});
      assert.ok(error instanceof NotFoundError);
      assert.equal(error.code, 'not_found');
      assert.equal(error.message, 'experiment not found');
    }
  });

  void it('keeps the right class and a readable message for a non-JSON body', () => {
    const html = '<html>\n  <body>502 Bad Gateway</body>\n</html>';
    const error = fromResponse(502, html, { 'x-request-id': 'edge-1' });
    assert.ok(error instanceof ServerError);
    assert.equal(error.code, 'http_502');
    assert.equal(error.message, 'HTTP 502 Bad Gateway: <html> <body>502 Bad Gateway</body> </html>');
    assert.equal(error.body, html);
    assert.equal(error.requestId, 'edge-1');
    assert.equal(error.details, undefined);
  });

  void it('truncates a long non-JSON body in the message', () => {
    const error = fromResponse(500, 'x'.repeat(5000));
    assert.ok(error.message.length < 260);
    assert.ok(error.message.endsWith('…'));
  });

  void it('names the status when the body is empty', () => {
    for (const body of ['', '   ', undefined, null, new Uint8Array()]) {
      const error = fromResponse(404, body);
      assert.ok(error instanceof NotFoundError);
      assert.equal(error.message, 'HTTP 404 Not Found (empty body)');
      assert.equal(error.code, 'http_404');
    }
    assert.equal(fromResponse(499, '').message, 'HTTP 499 (empty body)');
  });

  void it('accepts a bare {code, message} body such as a framework default error', () => {
    const body = {
      statusCode: 415,
      code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE',
      error: 'Unsupported Media Type',
      message: 'x',
    };
    const error = fromResponse(415, body);
    assert.equal(error.code, 'FST_ERR_CTP_INVALID_MEDIA_TYPE');
    assert.equal(error.message, 'x');
    assert.equal(fromResponse(400, { error: 'Bad Request' }).message, 'Bad Request');
  });

  void it('falls back to the JSON text when the body has no message', () => {
    const error = fromResponse(409, { unexpected: true });
    assert.ok(error instanceof ConflictError);
    assert.equal(error.message, 'HTTP 409 Conflict: {"unexpected":true}');
  });
});

void describe('errors outside the status mapping', () => {
  void it('ConfigError is a ServiceError but not an APIError', () => {
    const error = new ConfigError('no API key');
    assert.ok(error instanceof ServiceError);
    assert.ok(!(error instanceof APIError));
    assert.equal(error.name, 'ConfigError');
    assert.equal(error.message, 'no API key');
  });

  void it('APIConnectionError carries its cause and is not an APIError', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8080'), { code: 'ECONNREFUSED' });
    const error = new APIConnectionError({ cause });
    assert.ok(error instanceof ServiceError);
    assert.ok(!(error instanceof APIError));
    assert.equal(error.cause, cause);
    assert.equal(error.name, 'APIConnectionError');
    assert.equal(error.message, 'could not connect to the server');
  });

  void it('APITimeoutError is an APIConnectionError', () => {
    const cause = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    const error = new APITimeoutError({ message: 'request timed out after 30 s', cause });
    assert.ok(error instanceof APIConnectionError);
    assert.ok(error instanceof ServiceError);
    assert.equal(error.name, 'APITimeoutError');
    assert.equal(error.message, 'request timed out after 30 s');
    assert.equal(error.cause, cause);
    assert.equal(new APITimeoutError().message, 'request timed out');
  });
});
