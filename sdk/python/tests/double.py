"""A stand-in for the network in the conformance cases: a local HTTP server that answers canned responses in
turn and records each request. The case data is the contract; service.json runs against the real service."""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional
from urllib.parse import parse_qsl, urlsplit


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
