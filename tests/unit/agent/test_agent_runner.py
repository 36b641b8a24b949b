"""run_agent with a scripted model: answers, nonsense, limits, timeouts and provider errors."""

from __future__ import annotations

import itertools
import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest
from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain_core.exceptions import (
    ModelAuthenticationError,
    ModelConnectionError,
    ModelNotFoundError,
    ModelPermissionDeniedError,
    ModelRateLimitError,
    ModelTimeoutError,
)
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool
from pydantic import Field

from memory_action.agent.runner import (
    AgentOutcome,
    AgentRunError,
    RunGuard,
    describe_model_error,
    run_agent,
)
from memory_action.errors import AgentError, MemoryFileError
from memory_action.local.words import cli_words
from tests.fakes.scripted_model import ScriptedChatModel, tool_call

SYSTEM = "You review pull requests."
TASK = "Review pull request #7."


class Recorder:
    def __init__(self) -> None:
        self.calls: list[str] = []


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


def _tools(recorder: Recorder) -> list[Any]:
    @tool
    def ping(x: int) -> str:
        """Answer pong."""
        recorder.calls.append(f"ping {x}")
        if x < 0:
            raise ValueError("x must not be negative")
        return f"pong {x}"

    @tool
    def slow(seconds: float) -> str:
        """Take a while, then record a write."""
        time.sleep(seconds)
        recorder.calls.append("slow finished")
        return "done"

    return [ping, slow]


def _run(model: Any, recorder: Recorder, **kwargs: Any) -> AgentOutcome:
    options: dict[str, Any] = {
        "tools": _tools(recorder),
        "middleware": [],
        "system_prompt": SYSTEM,
        "task": TASK,
        "timeout_s": 10,
    }
    options.update(kwargs)
    return run_agent(model, **options)


def _tool_messages(model: ScriptedChatModel) -> list[ToolMessage]:
    return [m for m in model.seen[-1] if isinstance(m, ToolMessage)]


class BlockingModel(ScriptedChatModel):
    """Blocks each call until ``release`` is set, then answers from the script."""

    release: Any = Field(default_factory=threading.Event)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.release.wait(10)
        return super()._generate(messages, *args, **kwargs)


class FailingModel(ScriptedChatModel):
    """Raises ``error`` on every call."""

    error: Any = None

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        raise self.error


class StatusError(Exception):
    """An HTTP error of some other client: only ``status_code`` tells what it is."""

    def __init__(self, status_code: int) -> None:
        super().__init__(f"Error code: {status_code} - nope")
        self.status_code = status_code


def test_a_plain_answer(recorder: Recorder) -> None:
    model = ScriptedChatModel.from_script("LGTM: one small nit.")

    outcome = _run(model, recorder)

    assert outcome == AgentOutcome(
        answer="LGTM: one small nit.",
        model_calls=1,
        tool_calls=0,
        finished=True,
        stop_reason="answer",
    )
    assert model.system_prompts == [SYSTEM]
    assert model.bound_tools == ["ping", "slow"]
    assert model.seen[0][1].text == TASK


def test_a_tool_call_then_an_answer(recorder: Recorder) -> None:
    model = ScriptedChatModel.from_script(tool_call("ping", {"x": 1}), "Done.")

    outcome = _run(model, recorder)

    assert (outcome.answer, outcome.model_calls, outcome.tool_calls) == ("Done.", 2, 1)
    assert recorder.calls == ["ping 1"]
    assert [m.text for m in _tool_messages(model)] == ["pong 1"]


def test_nonsense_from_the_model_becomes_error_tool_messages(recorder: Recorder) -> None:
    model = ScriptedChatModel.from_script(
        tool_call("no_such_tool", {}),
        tool_call("ping", {"wrong": "args"}),
        tool_call("ping", {"x": -1}),  # the tool raises
        "Reviewed anyway.",
    )

    outcome = _run(model, recorder)

    assert outcome.finished
    assert outcome.answer == "Reviewed anyway."
    errors = _tool_messages(model)
    assert [m.status for m in errors] == ["error", "error", "error"]
    assert "no_such_tool is not a valid tool" in errors[0].text
    assert "Field required" in errors[1].text
    assert errors[2].text == "Error: ping failed: ValueError: x must not be negative"


