"""``MemoryMiddleware``: memory in the system prompt of every model call, and the edit tools.

Memory is loaded when the middleware is built (so a bad memory file fails the run before any
model call) and re-read after each successful edit, so the next model call sees the edit.
Secrets in memory (token formats, values the run masked) are redacted from the block the model
sees, so it cannot repeat them in a review; edits that would store one are refused by the tools
and listed in ``refusals``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
)
from langchain_core.messages import AIMessage, SystemMessage

from memory_action.memory.render import render_memory_block
from memory_action.memory.sources import MemoryFiles, MemorySource, load_sources
from memory_action.memory.tools import Checkpoint, MemoryEditor, memory_tools
from memory_action.safety.scrub import RefusalLog, redact

_Result = ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]


class MemoryMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Appends the ``<agent_memory>`` block to the system message; contributes the edit tools."""

    def __init__(self, files: MemoryFiles, *, refusals: RefusalLog | None = None) -> None:
        super().__init__()
        self.files = files
        # Edits refused for holding a secret (kinds and times only), for the job summary.
        self.refusals = RefusalLog() if refusals is None else refusals
        self._editor = MemoryEditor(files, self._mark_dirty, self.refusals)
        self.tools = memory_tools(self._editor)
        self._dirty = False
        self._sources = load_sources(files)
        self._block = self._render()

    @property
    def sources(self) -> list[MemorySource]:
        """The memory as last loaded (re-read first if it was edited since)."""
        self._refresh()
        return list(self._sources)

    def checkpoint(self) -> Checkpoint:
        """Memory as it is now: a conversation whose answer is not used is rolled back to it."""
        return self._editor.checkpoint()

    def roll_back(self, to: Checkpoint) -> bool:
        """Undo every edit since ``to``; whether there was one to undo."""
        return self._editor.roll_back(to)

    def memory_block(self) -> str:
        """The block the next model call will see."""
        self._refresh()
        return self._block

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> _Result:
        return handler(self._with_memory(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> _Result:
        return await handler(self._with_memory(request))

    def _mark_dirty(self) -> None:
        self._dirty = True

    def _refresh(self) -> None:
        if self._dirty:
            self._dirty = False  # before loading: an edit during the load marks it again
            self._sources = load_sources(self.files)
            self._block = self._render()

    def _render(self) -> str:
        shown = [
            replace(source, content=redact(source.content, self.files.masked)[0])
            for source in self._sources
        ]
        return render_memory_block(shown, self.files.writable.as_posix())

    def _with_memory(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        block = self.memory_block()
        old = request.system_message
        if old is None or not old.content:
            new = SystemMessage(content=block)
        elif isinstance(old.content, str):  # keep a plain prompt plain: safest on every provider
            new = old.model_copy(update={"content": f"{old.content}\n\n{block}"})
        else:  # a list of blocks (e.g. with cache_control): keep them, add one
            text_block = {"type": "text", "text": f"\n\n{block}"}
            new = old.model_copy(update={"content": [*old.content, text_block]})
        return request.override(system_message=new)
