"""Every request within the model's input limit, and what each call cost.

``RequestBudget`` sits just outside the provider call. Before a request goes out it is estimated
(system prompt with memory, messages, tool schemas, the answer tool's schema); when it would not
fit, the oldest tool results are replaced by one-line notes, oldest first; when it still would
not fit, it is not sent (``RequestTooLargeError``). A tool result is cut to what the next request
can still hold, with a note saying what was cut. After each call the provider's ``usage``
calibrates the estimator and is added to the run's cost. ``LastCallAnswers`` takes the tools
away from a conversation's last allowed call, so it ends with an answer rather than a tool call
nobody will run (an answer tool, ``answer_tools``, stays).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse, ToolCallRequest
from langchain.agents.structured_output import OutputToolBinding, ToolStrategy
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.types import Command

from memory_action.model.tokens import TokenEstimator
from memory_action.review.limits import RequestTooLargeError

PATCH_TOOL = "get_file_patch"
TURN_RESERVE = 64  # tokens kept free in a request for the chat format around tool results
MIN_RESULT_ROOM = 40  # below this a tool result is replaced by a note, not cut to a stub

_Result = ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]


@dataclass(kw_only=True)
class Cost:
    """What the model calls of a run cost, from the provider's ``usage`` where it gave one."""

    model_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    largest_request: int = 0  # our estimate of the largest request sent


def message_text(message: BaseMessage) -> str:
    """The text a message puts on the wire: its content and, for the model's turns, its calls."""
    content = message.content
    if isinstance(content, str):
        text = content
    else:
        text = "".join(
            str(block.get("text", "")) if isinstance(block, dict) else str(block)
            for block in content
        )
    if isinstance(message, AIMessage) and message.tool_calls:
        calls = [{"name": c["name"], "args": c["args"]} for c in message.tool_calls]
        text += json.dumps(calls, separators=(",", ":"))
    return text


def tool_schema(tool: BaseTool | dict[str, Any]) -> dict[str, Any]:
    return tool if isinstance(tool, dict) else convert_to_openai_tool(tool)


def answer_tools(response_format: object) -> list[dict[str, Any]]:
    """The tools a ``ToolStrategy`` adds to every request (after the middleware has run, so a
    request's ``tools`` do not hold them): they count toward its size like any tool."""
    if not isinstance(response_format, ToolStrategy):
        return []
    return [
        convert_to_openai_tool(OutputToolBinding.from_schema_spec(spec).tool)
        for spec in response_format.schema_specs
    ]


