"""MemoryMiddleware end to end with create_agent and a scripted model (no network)."""

from __future__ import annotations

import asyncio
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage

from memory_action.errors import MemoryFileError
from memory_action.memory.middleware import MemoryMiddleware
from memory_action.memory.sources import MemoryFiles
from tests.fakes.scripted_model import ScriptedChatModel, tool_call

WRITABLE = ".agent-memory/AGENTS.md"
PROMPT = "You review pull requests."
ASK = "Review PR #7"


def make_files(workspace: Path) -> MemoryFiles:
    return MemoryFiles(
        workspace=workspace,
        read_only=(PurePosixPath("AGENTS.md"),),
        writable=PurePosixPath(WRITABLE),
        max_bytes=4096,
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "AGENTS.md").write_text("- Run tests with `pytest -q`.\n", encoding="utf-8")
    (tmp_path / ".agent-memory").mkdir()
    (tmp_path / WRITABLE).write_text("## Lessons\n- v1 lesson\n", encoding="utf-8")
    return tmp_path


def edit_then_answer() -> ScriptedChatModel:
    return ScriptedChatModel.from_script(
        tool_call(
            "edit_file",
            {"file_path": WRITABLE, "old_string": "- v1 lesson", "new_string": "- v2 lesson"},
        ),
        "Memory updated; the PR looks fine.",
    )


def run(model: ScriptedChatModel, workspace: Path, **kwargs: Any) -> dict[str, Any]:
    agent = create_agent(model, middleware=[MemoryMiddleware(make_files(workspace))], **kwargs)
    result: dict[str, Any] = agent.invoke({"messages": [HumanMessage(ASK)]})
    return result


def test_memory_is_injected_and_edits_are_seen_by_the_next_call(workspace: Path) -> None:
    model = edit_then_answer()

    result = run(model, workspace, system_prompt=PROMPT)

    first, second = model.system_prompts
    assert first.startswith(f"{PROMPT}\n\n<agent_memory>\nAGENTS.md (read-only)\n\n")
    assert "- v1 lesson" in first
    assert "- v2 lesson" in second, "memory is re-read after an edit"
    assert "- v1 lesson" not in second
    assert (workspace / WRITABLE).read_text(encoding="utf-8") == "## Lessons\n- v2 lesson\n"
    assert model.bound_tools == ["edit_file", "write_file"]
    assert isinstance(model.seen[0][0].content, str), "a plain prompt stays a plain string"
    tool_message = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert tool_message.content == f"Edited {WRITABLE}"


def test_async_invoke_injects_and_refreshes_too(workspace: Path) -> None:
    model = edit_then_answer()
    agent = create_agent(
        model, system_prompt=PROMPT, middleware=[MemoryMiddleware(make_files(workspace))]
    )

    asyncio.run(agent.ainvoke({"messages": [HumanMessage(ASK)]}))

    first, second = model.system_prompts
    assert "- v1 lesson" in first
    assert "- v2 lesson" in second
    assert (workspace / WRITABLE).read_text(encoding="utf-8") == "## Lessons\n- v2 lesson\n"


def test_no_memory_says_so_and_write_file_creates_it(tmp_path: Path) -> None:
    model = ScriptedChatModel.from_script(
        tool_call("write_file", {"file_path": WRITABLE, "content": "- first lesson\n"}),
        "Done.",
    )

    run(model, tmp_path)

    first, second = model.system_prompts
    assert first.startswith("<agent_memory>\n(No memory loaded)\n</agent_memory>")
    assert "does not exist yet" in first
    assert f"{WRITABLE} (your writable memory)\n\n- first lesson" in second
    assert (tmp_path / WRITABLE).read_text(encoding="utf-8") == "- first lesson\n"


def test_a_list_system_prompt_keeps_its_blocks(workspace: Path) -> None:
    model = ScriptedChatModel.from_script("LGTM")
    cached = {"type": "text", "text": "Static rules.", "cache_control": {"type": "ephemeral"}}

    run(model, workspace, system_prompt=SystemMessage(content=[cached]))

    system = model.seen[0][0]
    assert isinstance(system, SystemMessage)
    assert isinstance(system.content, list)
    assert system.content[0] == cached
    added = system.content[1]
    assert isinstance(added, dict)
    assert added["type"] == "text"
    assert added["text"].startswith("\n\n<agent_memory>")


def test_a_refused_edit_reaches_the_model_and_changes_nothing(workspace: Path) -> None:
    model = ScriptedChatModel.from_script(
        tool_call("write_file", {"file_path": "AGENTS.md", "content": "- hijacked\n"}),
        "Sorry.",
    )

    result = run(model, workspace)

    tool_message = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert str(tool_message.content).startswith("Error: AGENTS.md is read-only")
    assert (workspace / "AGENTS.md").read_text(
        encoding="utf-8"
    ) == "- Run tests with `pytest -q`.\n"
    assert model.system_prompts[0] == model.system_prompts[1]


def test_bad_memory_fails_when_the_middleware_is_built(workspace: Path) -> None:
    (workspace / WRITABLE).write_bytes(b"\xff")

    with pytest.raises(MemoryFileError, match="not UTF-8"):
        MemoryMiddleware(make_files(workspace))


def test_memory_block_and_sources_are_exposed(workspace: Path) -> None:
    middleware = MemoryMiddleware(make_files(workspace))

    assert [s.path for s in middleware.sources] == ["AGENTS.md", WRITABLE]
    assert middleware.memory_block().startswith("<agent_memory>\nAGENTS.md (read-only)")
