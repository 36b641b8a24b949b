"""The shared ScriptedChatModel fake: tool binding, recording, streaming, running out."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

from tests.fakes.scripted_model import ScriptedChatModel, tool_call, tool_calls


@tool
def ping(text: str) -> str:
    """Answer pong."""
    return f"pong {text}"


def test_records_prompts_and_bound_tools() -> None:
    model = ScriptedChatModel.from_script(tool_call("ping", {"text": "a"}), "done")
    agent = create_agent(model, tools=[ping], system_prompt="Be brief.")

    result = agent.invoke({"messages": [HumanMessage("go")]})

    assert model.bound_tools == ["ping"]
    assert model.calls == 2
    assert model.system_prompts == ["Be brief.", "Be brief."]
    assert [type(m) for m in model.seen[1]] == [SystemMessage, HumanMessage, AIMessage, ToolMessage]
    assert result["messages"][-1].content == "done"


def test_streaming_keeps_tool_calls() -> None:
    model = ScriptedChatModel.from_script(
        tool_calls(("ping", {"text": "a"}), ("ping", {"text": "b"})), "done"
    )
    agent = create_agent(model, tools=[ping])

    # "messages" mode makes langgraph call the model's _stream instead of _generate.
    parts = list(
        agent.stream({"messages": [HumanMessage("go")]}, stream_mode=["updates", "messages"])
    )

    tool_results = [
        m.content
        for mode, chunk in parts
        if mode == "updates" and isinstance(chunk, dict)
        for update in chunk.values()
        if update
        for m in update.get("messages", [])
        if isinstance(m, ToolMessage)
    ]
    assert sorted(tool_results) == ["pong a", "pong b"]


def test_stream_yields_one_chunk_with_the_tool_calls() -> None:
    model = ScriptedChatModel.from_script(tool_call("ping", {"text": "a"}, call_id="c1"))

    [chunk] = list(model.stream("go"))

    assert chunk.tool_calls == [
        {"name": "ping", "args": {"text": "a"}, "id": "c1", "type": "tool_call"}
    ]


def test_tool_call_ids_are_unique() -> None:
    ids = {call["id"] for _ in range(5) for call in tool_call("ping", {"text": "x"}).tool_calls}

    assert len(ids) == 5


def test_running_out_of_script_is_a_clear_failure() -> None:
    model = ScriptedChatModel.from_script("only answer")
    model.invoke("first")

    with pytest.raises(AssertionError, match="script ran out at model call 2"):
        model.invoke("second")
