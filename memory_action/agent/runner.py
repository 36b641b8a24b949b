"""Build the LangChain agent and run it once, within a model-call limit and a wall-clock timeout.

Timeout: LangGraph cannot interrupt a blocking model call, so the graph runs in a daemon worker
thread and the caller waits at most ``timeout_s``. A ``RunGuard`` middleware (the outermost layer)
holds the deadline: after it, no tool starts (the call gets an error ToolMessage instead) and no
further model call is made. On timeout the runner sets the guard's flag, waits briefly for a tool
already running (a memory edit) to finish, then raises, so nothing more is written once the caller
has the error. A model request still in flight ends with its own HTTP timeout; the daemon thread
never keeps the process alive.

Every failure is an ``AgentRunError`` (an ``AgentError``) with one line naming the cause and the
fix; it carries the partial ``AgentOutcome``.
"""

from __future__ import annotations

import contextvars
import json
import re
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelCallLimitMiddleware,
    ModelRequest,
    ModelResponse,
    ToolErrorMiddleware,
)
from langchain.agents.middleware.types import ExtendedModelResponse, ToolCallRequest
from langchain.agents.structured_output import ToolStrategy
from langchain_core.exceptions import (
    ContextOverflowError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelError,
    ModelNotFoundError,
    ModelPermissionDeniedError,
    ModelRateLimitError,
    ModelTimeoutError,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.errors import GraphBubbleUp, GraphRecursionError
from langgraph.types import Command

from memory_action.agent.repeats import RefusedRepeats
from memory_action.errors import AgentError, MemoryActionError, Setting, Words, render

DRAIN_GRACE_S = 10.0  # how long a timed-out run may finish a tool call already started
STEPS_PER_MODEL_CALL = 10  # graph supersteps per loop, with room for middleware nodes

ANSWER = "answer"
CALL_LIMIT = "call_limit"
TIMEOUT = "timeout"
MODEL_ERROR = "model_error"
EMPTY_ANSWER = "empty_answer"
REPEATED = "repeated_refusal"
# What providers put in an answer's metadata when it stopped at the output cap.
CUT_OFF = {"finish_reason": "length", "stop_reason": "max_tokens"}

_SDK_PREFIX = re.compile(r"^Error code: \d+ - ")  # the SDKs repeat the status we already give

_API_KEY = Setting(name="model_api_key")
AUTH_HINTS: dict[str, Words] = {
    "github": ("the workflow needs `permissions: models: read` for GitHub Models",),
    "openai": ("check ", _API_KEY),
    "anthropic": ("check ", _API_KEY),
    "": (
        "for github: models the workflow needs `permissions: models: read`; "
        "for openai: and anthropic: models check ",
        _API_KEY,
    ),
}


@dataclass(frozen=True, kw_only=True)
class AgentOutcome:
    answer: str
    model_calls: int
    tool_calls: int
    finished: bool  # True only when the model gave a final answer within the limits
    stop_reason: (
        str  # answer | call_limit | timeout | model_error | empty_answer | repeated_refusal
    )
    # The arguments of the answer tool (``response_format``), when the model answered through it.
    structured: dict[str, Any] | None = None
    cut_off: bool = False  # the last answer stopped at the output cap (max_tokens)


class AgentRunError(AgentError):
    """The run ended without a usable answer; ``outcome`` says how far it got."""

    def __init__(self, message: str | Words, outcome: AgentOutcome) -> None:
        super().__init__(message)
        self.outcome = outcome


class _Cancelled(Exception):  # noqa: N818 - a signal inside the worker, never shown
    """Raised inside the graph once the deadline has passed."""


class _ModelCallError(Exception):
    """Wraps an exception raised by the model call, so it is told apart from other failures."""


class RunGuard(AgentMiddleware[AgentState[Any], Any, Any]):
    """Outermost middleware: enforces the deadline and counts model and tool calls."""

    def __init__(self, timeout_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._clock = clock
        self._deadline = clock() + timeout_s
        self._cancelled = threading.Event()
        self._idle = threading.Condition()
        self._running_tools = 0
        self.model_calls = 0
        self.tool_calls = 0
        self.last_model_message: AIMessage | None = None

    @property
    def expired(self) -> bool:
        return self._cancelled.is_set() or self._clock() >= self._deadline

    def cancel_and_drain(self, grace_s: float = DRAIN_GRACE_S) -> bool:
        """Stop everything; True when no tool call is still running after ``grace_s``."""
        self._cancelled.set()
        with self._idle:
            return self._idle.wait_for(lambda: self._running_tools == 0, timeout=grace_s)

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        if self.expired:
            raise _Cancelled
        try:
            response = handler(request)
        except (_Cancelled, GraphBubbleUp, MemoryActionError):
            raise
        except Exception as exc:
            raise _ModelCallError(str(exc)) from exc
        self._record(response)
        if self.expired:  # the answer came too late: do not act on it
            raise _Cancelled
        return response

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        if self.expired:
            raise _Cancelled
        try:
            response = await handler(request)
        except (_Cancelled, GraphBubbleUp, MemoryActionError):
            raise
        except Exception as exc:
            raise _ModelCallError(str(exc)) from exc
        self._record(response)
        if self.expired:
            raise _Cancelled
        return response

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        if not self._start_tool():
            return _timeout_message(request)
        try:
            return handler(request)
        finally:
            self._end_tool()

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        if not self._start_tool():
            return _timeout_message(request)
        try:
            return await handler(request)
        finally:
            self._end_tool()

    def _record(self, response: ModelResponse[Any] | AIMessage) -> None:
        messages = _response_messages(response)
        with self._idle:
            self.model_calls += 1
            ai = [m for m in messages if isinstance(m, AIMessage)]
            if ai:
                self.last_model_message = ai[-1]

    def _start_tool(self) -> bool:
        # Checked and counted under the lock, so cancel_and_drain sees every started tool.
        with self._idle:
            if self.expired:
                return False
            self._running_tools += 1
            self.tool_calls += 1
            return True

    def _end_tool(self) -> None:
        with self._idle:
            self._running_tools -= 1
            self._idle.notify_all()


def _response_messages(response: object) -> list[BaseMessage]:
    if isinstance(response, AIMessage):
        return [response]
    if isinstance(response, ExtendedModelResponse):
        return list(response.model_response.result)
    if isinstance(response, ModelResponse):
        return list(response.result)
    return []


def _timeout_message(request: ToolCallRequest) -> ToolMessage:
    return ToolMessage(
        "Error: not run, the time limit of this run has passed.",
        tool_call_id=request.tool_call["id"],
        name=request.tool_call["name"],
        status="error",
    )


def _tool_error(exc: Exception, request: ToolCallRequest) -> str:
    """Any tool exception becomes an error ToolMessage the model can react to."""
    detail = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else "no details"
    return f"Error: {request.tool_call['name']} failed: {type(exc).__name__}: {detail}"


def run_agent(
    model: BaseChatModel,
    *,
    tools: Sequence[BaseTool],
    middleware: Sequence[AgentMiddleware[Any, Any, Any]],
    system_prompt: str,
    task: str,
    timeout_s: float,
    max_model_calls: int = 25,
    provider: str = "",
    response_format: ToolStrategy[Any] | None = None,
    clock: Callable[[], float] = time.monotonic,
    join: Callable[[threading.Thread, float], None] = threading.Thread.join,
) -> AgentOutcome:
    """Run the agent on ``task`` once; the final answer, or AgentRunError with one clear line.

    ``provider`` (github, openai, anthropic) only sharpens the hint of an authentication error.
    With ``response_format`` (a JSON-schema ``ToolStrategy``) the model answers by calling that
    tool; its arguments are the outcome's ``structured`` (a plain text answer is still taken).
    ``clock`` is what the deadline is measured on and ``join`` how the run is waited for at most
    ``timeout_s``: tests inject both, so no test races the wall clock.
    """
    guard = RunGuard(timeout_s, clock)
    repeats = RefusedRepeats()
    agent = create_agent(
        model,
        list(tools),
        system_prompt=system_prompt,
        response_format=response_format,
        middleware=[
            guard,
            repeats,
            ToolErrorMiddleware(_tool_error),
            *middleware,
            ModelCallLimitMiddleware(run_limit=max_model_calls, exit_behavior="end"),
        ],
    )
    config: RunnableConfig = {"recursion_limit": STEPS_PER_MODEL_CALL * max_model_calls + 20}

    def invoke() -> object:
        return agent.invoke({"messages": [HumanMessage(task)]}, config)

    result = _Worker(invoke).run(timeout_s, join)
    if result.timed_out:
        guard.cancel_and_drain()
        raise _failure(guard, TIMEOUT, _timeout_text(timeout_s))
    if result.error is not None:
        _raise_mapped(result.error, guard, model, provider, timeout_s)
    structured = _structured(result.value)
    if structured is not None:
        return AgentOutcome(
            answer="",
            model_calls=guard.model_calls,
            tool_calls=guard.tool_calls,
            finished=True,
            stop_reason=ANSWER,
            structured=structured,
        )
    if repeats.stopped:
        text = f"The model repeated a refused {repeats.stopped} call after being told; stopped."
        last = guard.last_model_message
        said = str(last.text).strip() if last is not None else ""
        outcome = AgentOutcome(
            answer=said,
            model_calls=guard.model_calls,
            tool_calls=guard.tool_calls,
            finished=False,
            stop_reason=REPEATED,
        )
        raise AgentRunError(text, outcome)
    return _outcome(guard, max_model_calls)


def _structured(state: object) -> dict[str, Any] | None:
    """The answer tool's arguments from the graph's final state, if the model called it."""
    found = state.get("structured_response") if isinstance(state, dict) else None
    return found if isinstance(found, dict) else None


@dataclass(kw_only=True)
class _Result:
    timed_out: bool = False
    error: BaseException | None = None
    value: object = None


class _Worker:
    """Runs ``action`` in a daemon thread and waits at most a given time for it."""

    def __init__(self, action: Callable[[], object]) -> None:
        self._action = action
        self._result = _Result()

    def run(self, timeout_s: float, join: Callable[[threading.Thread, float], None]) -> _Result:
        # In the caller's context: what the run keeps there (the scan cache) reaches the tools.
        context = contextvars.copy_context()
        thread = threading.Thread(
            target=context.run, args=(self._target,), name="memory-agent-run", daemon=True
        )
        thread.start()
        join(thread, timeout_s)
        if thread.is_alive():
            return _Result(timed_out=True)
        return self._result

    def _target(self) -> None:
        try:
            self._result.value = self._action()
        except BaseException as exc:  # handed to the waiting thread
            self._result.error = exc


def _outcome(guard: RunGuard, max_model_calls: int) -> AgentOutcome:
    last = guard.last_model_message
    if last is not None and last.tool_calls:
        raise _failure(guard, CALL_LIMIT, _limit_text(max_model_calls))
    answer = str(last.text).strip() if last is not None else ""
    if not answer:
        raise _failure(
            guard, EMPTY_ANSWER, "The model ended without an answer: its last message had no text."
        )
    cut = last is not None and _cut_off(last)
    return AgentOutcome(
        answer=answer,
        model_calls=guard.model_calls,
        tool_calls=guard.tool_calls,
        finished=True,
        stop_reason=ANSWER,
        cut_off=cut,
    )


def _cut_off(message: AIMessage) -> bool:
    """The answer stopped at the output cap, not where the model ended it."""
    meta = message.response_metadata or {}
    return any(meta.get(key) == value for key, value in CUT_OFF.items())


def _raise_mapped(
    error: BaseException, guard: RunGuard, model: BaseChatModel, provider: str, timeout_s: float
) -> None:
    if isinstance(error, _Cancelled):
        raise _failure(guard, TIMEOUT, _timeout_text(timeout_s)) from None
    if isinstance(error, GraphRecursionError):
        raise _failure(guard, CALL_LIMIT, _limit_text(guard.model_calls)) from None
    if isinstance(error, _ModelCallError) and error.__cause__ is not None:
        text = model_error_words(error.__cause__, _model_name(model), provider)
        raise _failure(guard, MODEL_ERROR, text) from error.__cause__
    raise error  # a MemoryActionError is already one clear line; anything else is a bug


def _failure(guard: RunGuard, reason: str, text: str | Words) -> AgentRunError:
    outcome = AgentOutcome(
        answer="",
        model_calls=guard.model_calls,
        tool_calls=guard.tool_calls,
        finished=False,
        stop_reason=reason,
    )
    return AgentRunError(text, outcome)


def _timeout_text(timeout_s: float) -> Words:
    budget = Setting(name="timeout_minutes")
    return (
        f"The agent did not finish in the {readable_duration(timeout_s)} the run had left of ",
        budget,
        "; raise ",
        budget,
        " or use a faster model.",
    )


def readable_duration(seconds: float) -> str:
    """``59 s``, ``1 min 30 s``, ``10 min``: what a person reads in a message."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    minutes, rest = divmod(whole, 60)
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


def _limit_text(calls: int) -> str:
    return (
        f"The model kept calling tools and gave no final answer within {calls} model calls; "
        "try a more capable model."
    )


def describe_model_error(exc: BaseException, model_name: str, provider: str = "") -> str:
    """One line for a failed model call, in the action's words (``model_error_words``)."""
    return render(model_error_words(exc, model_name, provider))


def model_error_words(exc: BaseException, model_name: str, provider: str = "") -> Words:
    """One line for a failed model call: what happened and what to change.

    langchain-core's ``Model*Error`` types (which the provider packages raise, whatever the
    provider) decide; a bare ``status_code`` is the fallback for other clients.
    """
    status = getattr(exc, "status_code", None)
    detail = _first_line(exc)
    if isinstance(exc, ModelAuthenticationError | ModelPermissionDeniedError) or status in (
        401,
        403,
    ):
        hint = AUTH_HINTS.get(provider, AUTH_HINTS[""])
        code = status or (403 if isinstance(exc, ModelPermissionDeniedError) else 401)
        return (f"The model provider refused the credentials (HTTP {code}): ", *hint, ".")
    if isinstance(exc, ModelNotFoundError) or status == 404:
        return (
            f"The model provider does not know the model {model_name!r} (HTTP 404): check ",
            Setting(name="model"),
            ".",
        )
    transport = _transport_words(exc, detail)
    if transport is not None:
        return transport
    for kind, text in _MODEL_ERRORS:
        if isinstance(exc, kind):
            return (text.format(status=status, detail=detail),)
    if isinstance(status, int):
        return (f"The model provider answered HTTP {status}: {detail}",)
    return (f"The model call failed: {type(exc).__name__}: {detail}",)


def _transport_words(exc: BaseException, detail: str) -> Words | None:
    """The server could not be reached, or its answer could not be read."""
    base_url = Setting(name="model_base_url")
    if isinstance(exc, ModelConnectionError):
        return ("Could not reach the model provider (check ", base_url, f"): {detail}")
    if isinstance(exc, json.JSONDecodeError):  # the SDK parsed a cut-off or garbled body
        return (
            f"The model provider's answer is not valid JSON (cut off or garbled: {detail}): "
            "check that ",
            base_url,
            " is an OpenAI-compatible server, or try again.",
        )
    return None


_MODEL_ERRORS: tuple[tuple[type[Exception], str], ...] = (
    (ModelRateLimitError, "The model provider is rate limiting this token (HTTP 429): {detail}"),
    (ContextOverflowError, "The request is larger than the model's context window: {detail}"),
    (ModelTimeoutError, "The model provider did not answer in time: {detail}"),
    (ModelError, "The model provider answered HTTP {status}: {detail}"),
)


def _first_line(exc: BaseException, limit: int = 300) -> str:
    text = _SDK_PREFIX.sub("", str(exc).strip())
    return text.splitlines()[0][:limit] if text else type(exc).__name__


def _model_name(model: BaseChatModel) -> str:
    for attr in ("model_name", "model"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__
