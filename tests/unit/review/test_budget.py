"""Requests stay within the input limit: tool results cut to what fits, older results replaced
by notes, a request that cannot fit never sent; the last allowed call gets no tools."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool

from memory_action.agent.runner import run_agent
from memory_action.model.tokens import TokenEstimator
from memory_action.review.budget import Cost, LastCallAnswers, RequestBudget, message_text
from memory_action.review.limits import RequestTooLargeError
from tests.fakes.scripted_model import ScriptedChatModel, tool_call

LIMIT = 2_000


def _big_tool(chars: int) -> BaseTool:
    def read_file(path: str) -> str:
        return f"{path}:" + "x" * chars

    return StructuredTool.from_function(read_file, description="Read a file.")


def _run(
    model: ScriptedChatModel, tools: list[BaseTool], budget: RequestBudget, calls: int = 5
) -> str:
    outcome = run_agent(
        model,
        tools=tools,
        middleware=[LastCallAnswers(calls), budget],
        system_prompt="You review code.",
        task="Review it.",
        timeout_s=30,
        max_model_calls=calls,
    )
    return outcome.answer


def _request_tokens(estimator: TokenEstimator, model: ScriptedChatModel, call: int) -> int:
    messages = model.seen[call]
    return estimator.count_request("", [message_text(m) for m in messages])


def test_a_tool_result_is_cut_to_what_the_next_request_can_hold() -> None:
    estimator, cost = TokenEstimator(), Cost()
    budget = RequestBudget(limit=LIMIT, estimator=estimator, cost=cost)
    model = ScriptedChatModel.from_script(tool_call("read_file", {"path": "a.py"}), "Done.")
    assert _run(model, [_big_tool(50_000)], budget) == "Done."
    [result] = [m for m in model.seen[1] if isinstance(m, ToolMessage)]
    assert "[cut: the result has 50,005 characters; only the first" in str(result.content)
    assert _request_tokens(estimator, model, 1) <= LIMIT
    assert cost.model_calls == 2


def test_older_tool_results_make_way_for_newer_ones() -> None:
    estimator, cost = TokenEstimator(), Cost()
    budget = RequestBudget(limit=LIMIT, estimator=estimator, cost=cost)
    model = ScriptedChatModel.from_script(
        tool_call("read_file", {"path": "a.py"}),
        tool_call("read_file", {"path": "b.py"}),
        tool_call("read_file", {"path": "c.py"}),
        "Done.",
    )
    _run(model, [_big_tool(2_500)], budget)
    last = [str(m.content) for m in model.seen[3] if isinstance(m, ToolMessage)]
    assert last[0] == "[earlier result of read_file removed to fit]"
    assert last[-1].startswith("c.py:")
    for call in range(4):
        assert _request_tokens(estimator, model, call) <= LIMIT


def test_a_request_that_cannot_fit_is_never_sent() -> None:
    budget = RequestBudget(limit=LIMIT, estimator=TokenEstimator(), cost=Cost())
    model = ScriptedChatModel.from_script("Never used.")
    with pytest.raises(RequestTooLargeError, match="it was not sent"):
        run_agent(
            model,
            tools=[],
            middleware=[budget],
            system_prompt="x" * 10_000,
            task="Review it.",
            timeout_s=30,
        )
    assert model.calls == 0


class _ToolsSeen(AgentMiddleware[AgentState[Any], Any, Any]):
    def __init__(self) -> None:
        super().__init__()
        self.tools: list[int] = []

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        self.tools.append(len(request.tools))
        return handler(request)


def test_the_last_allowed_call_offers_no_tools() -> None:
    seen = _ToolsSeen()
    model = ScriptedChatModel.from_script(tool_call("read_file", {"path": "a.py"}), "Done.")
    outcome = run_agent(
        model,
        tools=[_big_tool(10)],
        middleware=[LastCallAnswers(2), seen],
        system_prompt="You review code.",
        task="Review it.",
        timeout_s=30,
        max_model_calls=2,
    )
    assert outcome.answer == "Done."
    assert seen.tools == [1, 0]


def test_usage_is_counted_and_calibrates_the_estimate() -> None:
    estimator, cost = TokenEstimator(), Cost()
    budget = RequestBudget(limit=LIMIT, estimator=estimator, cost=cost)
    answer = AIMessage(
        "Done.", usage_metadata={"input_tokens": 900, "output_tokens": 7, "total_tokens": 907}
    )
    model = ScriptedChatModel.from_script(answer)
    _run(model, [], budget)
    assert (cost.model_calls, cost.tokens_in, cost.tokens_out) == (1, 900, 7)
    assert estimator.factor > 1.0  # the provider counted far more than this tiny request
