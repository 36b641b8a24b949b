"""GitHub's REST API as a real HTTP server on 127.0.0.1, for a run in another process.

The answers are ``FakeGitHub``'s (``api``): the same repository, pull
requests, paginated file lists, contents at the head and base commits and issue comments, only
carried over a socket instead of ``responses``. Point ``GITHUB_API_URL`` at ``base_url``. A
request no route answers gets GitHub's 404 and stays in ``fake.unknown``.

    with GitHubHttpServer(fake) as server:
        env["GITHUB_API_URL"] = server.base_url
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any, Self

from memory_action.evaluation.github.api import FakeGitHub
from memory_action.evaluation.github.wire import ApiRequest
from memory_action.evaluation.local_server import LocalServer

NOT_FOUND = {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}


class GitHubHttpServer(LocalServer):
    """Serves one ``FakeGitHub``; the fake's answer URLs point back at this server."""

    def __init__(self, fake: FakeGitHub) -> None:
        self.fake = fake
        self._lock = threading.Lock()  # the fake's state is not thread-safe
        super().__init__(self._handler())

    def __enter__(self) -> Self:
        self.fake.api_url = self.base_url
        return super().__enter__()

    def answer(self, request: ApiRequest) -> tuple[int, dict[str, str], bytes]:
        with self._lock:
            reply = self.fake.answer(request)
        if reply is None:
            return 404, {"Content-Type": "application/json"}, json.dumps(NOT_FOUND).encode()
        status, headers, body = reply
        return status, {"Content-Type": "application/json", **headers}, body.encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as api.github.com speaks it

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode() if length else ""
                url = f"{server.base_url}{self.path}"
                status, headers, data = server.answer(
                    ApiRequest(method=self.command, url=url, body=body)
                )
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _serve  # noqa: N815

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the fake records every request itself."""

        return Handler
