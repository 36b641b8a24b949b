"""An OpenAI-compatible chat-completions server on 127.0.0.1 for tests.

It records every request and answers each POST with the next scripted reply: a chat-completion
JSON body, an ``ErrorReply`` (any status, OpenAI's error shape), a ``RawReply`` (a body as
given, such as a cut-off one) or ``HANG`` (never answers until
the stub closes). With no reply left it answers 500, so a test that under-scripts fails loudly.

    with OpenAIStub([tool_call_reply("ping", {}), answer_reply("done")]) as stub:
        ChatOpenAI(base_url=stub.url("/v1"), ...)
        stub.requests[0].path == "/v1/chat/completions"

``routes`` answer other requests the same way every time, by ``"METHOD /path"`` (a server's own
endpoints, such as llama.cpp's ``GET /v1/models`` or Ollama's ``POST /api/show``); any other
request that is not a chat completion is answered 404, as servers answer a path they do not
have. ``requests`` are the chat completions, ``other_requests`` the rest.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from memory_action.evaluation.local_server import LocalServer, send_json

HANG_LIMIT_S = 30.0  # a hung reply gives up after this, even if the stub is never closed


@dataclass(frozen=True)
class ErrorReply:
    status: int
    message: str = "stub error"
    code: str | None = None


@dataclass(frozen=True)
class RawReply:
    """A 200 answer whose body is these bytes, as a garbled or cut-off server sends them."""

    body: bytes


class _Hang:
    def __repr__(self) -> str:
        return "HANG"


HANG = _Hang()
Reply = dict[str, Any] | ErrorReply | RawReply | _Hang


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


def answer_reply(text: str, *, model: str = "stub-model", finish: str = "stop") -> dict[str, Any]:
    """A final assistant message; ``finish="length"`` is one the output cap cut off."""
    return _completion({"role": "assistant", "content": text}, finish, model)


def tool_call_reply(
    name: str, args: dict[str, Any], *, call_id: str = "call_1", model: str = "stub-model"
) -> dict[str, Any]:
    """An assistant turn calling one tool; ``arguments`` is a JSON string, as OpenAI sends it."""
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return _completion(message, "tool_calls", model)


def report_reply(summary: str, findings: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The review answered as the engine asks for it: a ``report_review`` tool call."""
    return tool_call_reply(
        "report_review", {"summary": summary, "findings": findings or []}, call_id="call_report"
    )


def _completion(message: dict[str, Any], finish: str, model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


@dataclass
class _State:
    replies: list[Reply]
    routes: dict[str, Any] = field(default_factory=dict)
    requests: list[RecordedRequest] = field(default_factory=list)
    others: list[RecordedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    closing: threading.Event = field(default_factory=threading.Event)

    def record_other(self, request: RecordedRequest) -> None:
        with self.lock:
            self.others.append(request)

    def record_and_pop(self, request: RecordedRequest) -> Reply | None:
        with self.lock:
            self.requests.append(request)
            return self.replies.pop(0) if self.replies else None


class OpenAIStub(LocalServer):
    """A threaded stub server; use it as a context manager."""

    def __init__(
        self, replies: Iterable[Reply] = (), *, routes: dict[str, Any] | None = None
    ) -> None:
        self._state = _State(list(replies), dict(routes or {}))
        super().__init__(_handler_for(self._state))

    def __exit__(self, *exc_info: object) -> None:
        self._state.closing.set()  # release hung replies first
        super().__exit__(*exc_info)

    def url(self, path: str = "") -> str:
        return self.base_url + path

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._state.lock:
            return list(self._state.requests)

    @property
    def other_requests(self) -> list[RecordedRequest]:
        with self._state.lock:
            return list(self._state.others)

    def add_replies(self, *replies: Reply) -> None:
        with self._state.lock:
            self._state.replies.extend(replies)


def _handler_for(state: _State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            body = json.loads(raw) if raw else None
            request = RecordedRequest("POST", self.path, headers, body)
            if not self.path.endswith("/chat/completions"):
                self._route(request)
                return
            self._answer(state.record_and_pop(request))

        def do_GET(self) -> None:
            headers = {k.lower(): v for k, v in self.headers.items()}
            self._route(RecordedRequest("GET", self.path, headers, None))

        def _route(self, request: RecordedRequest) -> None:
            state.record_other(request)
            routed = state.routes.get(f"{request.method} {request.path}")
            if routed is None:
                send_json(self, 404, {"error": {"message": "not found", "type": "not_found"}})
            else:
                send_json(self, 200, routed)

        def _answer(self, reply: Reply | None) -> None:
            if isinstance(reply, _Hang):
                state.closing.wait(HANG_LIMIT_S)
                return
            if reply is None:
                reply = ErrorReply(500, "stub: no scripted reply left")
            if isinstance(reply, RawReply):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)
                return
            if isinstance(reply, ErrorReply):
                error = {"message": reply.message, "type": "stub_error", "code": reply.code}
                send_json(self, reply.status, {"error": error})
            else:
                send_json(self, 200, reply)

        def log_message(self, format: str, *args: Any) -> None:
            """Keep test output quiet."""

    return Handler
