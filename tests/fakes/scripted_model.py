"""A scripted chat model for agent tests: plays back a script, records every prompt it gets.

``GenericFakeChatModel`` cannot be given tools (its ``bind_tools`` raises) and, when streamed,
drops tool calls; this subclass fixes both and keeps what each model call saw in ``seen``::

    model = ScriptedChatModel.from_script(
        tool_call("edit_file", {"file_path": "...", "old_string": "a", "new_string": "b"}),
        "Done.",
    )
    agent = create_agent(model, tools=[...])
    agent.invoke({"messages": [{"role": "user", "content": "go"}]})
    assert "a" in model.system_prompts[0]
"""

from __future__ import annotations

import builtins
import itertools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, SystemMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

# Tool-call ids must be unique within a run, or langgraph's routing breaks (KeyError: 'model').
_call_ids = itertools.count(1)


def tool_call(name: str, args: Mapping[str, Any], *, call_id: str | None = None) -> AIMessage:
    """An AI message that calls one tool, with a fresh unique id unless one is given."""
    return tool_calls((name, args), call_ids=None if call_id is None else [call_id])


def tool_calls(
    *calls: tuple[str, Mapping[str, Any]], call_ids: Sequence[str] | None = None
) -> AIMessage:
    """An AI message that calls several tools at once (they may run in parallel)."""
    ids = list(call_ids) if call_ids is not None else [f"call_{next(_call_ids)}" for _ in calls]
    if len(ids) != len(calls):
        raise ValueError(f"{len(calls)} calls but {len(ids)} ids")
    return AIMessage(
        content="",
        tool_calls=[
            {"name": name, "args": dict(args), "id": call_id, "type": "tool_call"}
            for (name, args), call_id in zip(calls, ids, strict=True)
        ],
    )


class ScriptedChatModel(GenericFakeChatModel):
    """Answers each model call with the next scripted message; records what every call saw."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)
    """One list of messages per model call, in call order (system message first, if any)."""

    bound_tools: list[str] = Field(default_factory=list)
    """Names of the tools of the last ``bind_tools`` call."""

    bound_schemas: list[dict[str, Any]] = Field(default_factory=list)
    """The OpenAI schemas of the tools of the last ``bind_tools`` call."""

    seen_tools: list[list[dict[str, Any]]] = Field(default_factory=list)
    """The tool schemas each model call was offered, in call order (beside ``seen``)."""

    fail_at: dict[int, BaseException] = Field(default_factory=dict)
    """Model call number (1-based) → the exception that call raises (it uses no script step)."""

    before_first_call: Any = None
    """Called once, at the first model call (the run has restored by then): something else
    happening while the agent runs, such as another run saving."""

    @classmethod
    def from_script(cls, *steps: AIMessage | str) -> ScriptedChatModel:
        return cls(messages=iter(steps))

    @property
    def calls(self) -> int:
        return len(self.seen)

    @property
    def system_prompts(self) -> list[str]:
        """The system message text of each call; "" for a call without one."""
        return [_system_text(messages) for messages in self.seen]

    def bind_tools(
        self,
        tools: Sequence[builtins.dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        self.bound_tools = [_tool_name(tool) for tool in tools]
        self.bound_schemas = [convert_to_openai_tool(tool) for tool in tools]
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.before_first_call is not None and not self.seen:
            self.before_first_call()
        self.seen.append(list(messages))
        self.seen_tools.append(list(self.bound_schemas))
        failure = self.fail_at.get(len(self.seen))
        if failure is not None:
            raise failure
        try:
            return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
        except StopIteration:
            # Left alone, StopIteration surfaces as a confusing RuntimeError deep in langgraph.
            raise AssertionError(
                f"ScriptedChatModel: the script ran out at model call {len(self.seen)}"
            ) from None

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        # One chunk carrying the whole message, tool calls included (the base class drops them);
        # BaseChatModel.stream reports it to the callbacks.
        message = self._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
        ai = message.generations[0].message
        if not isinstance(ai, AIMessage):
            raise TypeError(f"scripted step is a {type(ai).__name__}, not an AIMessage")
        chunk = AIMessageChunk(
            content=ai.content,
            id=ai.id,
            tool_call_chunks=[
                tool_call_chunk(
                    name=call["name"], args=json.dumps(call["args"]), id=call["id"], index=index
                )
                for index, call in enumerate(ai.tool_calls)
            ],
            chunk_position="last",
        )
        yield ChatGenerationChunk(message=chunk)


def _system_text(messages: Sequence[BaseMessage]) -> str:
    return next((m.text for m in messages if isinstance(m, SystemMessage)), "")


def _tool_name(tool: builtins.dict[str, Any] | type | Callable[..., Any] | BaseTool) -> str:
    if isinstance(tool, BaseTool):
        return tool.name
    if isinstance(tool, dict):
        return str(tool.get("name") or tool.get("function", {}).get("name", ""))
    return getattr(tool, "__name__", repr(tool))
