"""Stand-ins for the network: ``CannedServer``, a local HTTP server that answers canned responses in turn and
records each request (the conformance cases: the case data is the contract; service.json runs against the
real service); ``Proxy``, in front of a real service, for outages the SDK's tests switch on and off."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional
from urllib.parse import parse_qsl, urlsplit

import httpx


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any


@dataclass
class CannedServer:
    responses: list[dict[str, Any]]
    requests: list[Recorded] = field(default_factory=list)
    url: str = ""
    _server: Optional[ThreadingHTTPServer] = None

    def __enter__(self) -> CannedServer:
        canned = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                canned.requests.append(
                    Recorded(
                        method=self.command,
                        path=parts.path,
                        query=dict(parse_qsl(parts.query, keep_blank_values=True)),
                        headers={k.lower(): v for k, v in self.headers.items()},
                        body=json.loads(raw) if raw else None,
                    )
                )
                index = len(canned.requests) - 1
                default: dict[str, Any] = {"status": 200, "body": {}}
                reply = canned.responses[index] if index < len(canned.responses) else default
                if reply.get("drop"):
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                body = reply.get("body", "")
                data = (body if isinstance(body, str) else json.dumps(body)).encode()
                self.send_response(int(reply["status"]))
                for name, value in (reply.get("headers") or {}).items():
                    self.send_header(name, value)
                if not isinstance(body, str):
                    self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()


class Proxy:
    """An HTTP proxy in front of a real service, for outages a test switches on and off: ``hold()`` makes it
    accept requests and never answer them (the service looks hung: a client waits its whole timeout), and
    ``release(forward=…)`` then forwards the held requests late (``True``: a request the client gave up on
    may still be stored) or drops their connections (``False``). ``drop_answer(method, pattern)``: the next
    matching request reaches the service, but its answer is lost (the connection closes instead)."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.url = ""
        self.held = 0
        self._open = threading.Event()
        self._open.set()
        self._forward = True
        self._lose: list[tuple[str, re.Pattern[str]]] = []
        self._lock = threading.Lock()
        self._server: Optional[ThreadingHTTPServer] = None
        self._http = httpx.Client(timeout=120)

    def hold(self) -> None:
        self._forward = True
        self._open.clear()

    def release(self, *, forward: bool = True) -> None:
        self._forward = forward
        self._open.set()

    def drop_answer(self, method: str, pattern: str) -> None:
        with self._lock:
            self._lose.append((method, re.compile(pattern)))

    def __enter__(self) -> Proxy:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the clients use it

            def _relay(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                if not proxy._open.is_set():
                    with proxy._lock:
                        proxy.held += 1
                    proxy._open.wait()
                    if not proxy._forward:
                        self._hang_up()
                        return
                path = urlsplit(self.path).path
                with proxy._lock:
                    lose = next((x for x in proxy._lose if x[0] == self.command and x[1].search(path)), None)
                    if lose is not None:
                        proxy._lose.remove(lose)
                headers = {
                    k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")
                }
                try:
                    answer = proxy._http.request(
                        self.command, proxy.upstream + self.path, content=body, headers=headers
                    )
                except httpx.HTTPError:
                    self._hang_up()
                    return
                if lose is not None:
                    self._hang_up()
                    return
                data = answer.content
                try:
                    self.send_response(answer.status_code)
                    for name, value in answer.headers.items():
                        if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                            self.send_header(name, value)
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up meanwhile
                    self.close_connection = True

            def _hang_up(self) -> None:
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _relay

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release(forward=False)
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
        self._http.close()