def test_endless_tool_calls_stop_at_the_limit(recorder: Recorder) -> None:
    endless = (tool_call("ping", {"x": i}) for i in itertools.count())
    model = ScriptedChatModel(messages=endless)

    with pytest.raises(AgentRunError, match="kept calling tools") as caught:
        _run(model, recorder, max_model_calls=3)

    assert "3 model calls" in str(caught.value)
    assert caught.value.outcome == AgentOutcome(
        answer="", model_calls=3, tool_calls=3, finished=False, stop_reason="call_limit"
    )
    assert isinstance(caught.value, AgentError)


class NoisyMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Adds graph nodes around every model call, as the memory middleware may."""

    def before_model(self, state: AgentState[Any], runtime: Any) -> None:
        return None

    def after_model(self, state: AgentState[Any], runtime: Any) -> None:
        return None


def test_the_default_limit_ends_before_the_recursion_limit(recorder: Recorder) -> None:
    endless = (tool_call("ping", {"x": i}) for i in itertools.count())
    model = ScriptedChatModel(messages=endless)

    with pytest.raises(AgentRunError) as caught:
        _run(model, recorder, middleware=[NoisyMiddleware()])

    assert caught.value.outcome.stop_reason == "call_limit"
    assert caught.value.outcome.model_calls == 25


def test_a_model_that_blocks_times_out_promptly(recorder: Recorder) -> None:
    model = BlockingModel.from_script(tool_call("ping", {"x": 1}), "late")
    started = time.monotonic()

    with pytest.raises(
        AgentRunError, match=r"in the 0 s the run had left of the timeout_minutes input"
    ) as caught:
        _run(model, recorder, timeout_s=0.3)

    assert time.monotonic() - started < 2
    assert caught.value.outcome.stop_reason == "timeout"
    # Readable, and in the CLI's words there: no "timeout_minutes=0.005".
    assert caught.value.in_words(cli_words) == (
        "The agent did not finish in the 0 s the run had left of --timeout-minutes; raise "
        "--timeout-minutes or use a faster model."
    )
    model.release.set()  # the late answer asks for a tool: it must not run
    time.sleep(0.2)
    assert recorder.calls == []


def test_a_tool_running_at_the_deadline_finishes_before_the_error(recorder: Recorder) -> None:
    """The deadline passes while a tool writes (the injected clock jumps while the run is
    waited for): the write finishes, nothing after it runs, whatever the machine's load."""
    started, release, now = threading.Event(), threading.Event(), [0.0]

    @tool
    def write(x: int) -> str:
        """Record a write, once released."""
        started.set()
        release.wait(10)
        recorder.calls.append("write finished")
        return "done"

    def join(_thread: threading.Thread, _timeout: float) -> None:
        assert started.wait(10)
        now[0] = 100.0  # past the deadline, with the write under way
        release.set()

    tools = [write, *_tools(recorder)]
    model = ScriptedChatModel.from_script(
        tool_call("write", {"x": 1}), tool_call("ping", {"x": 2}), "never"
    )

    with pytest.raises(AgentRunError, match="timeout_minutes"):
        _run(model, recorder, tools=tools, timeout_s=10, clock=lambda: now[0], join=join)

    assert recorder.calls == ["write finished"]


@pytest.mark.parametrize(
    "error",
    [ModelAuthenticationError("Bad credentials"), StatusError(401), StatusError(403)],
)
def test_a_rejected_token_names_the_models_permission(recorder: Recorder, error: Exception) -> None:
    model = FailingModel(messages=iter([]), error=error)

    with pytest.raises(AgentRunError, match=r"`permissions: models: read`") as caught:
        _run(model, recorder, provider="github")

    assert caught.value.outcome.stop_reason == "model_error"
    assert caught.value.__cause__ is error


def test_an_empty_final_answer_is_an_error(recorder: Recorder) -> None:
    model = ScriptedChatModel.from_script("   ")

    with pytest.raises(AgentRunError, match="without an answer") as caught:
        _run(model, recorder)

    assert caught.value.outcome.stop_reason == "empty_answer"


def test_a_non_text_final_answer_is_an_error(recorder: Recorder) -> None:
    reasoning_only = AIMessage(content=[{"type": "reasoning", "reasoning": "hmm"}])
    model = ScriptedChatModel.from_script(reasoning_only)

    with pytest.raises(AgentRunError, match="without an answer"):
        _run(model, recorder)


