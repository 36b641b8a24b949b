"""GitHub Models' free tier as an OpenAI-compatible server on 127.0.0.1.

It enforces what ``../shared/docs/github-models-limits.md`` describes, with the answers GitHub
Models gives: a request estimated over ``max_input_tokens`` (about 4 characters a token over the
JSON of ``messages`` and ``tools``) gets 413 ``tokens_limit_reached``; more than ``per_minute``
requests in a minute of the injected clock get 429 ``UserByModelByMinute`` with ``retry-after``;
more than ``per_day`` in a day get 429 ``UserByModelByDay``. Rate limits are checked first, and
every request they let through counts, a 413 too. ``inject`` makes the next request fail with a
chosen answer whatever it is (for "413 then retry", "429 then wait", "429 daily then stop").

Everything else is answered by ``DiligentReviewer`` (``tests/fakes/diligent_reviewer.py``) with
``usage`` from the same estimate. Every request is recorded: its size in tokens, its status, what
was answered and which changed files it showed.

    with GitHubModelsStub(["src/a.py"], clock=clock) as stub:
        model_base_url = stub.base_url  # the client posts to /chat/completions under it
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from memory_action.evaluation.local_server import LocalServer, send_json
from memory_action.model.tokenizer import shared
from tests.fakes.diligent_reviewer import DiligentReviewer, ToolCall
from tests.fakes.openai_stub import answer_reply, tool_call_reply

CHARS_PER_TOKEN = 4
MINUTE, DAY = 60, 86_400
TOKENS, PER_MINUTE, PER_DAY = "tokens", "minute", "day"
RATE_TYPES = {PER_MINUTE: "UserByModelByMinute", PER_DAY: "UserByModelByDay"}


@dataclass(frozen=True)
class FreeTier:
    """The low tier's limits (gpt-4.1-mini, gpt-4o-mini) unless told otherwise."""

    max_input_tokens: int = 8000
    per_minute: int = 15
    per_day: int = 150
    chars_per_token: float = CHARS_PER_TOKEN  # how the window is counted (3: a denser tokenizer)
    encoding: str = ""  # else counted by this tokenizer, as OpenAI counts a chat request


@dataclass(frozen=True)
class Fault:
    """An answer forced on the next request: ``kind`` is tokens (413), minute or day (429)."""

    kind: str
    retry_after: int = 1


@dataclass(frozen=True)
class StubRequest:
    tokens: int  # the stub's estimate of the request
    status: int
    limit: str  # the limit that refused it ("" when answered), injected or not
    reply: str  # "answer", the name of the tool called, or "" for an error
    seen: frozenset[str]  # the changed files the request showed
    body: dict[str, Any]


def estimate_tokens(
    request: dict[str, Any], chars_per_token: float = CHARS_PER_TOKEN, encoding: str = ""
) -> int:
    """About 4 characters a token over the messages (tool calls included) and the tools; with
    an ``encoding``, that tokenizer's count of the request as OpenAI's cookbook counts one:
    3 tokens a message, its role, its text (and tool calls), 3 for the reply, the tools' JSON."""
    if encoding:
        return openai_request_tokens(request, shared(encoding).count)
    size = len(json.dumps(request.get("messages") or [])) + len(
        json.dumps(request.get("tools") or [])
    )
    return math.ceil(size / chars_per_token)


def openai_request_tokens(request: dict[str, Any], count: Callable[[str], int]) -> int:
    total = 3
    for message in request.get("messages") or []:
        content = message.get("content") or ""
        text = content if isinstance(content, str) else json.dumps(content)
        total += 3 + count(str(message.get("role", ""))) + count(text)
        if message.get("tool_calls"):
            total += count(json.dumps(message["tool_calls"]))
    tools = request.get("tools")
    return total + (count(json.dumps(tools)) if tools else 0)


class RateWindow:
    """At most ``limit`` admissions in any ``seconds`` of ``clock``."""

    def __init__(self, limit: int, seconds: int, clock: Callable[[], float]) -> None:
        self.limit = limit
        self.seconds = seconds
        self._clock = clock
        self._admitted: deque[float] = deque()

    def wait(self) -> int:
        """Whole seconds until a request would be admitted (0: now)."""
        now = self._clock()
        while self._admitted and self._admitted[0] <= now - self.seconds:
            self._admitted.popleft()
        if len(self._admitted) < self.limit:
            return 0
        return max(1, math.ceil(self._admitted[0] + self.seconds - now))

    def admit(self) -> None:
        self._admitted.append(self._clock())


