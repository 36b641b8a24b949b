"""A model that repeats a tool call its tools refused is told once, then the conversation ends.

A small model can loop: the same ``edit_file`` call on a file it may not edit, the same refusal,
until every model call of the run is spent. A call is refused when its result starts with
``Error`` or ``Refused`` (what every tool of the project answers when it did nothing). The
first identical repeat is not run: the model is told the call was refused before and how to
go on. The second ends the conversation before the next model call (``stopped``); the caller
keeps what the conversation has.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import Command

REFUSAL_PREFIXES = ("Error", "Refused")


class RefusedRepeats(AgentMiddleware[AgentState[Any], Any, Any]):
    """Counts identical repeats of refused tool calls; ``stopped`` once the model was told."""

    def __init__(self) -> None:
        super().__init__()
        self._refused: dict[str, str] = {}  # call → the first line of its refusal
        self._told: set[str] = set()
        self.stopped = ""  # the call that ended the conversation, "" while it goes on

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        call = request.tool_call
        key = _key(call["name"], call["args"])
        refusal = self._refused.get(key)
        if refusal is None:
            result = handler(request)
            if isinstance(result, ToolMessage) and _is_refusal(result):
                self._refused[key] = _first_line(result)
            return result
        if key in self._told:
            self.stopped = call["name"]
            text = "Not run: the same refused call a third time; this conversation ends here."
        else:
            self._told.add(key)
            text = (
                f"Not run: you made this exact {call['name']} call before and it was refused "
                f"({refusal}). Repeating it gets the same answer: change the call, or give "
                "your answer now."
            )
        return ToolMessage(f"Error: {text}", tool_call_id=call["id"], name=call["name"])

    @hook_config(can_jump_to=["end"])
    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        return {"jump_to": "end"} if self.stopped else None


def _key(name: str, args: object) -> str:
    return json.dumps([name, args], sort_keys=True, default=str)


def _is_refusal(message: ToolMessage) -> bool:
    return message.status == "error" or message.text.lstrip().startswith(REFUSAL_PREFIXES)


def _first_line(message: ToolMessage) -> str:
    text = message.text.strip()
    return (text.splitlines()[0] if text else "no details")[:200]