def test_a_script_that_runs_out_is_a_model_error(recorder: Recorder) -> None:
    model = ScriptedChatModel.from_script(tool_call("ping", {"x": 1}))

    with pytest.raises(AgentRunError, match="The model call failed: AssertionError"):
        _run(model, recorder)


class BrokenMemory(AgentMiddleware[AgentState[Any], Any, Any]):
    def before_agent(self, state: AgentState[Any], runtime: Any) -> None:
        raise MemoryFileError("memory/AGENTS.md is not UTF-8")


def test_our_own_errors_pass_through_unchanged(recorder: Recorder) -> None:
    model = ScriptedChatModel.from_script("unused")

    with pytest.raises(MemoryFileError, match="not UTF-8"):
        _run(model, recorder, middleware=[BrokenMemory()])


class CountingMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    def __init__(self) -> None:
        super().__init__()
        self.tool_names: list[str] = []

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        self.tool_names.append(request.tool_call["name"])
        return handler(request)


def test_caller_middleware_sees_the_tool_calls(recorder: Recorder) -> None:
    model = ScriptedChatModel.from_script(tool_call("ping", {"x": 5}), "ok")
    counting = CountingMiddleware()

    _run(model, recorder, middleware=[counting])

    assert counting.tool_names == ["ping"]


@pytest.mark.parametrize(
    ("error", "provider", "expected"),
    [
        (ModelAuthenticationError("x"), "github", "(HTTP 401): the workflow needs `permissions"),
        (ModelPermissionDeniedError("x"), "github", "(HTTP 403)"),
        (ModelAuthenticationError("x"), "openai", "check the model_api_key input."),
        (ModelAuthenticationError("x"), "", "`permissions: models: read`; for openai"),
        (ModelNotFoundError("x"), "github", "does not know the model 'gpt-x' (HTTP 404)"),
        (StatusError(404), "", "does not know the model 'gpt-x'"),
        (ModelRateLimitError("slow down"), "", "rate limiting this token (HTTP 429): slow down"),
        (ModelTimeoutError("Request timed out."), "", "did not answer in time"),
        (ModelConnectionError("refused"), "", "Could not reach the model provider"),
        (StatusError(502), "", "answered HTTP 502: nope"),
        (KeyError("choices"), "", "The model call failed: KeyError: 'choices'"),
    ],
)
def test_model_errors_read_as_one_line(error: Exception, provider: str, expected: str) -> None:
    text = describe_model_error(error, "gpt-x", provider)

    assert expected in text
    assert "\n" not in text


def test_multi_line_provider_messages_keep_their_first_line() -> None:
    text = describe_model_error(StatusError(500), "m")
    assert text == "The model provider answered HTTP 500: nope"


def _request(name: str = "ping") -> Any:
    return SimpleNamespace(tool_call={"name": name, "id": "call_9", "args": {}})


def test_the_guard_refuses_tools_after_the_deadline() -> None:
    now = [100.0]
    guard = RunGuard(5, clock=lambda: now[0])
    ran: list[str] = []

    def handler(request: Any) -> ToolMessage:
        ran.append(request.tool_call["name"])
        return ToolMessage("ok", tool_call_id="call_9")

    assert guard.wrap_tool_call(_request(), handler).text == "ok"
    now[0] = 105.0
    refused = guard.wrap_tool_call(_request(), handler)

    assert isinstance(refused, ToolMessage)
    assert refused.status == "error"
    assert "time limit" in refused.text
    assert ran == ["ping"]
    assert guard.tool_calls == 1


def test_cancel_and_drain_waits_for_a_running_tool() -> None:
    guard = RunGuard(60)
    entered, finish = threading.Event(), threading.Event()

    def handler(request: Any) -> ToolMessage:
        entered.set()
        finish.wait(5)
        return ToolMessage("ok", tool_call_id="call_9")

    worker = threading.Thread(target=guard.wrap_tool_call, args=(_request(), handler))
    worker.start()
    entered.wait(5)

    assert guard.cancel_and_drain(grace_s=0.05) is False  # still running
    finish.set()
    assert guard.cancel_and_drain(grace_s=5) is True
    assert guard.expired
    worker.join(5)