@dataclass
class _State:
    reviewer: DiligentReviewer
    limits: FreeTier
    minute: RateWindow
    day: RateWindow
    faults: deque[Fault] = field(default_factory=deque)
    requests: list[StubRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    calls: int = 0


class GitHubModelsStub(LocalServer):
    def __init__(
        self,
        changed_paths: Sequence[str] = (),
        *,
        limits: FreeTier | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        limits = limits or FreeTier()
        self._state = _State(
            reviewer=DiligentReviewer(changed_paths),
            limits=limits,
            minute=RateWindow(limits.per_minute, MINUTE, clock),
            day=RateWindow(limits.per_day, DAY, clock),
        )
        super().__init__(_handler_for(self))

    @property
    def requests(self) -> list[StubRequest]:
        with self._state.lock:
            return list(self._state.requests)

    def inject(self, *faults: Fault) -> None:
        """The next requests get these answers, in order, before any limit is looked at."""
        with self._state.lock:
            self._state.faults.extend(faults)

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, str], dict[str, Any]]:
        """Status, headers and JSON body for one chat-completions request (recorded)."""
        state = self._state
        with state.lock:
            tokens = estimate_tokens(body, state.limits.chars_per_token, state.limits.encoding)
            model = str(body.get("model") or "gpt-4.1-mini").rsplit("/", 1)[-1]
            refusal = self._refusal(tokens, model)
            reading = state.reviewer.read(body)
            if refusal is not None:
                status, headers, payload, limit = refusal
                state.requests.append(StubRequest(tokens, status, limit, "", reading.seen, body))
                return status, headers, payload
            decision = state.reviewer.decide(body)
            state.calls += 1
            if isinstance(decision, ToolCall):
                reply = tool_call_reply(
                    decision.name, decision.args, call_id=f"call_{state.calls}", model=model
                )
                name = decision.name
            else:
                reply = answer_reply(decision.text, model=model)
                name = "answer"
            message = json.dumps(reply["choices"][0]["message"])
            completion = math.ceil(len(message) / state.limits.chars_per_token)
            reply["usage"] = {
                "prompt_tokens": tokens,
                "completion_tokens": completion,
                "total_tokens": tokens + completion,
            }
            state.requests.append(StubRequest(tokens, 200, "", name, reading.seen, body))
            return 200, {}, reply

    def _refusal(
        self, tokens: int, model: str
    ) -> tuple[int, dict[str, str], dict[str, Any], str] | None:
        state = self._state
        if state.faults:
            fault = state.faults.popleft()
            if fault.kind == TOKENS:
                return (*too_large(model, state.limits.max_input_tokens), TOKENS)
            window = state.minute if fault.kind == PER_MINUTE else state.day
            return (*rate_limited(fault.kind, window.limit, fault.retry_after), fault.kind)
        for kind, window in ((PER_DAY, state.day), (PER_MINUTE, state.minute)):
            wait = window.wait()
            if wait:
                return (*rate_limited(kind, window.limit, wait), kind)
        state.day.admit()
        state.minute.admit()
        if tokens > state.limits.max_input_tokens:
            return (*too_large(model, state.limits.max_input_tokens), TOKENS)
        return None


def too_large(model: str, max_tokens: int) -> tuple[int, dict[str, str], dict[str, Any]]:
    error = {
        "code": "tokens_limit_reached",
        "message": f"Request body too large for {model} model. Max size: {max_tokens} tokens.",
        "details": f"Request body too large for {model} model. Max size: {max_tokens} tokens.",
    }
    return 413, {}, {"error": error}


def rate_limited(kind: str, limit: int, wait: int) -> tuple[int, dict[str, str], dict[str, Any]]:
    rate_type = RATE_TYPES[kind]
    seconds = MINUTE if kind == PER_MINUTE else DAY
    message = (
        f"Rate limit of {limit} per {seconds}s exceeded for {rate_type}. "
        f"Please wait {wait} seconds before retrying."
    )
    headers = {"retry-after": str(wait), "x-ratelimit-type": rate_type}
    return (
        429,
        headers,
        {"error": {"code": "RateLimitReached", "message": message, "details": message}},
    )


def _handler_for(stub: GitHubModelsStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if not self.path.split("?")[0].endswith("/chat/completions"):
                send_json(self, 404, {"error": {"code": "unknown_route", "message": self.path}})
                return
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                send_json(self, 400, {"error": {"code": "bad_request", "message": "not JSON"}})
                return
            status, headers, payload = stub.answer(body if isinstance(body, dict) else {})
            send_json(self, status, payload, headers)

        def log_message(self, format: str, *args: Any) -> None:
            """Keep test output quiet."""

    return Handler