class RequestBudget(AgentMiddleware[AgentState[Any], Any, Any]):
    """Keeps requests under ``limit`` tokens; bounds tool results; records the cost."""

    def __init__(self, *, limit: int, estimator: TokenEstimator, cost: Cost) -> None:
        super().__init__()
        self.limit = limit
        self.estimator = estimator
        self.cost = cost
        self._lock = threading.Lock()
        self._room = limit  # what the next request can still take, for this turn's tool results
        # Files whose whole patch the conversation's first message shows: asked for again, the
        # answer is a one-line reference, not the patch a second time.
        self.shown_whole: frozenset[str] = frozenset()

    def estimate(self, request: ModelRequest[Any]) -> int:
        system = message_text(request.system_message) if request.system_message else ""
        return self.estimator.count_request(
            system,
            (message_text(m) for m in request.messages),
            [tool_schema(t) for t in request.tools] + answer_tools(request.response_format),
        )

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> _Result:
        request = self._fit(request)
        estimated = self.estimate(request)
        response = handler(request)
        answer = _last_ai(response)
        with self._lock:
            self.cost.model_calls += 1
            self.cost.largest_request = max(self.cost.largest_request, estimated)
            used = _usage(answer)
            if used is not None:
                self.cost.tokens_in += used[0]
                self.cost.tokens_out += used[1]
                self.estimator.calibrate(estimated, used[0])
            spoken = self.estimator.count(message_text(answer)) if answer is not None else 0
            # Older tool results can make way (``_fit`` replaces them, oldest first).
            evictable = sum(
                self.estimator.count(message_text(m))
                for m in request.messages
                if isinstance(m, ToolMessage)
            )
            self._room = self.limit - estimated + evictable - spoken - TURN_RESERVE
        return response

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        call = request.tool_call
        path = str(call["args"].get("path", "")).strip().removeprefix("./")
        if call["name"] == PATCH_TOOL and path in self.shown_whole:
            return ToolMessage(
                content=f"[{path}: its whole patch is in the first message of this conversation, "
                "above; it is not sent again]",
                tool_call_id=call["id"],
                name=call["name"],
            )
        result = handler(request)
        if not isinstance(result, ToolMessage):
            return result
        with self._lock:
            text = message_text(result)
            need = self.estimator.count(text) + 4
            self._room = min(self._room, self.limit // 2)  # one result never takes it all
            if need <= self._room:
                self._room -= need
                return result
            bounded = self._bounded(text, request.tool_call["name"])
            self._room -= self.estimator.count(bounded) + 4
        return result.model_copy(update={"content": bounded})

    def _bounded(self, text: str, tool: str) -> str:
        if self._room < MIN_RESULT_ROOM:
            return (
                f"[{tool}: its result ({len(text):,} characters) does not fit in what is left "
                "of this request's input limit; answer with what you have]"
            )
        note = (
            f"\n[cut: the result has {len(text):,} characters; only the first {{shown:,}} fit in "
            "what is left of this request's input limit]"
        )
        shown = self.estimator.prefix(text, self._room - self.estimator.count(note) - 8)
        return shown + note.format(shown=len(shown))

    def _fit(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """Replace the oldest tool results by notes until the request fits; never send it over."""
        messages = list(request.messages)
        for index in _tool_results_oldest_first(messages):
            if self.estimate(request) <= self.limit:
                return request
            old = messages[index]
            assert isinstance(old, ToolMessage)  # noqa: S101 - chosen by the helper above
            messages[index] = old.model_copy(
                update={"content": f"[earlier result of {old.name or 'a tool'} removed to fit]"}
            )
            request = request.override(messages=messages)
        estimated = self.estimate(request)
        if estimated > self.limit:
            raise RequestTooLargeError(
                f"The next request would hold about {estimated:,} tokens, over the model's "
                f"input limit of {self.limit:,}; it was not sent.",
                estimated=estimated,
                sent=False,
            )
        return request


def _tool_results_oldest_first(messages: Sequence[BaseMessage]) -> list[int]:
    return [i for i, m in enumerate(messages) if isinstance(m, ToolMessage)]


def _last_ai(response: object) -> AIMessage | None:
    if isinstance(response, AIMessage):
        return response
    result = (
        response.model_response.result
        if isinstance(response, ExtendedModelResponse)
        else (response.result if isinstance(response, ModelResponse) else [])
    )
    found = [m for m in result if isinstance(m, AIMessage)]
    return found[-1] if found else None


def _usage(answer: AIMessage | None) -> tuple[int, int] | None:
    meta = answer.usage_metadata if answer is not None else None
    if not meta:
        return None
    return int(meta.get("input_tokens", 0)), int(meta.get("output_tokens", 0))


class OfferOnly(AgentMiddleware[AgentState[Any], Any, Any]):
    """Every request of a conversation offers only the tools named (a request that will not
    use a tool should not pay for its schema)."""

    def __init__(self, names: frozenset[str]) -> None:
        super().__init__()
        self.names = names

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> _Result:
        kept = [t for t in request.tools if _tool_name(t) in self.names]
        if len(kept) != len(request.tools):
            request = request.override(tools=kept)
        return handler(request)


def _tool_name(tool: BaseTool | dict[str, Any]) -> str:
    if isinstance(tool, BaseTool):
        return tool.name
    return str(tool.get("name") or (tool.get("function") or {}).get("name", ""))


class LastCallAnswers(AgentMiddleware[AgentState[Any], Any, Any]):
    """On the ``calls``-th model call of a conversation, offer no tools: the model must answer."""

    def __init__(self, calls: int) -> None:
        super().__init__()
        self.calls = calls
        self._made = 0

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> _Result:
        self._made += 1
        if self._made >= self.calls and request.tools:
            request = request.override(tools=[], tool_choice=None)
        return handler(request)
