"""The real provider path: build_chat_model → ChatOpenAI → HTTP to a local stub → run_agent.

No test here leaves 127.0.0.1; retries are off (max_retries=0) so errors surface at once.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain_core.tools import BaseTool, tool

from memory_action.agent.models import GITHUB_API_VERSION, build_chat_model
from memory_action.agent.runner import AgentRunError, run_agent
from memory_action.run.settings import ModelSpec, Settings
from memory_action.store.secret import Secret
from tests.fakes.openai_stub import (
    HANG,
    ErrorReply,
    OpenAIStub,
    Reply,
    answer_reply,
    tool_call_reply,
)

SYSTEM = "You review pull requests."
TASK = "Review pull request #7 in octo/repo."


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@pytest.fixture(autouse=True)
def _no_ambient_config(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's OpenAI or LangSmith settings must not leak into these runs."""
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_API_BASE",
        "LANGSMITH_GATEWAY",
        "LANGSMITH_TRACING",
        "LANGSMITH_TRACING_V2",
        "LANGCHAIN_TRACING_V2",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def no_tiktoken(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """tiktoken downloads its encodings on first use: the agent must never reach it."""
    import tiktoken  # noqa: PLC0415 - patched only for these tests

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("tiktoken was used")

    monkeypatch.setattr(tiktoken, "get_encoding", refuse)
    monkeypatch.setattr(tiktoken, "encoding_for_model", refuse)
    yield


def _settings(model: str, base_url: str, api_key: str = "") -> Settings:
    provider, _, name = model.partition(":")
    return Settings(
        model=ModelSpec(provider=provider, name=name),
        model_base_url=base_url,
        model_api_key=Secret(api_key),
    )


def _run(stub_settings: Settings, token: str = "", tools: list[BaseTool] | None = None) -> str:
    model = build_chat_model(stub_settings, Secret(token), timeout_s=5, max_retries=0)
    outcome = run_agent(
        model,
        tools=[lookup] if tools is None else tools,
        middleware=[],
        system_prompt=SYSTEM,
        task=TASK,
        timeout_s=10,
        provider=stub_settings.model.provider,
    )
    assert outcome.finished
    return outcome.answer


def _two_step() -> list[Reply]:
    return [tool_call_reply("lookup", {"key": "style"}), answer_reply("Looks good.")]


@pytest.mark.usefixtures("no_tiktoken")
def test_openai_compatible_server_runs_a_tool_then_answers() -> None:
    with OpenAIStub(_two_step()) as stub:
        answer = _run(_settings("openai:my-model", stub.url("/v1"), api_key="sk-test"))
        first, second = stub.requests

    assert answer == "Looks good."
    assert first.path == second.path == "/v1/chat/completions"
    assert first.header("authorization") == "Bearer sk-test"
    assert first.body["model"] == "my-model"
    assert first.body["stream"] is False
    assert first.body["messages"][0] == {"role": "system", "content": SYSTEM}
    assert first.body["messages"][1] == {"role": "user", "content": TASK}
    assert [t["function"]["name"] for t in first.body["tools"]] == ["lookup"]
    tool_turn = second.body["messages"][-1]
    assert tool_turn == {"role": "tool", "tool_call_id": "call_1", "content": "value of style"}


@pytest.mark.usefixtures("no_tiktoken")
def test_github_models_uses_the_workflow_token_and_api_version() -> None:
    with OpenAIStub(_two_step()) as stub:
        settings = _settings("github:openai/gpt-4.1-mini", stub.url("/inference"))
        answer = _run(settings, token="ghs_workflowtoken")
        first = stub.requests[0]

    assert answer == "Looks good."
    assert first.path == "/inference/chat/completions"
    assert first.header("authorization") == "Bearer ghs_workflowtoken"
    assert first.header("x-github-api-version") == GITHUB_API_VERSION
    assert first.body["model"] == "openai/gpt-4.1-mini"
    assert first.body["messages"][0] == {"role": "system", "content": SYSTEM}
    assert [t["function"]["name"] for t in first.body["tools"]] == ["lookup"]


def test_the_env_key_is_used_when_the_input_is_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    with OpenAIStub([answer_reply("Fine.")]) as stub:
        assert _run(_settings("openai:m", stub.url("/v1")), tools=[]) == "Fine."
        assert stub.requests[0].header("authorization") == "Bearer sk-from-env"


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (401, "`permissions: models: read`"),
        (403, "`permissions: models: read`"),
        (404, "does not know the model 'openai/no-such-model' (HTTP 404)"),
        (429, "rate limiting"),
        (500, "HTTP 500: boom"),
    ],
)
def test_github_models_errors_become_one_clear_line(status: int, expected: str) -> None:
    with OpenAIStub([ErrorReply(status, "boom")]) as stub:
        settings = _settings("github:openai/no-such-model", stub.url("/inference"))
        with pytest.raises(AgentRunError) as caught:
            _run(settings, token="ghs_x")
        assert len(stub.requests) == 1  # max_retries=0: no second attempt

    assert expected in str(caught.value)
    assert "\n" not in str(caught.value)
    assert caught.value.outcome.stop_reason == "model_error"
    assert "ghs_x" not in str(caught.value)


def test_openai_auth_error_names_model_api_key() -> None:
    with (
        OpenAIStub([ErrorReply(401, "Incorrect API key provided")]) as stub,
        pytest.raises(AgentRunError, match="model_api_key"),
    ):
        _run(_settings("openai:m", stub.url("/v1"), api_key="sk-bad"))


def test_a_server_that_hangs_hits_the_request_timeout() -> None:
    with OpenAIStub([HANG]) as stub:
        model = build_chat_model(
            _settings("openai:m", stub.url("/v1"), api_key="k"),
            Secret(""),
            timeout_s=0.3,
            max_retries=0,
        )
        with pytest.raises(AgentRunError, match="did not answer in time"):
            run_agent(model, tools=[], middleware=[], system_prompt=SYSTEM, task=TASK, timeout_s=10)


def test_a_server_that_hangs_past_the_run_timeout_stops_the_run_promptly() -> None:
    with OpenAIStub([HANG]) as stub:
        model = build_chat_model(
            _settings("openai:m", stub.url("/v1"), api_key="k"),
            Secret(""),
            timeout_s=20,
            max_retries=0,
        )
        with pytest.raises(AgentRunError, match="timeout_minutes") as caught:
            run_agent(
                model, tools=[], middleware=[], system_prompt=SYSTEM, task=TASK, timeout_s=0.3
            )
    assert caught.value.outcome.stop_reason == "timeout"


def test_nothing_listening_is_a_connection_error() -> None:
    with OpenAIStub() as stub:
        url = stub.url("/v1")
    model = build_chat_model(
        _settings("openai:m", url, api_key="k"), Secret(""), timeout_s=2, max_retries=0
    )
    with pytest.raises(AgentRunError, match="Could not reach the model provider"):
        run_agent(model, tools=[], middleware=[], system_prompt=SYSTEM, task=TASK, timeout_s=10)
