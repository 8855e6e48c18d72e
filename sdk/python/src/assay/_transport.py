"""One HTTP exchange per call, as the TypeScript client's Transport (src/client/core/transport.ts): bearer
auth, JSON in and out, the per-request timeout, and every non-2xx mapped to its typed error.

No retries and no backoff here, as SPEC section 8 and the TypeScript client have it: a call is one request,
so a caller never repeats a non-idempotent write by surprise. What may be repeated is decided where it is
safe: the run's metric sender retries transient failures (assay._metric_logger, from its spool), since the
service keeps one point per (run, key, step)."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any, Optional, Union

import httpx

from ._errors import APIConnectionError, APITimeoutError, error_from_response

__all__ = ["Params", "Transport"]

Params = Mapping[str, Union[str, int, float, bool, None]]


def _seconds(value: float) -> str:
    # As JavaScript prints a number: 30, not 30.0.
    return str(int(value)) if float(value).is_integer() else str(value)


def _query_value(value: Union[str, int, float, bool]) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"  # as String(true) in the TypeScript client
    if isinstance(value, float):
        return _seconds(value)
    return str(value)


class Transport:
    """Sends requests to one server with one credential. Thread-safe: the background metric sender and the
    training loop's thread share one."""

    def __init__(
        self,
        server_url: str,
        api_key: str,
        timeout: float,
        *,
        http_client: Optional[httpx.Client] = None,
        user_agent: Optional[str] = None,
    ) -> None:
        self.server_url = server_url.rstrip("/")
        self._api_key = api_key
        self.timeout = float(timeout)
        self._owns_client = http_client is None
        # No proxies from the environment (trust_env=False) would surprise a cluster user behind one; httpx's
        # default (trust_env=True) is kept.
        self._http = http_client if http_client is not None else httpx.Client()
        self._headers = {
            "authorization": f"Bearer {api_key}",
            "accept": "application/json",
        }
        if user_agent:
            self._headers["user-agent"] = user_agent
        self._lock = threading.Lock()
        self._closed = False

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Optional[Params] = None,
        timeout: Optional[float] = None,
    ) -> Any:
        """Sends one request; answers the parsed JSON body (None for an empty one). ``path`` starts with /
        and has its ids already encoded (assay._paths.path); ``params`` with None values are left out.
        Raises APIError subclasses for non-2xx answers, APITimeoutError and APIConnectionError otherwise."""
        url = f"{self.server_url}{path}"
        headers = dict(self._headers)
        content: Optional[bytes] = None
        if json is not None:
            content = _dumps(json).encode("utf-8")
            headers["content-type"] = "application/json"
        query: list[tuple[str, Union[str, int, float, bool, None]]] = []
        if params:
            query = [(k, _query_value(v)) for k, v in params.items() if v is not None]
        seconds = self.timeout if timeout is None else float(timeout)
        try:
            response = self._http.request(
                method,
                url,
                params=query or None,
                content=content,
                headers=headers,
                timeout=seconds,
            )
        except httpx.TimeoutException as error:
            raise APITimeoutError(f"{method} {path}: no answer within {_seconds(seconds)} s") from error
        except httpx.TransportError as error:
            reason = str(error) or type(error).__name__
            raise APIConnectionError(f"{method} {path}: cannot reach {self.server_url} ({reason})") from error
        text = response.text
        if not response.is_success:
            raise error_from_response(response.status_code, text, response.headers)
        return None if text == "" else _loads(text)

    def get(self, path: str, *, params: Optional[Params] = None, timeout: Optional[float] = None) -> Any:
        return self.request("GET", path, params=params, timeout=timeout)

    def post(self, path: str, json: Any = None, *, timeout: Optional[float] = None) -> Any:
        return self.request("POST", path, json=json, timeout=timeout)

    def close(self) -> None:
        """Closes the connection pool (only when this transport made it)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self._owns_client:
            self._http.close()


def _dumps(value: Any) -> str:
    # allow_nan: NaN and ±Infinity travel in the wire form the metric encoder gives them (strings), never as
    # bare tokens; refusing them here catches a caller that skipped the encoder.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _loads(text: str) -> Any:
    return json.loads(text)
