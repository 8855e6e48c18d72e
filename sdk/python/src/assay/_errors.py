"""The error hierarchy and the single status -> class mapping, as the TypeScript client has them
(src/client/core/errors.ts): the conformance cases in test/conformance/errors.json hold both to it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Optional

__all__ = [
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "ConfigError",
    "ConflictError",
    "MetricsError",
    "NotFoundError",
    "PermissionDeniedError",
    "ServerError",
    "ServiceError",
    "error_from_response",
]


class ServiceError(Exception):
    """Base of every error the client raises, so callers can catch the client's failures in one clause."""

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class ConfigError(ServiceError):
    """Invalid or missing client configuration; always raised before any network call."""


class APIError(ServiceError):
    """The server answered with a non-2xx status."""

    status_code: int
    """HTTP status of the response."""
    code: str
    """The server's snake_case error code, or ``http_<status>`` when the body carried none."""
    details: Any
    """The server's ``error.details``, when it sent any."""
    request_id: Optional[str]
    """The ``x-request-id`` response header, to quote when reporting a problem."""
    body: Any
    """The body as received (parsed JSON, or text when it was not JSON)."""

    def __init__(
        self,
        status_code: int,
        code: str,
        message: str,
        details: Any = None,
        request_id: Optional[str] = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.code = code
        self.details = details
        self.request_id = request_id
        self.body = body

    def __repr__(self) -> str:
        name = type(self).__name__
        return f"{name}(status_code={self.status_code}, code={self.code!r}, message={self.message!r})"


class BadRequestError(APIError):
    """400 (malformed request) or 422 (a request that fails the schema)."""


class AuthenticationError(APIError):
    """401: missing, invalid, expired or revoked credential."""


class PermissionDeniedError(APIError):
    """403: the credential is valid but lacks the scope or membership."""


class NotFoundError(APIError):
    """404."""


class ConflictError(APIError):
    """409: the request conflicts with the resource's current state."""


class ServerError(APIError):
    """Any 5xx; ``status_code`` keeps the exact status (503 when search is not configured)."""


class APIConnectionError(ServiceError):
    """The request never produced a response: DNS, refused connection, reset socket."""

    def __init__(self, message: str = "could not connect to the server") -> None:
        super().__init__(message)


class APITimeoutError(APIConnectionError):
    """No response within the per-request timeout."""

    def __init__(self, message: str = "request timed out") -> None:
        super().__init__(message)


class MetricsError(ServiceError):
    """Metric points the service refused (a 4xx other than 408 and 429, e.g. 409 ``run_ended``), raised by
    ``Run.flush()``; ``dropped`` counts them and ``__cause__`` is the service's answer. Points the service
    could not be reached with are never dropped: they wait in the spool (the TypeScript client instead gives
    up on them after ``retryFor``, raising this too)."""

    def __init__(self, dropped: int, cause: BaseException) -> None:
        code = f" ({cause.code})" if isinstance(cause, APIError) else ""
        super().__init__(f"{dropped} metric point(s) not stored: {cause}{code}")
        self.dropped = dropped
        self.__cause__ = cause


_CLASS_BY_STATUS: dict[int, type[APIError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: BadRequestError,
}

# The standard reason phrases, as the TypeScript client words them (status-text.ts).
_REASONS: dict[int, str] = {
    400: "Bad Request",
    401: "Unauthorized",
    402: "Payment Required",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    406: "Not Acceptable",
    407: "Proxy Authentication Required",
    408: "Request Timeout",
    409: "Conflict",
    410: "Gone",
    411: "Length Required",
    412: "Precondition Failed",
    413: "Payload Too Large",
    414: "URI Too Long",
    415: "Unsupported Media Type",
    416: "Range Not Satisfiable",
    417: "Expectation Failed",
    418: "I'm a Teapot",
    421: "Misdirected Request",
    422: "Unprocessable Entity",
    423: "Locked",
    424: "Failed Dependency",
    425: "Too Early",
    426: "Upgrade Required",
    428: "Precondition Required",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    451: "Unavailable For Legal Reasons",
    500: "Internal Server Error",
    501: "Not Implemented",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
    505: "HTTP Version Not Supported",
    507: "Insufficient Storage",
    508: "Loop Detected",
    511: "Network Authentication Required",
}


def status_line(status: int) -> str:
    """``HTTP 502 Bad Gateway``, or ``HTTP 599`` for a status without a standard phrase."""
    reason = _REASONS.get(status)
    return f"HTTP {status} {reason}" if reason else f"HTTP {status}"


def js_json(value: Any) -> str:
    """JSON as JavaScript's JSON.stringify writes it (no spaces): messages read the same in both clients."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def error_from_response(status: int, text: str, headers: Optional[Mapping[str, str]] = None) -> APIError:
    """The typed error for a non-2xx response. A body off the ``{"error": {code, message, details}}``
    format still gives the right class and a readable message."""
    parsed = _parse_body(text)
    envelope = _envelope(parsed)
    raw_code = envelope.get("code") if envelope is not None else None
    code = raw_code if isinstance(raw_code, str) and raw_code != "" else f"http_{status}"
    message = _envelope_message(envelope) or _fallback_message(status, parsed)
    cls = _CLASS_BY_STATUS.get(status) or (ServerError if 500 <= status <= 599 else APIError)
    details = envelope.get("details") if envelope is not None else None
    request_id = _header(headers, "x-request-id")
    return cls(status, code, message, details, request_id, parsed)


def _parse_body(text: str) -> Any:
    if text.strip() == "":
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text  # a proxy's HTML page or plain text: kept for the message


def _envelope(parsed: Any) -> Optional[dict[str, Any]]:
    # Our format nests under "error"; a bare {code, message} (e.g. Fastify's default handler) is accepted too.
    if not isinstance(parsed, dict):
        return None
    inner = parsed.get("error")
    if isinstance(inner, dict):
        return inner
    if isinstance(inner, str):
        message = parsed.get("message")
        return {**parsed, "message": inner if message is None else message}
    return parsed


def _envelope_message(envelope: Optional[dict[str, Any]]) -> Optional[str]:
    message = envelope.get("message") if envelope is not None else None
    if message is None:
        return None
    if not isinstance(message, str):
        return js_json(message)
    return None if message.strip() == "" else message


def _fallback_message(status: int, parsed: Any) -> str:
    reason = status_line(status)
    if parsed is None:
        return f"{reason} (empty body)"
    text = parsed if isinstance(parsed, str) else js_json(parsed)
    snippet = " ".join(text.split())
    return f"{reason}: {snippet[:200]}…" if len(snippet) > 200 else f"{reason}: {snippet}"


def _header(headers: Optional[Mapping[str, str]], name: str) -> Optional[str]:
    if headers is None:
        return None
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None
