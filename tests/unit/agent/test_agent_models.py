"""build_chat_model (construction only, no network) and disable_tracing."""

from __future__ import annotations

import os

import pytest
from langchain_anthropic import ChatAnthropic
from langchain_openai import ChatOpenAI

from memory_action.agent.models import (
    GITHUB_API_VERSION,
    GITHUB_MODELS_URL,
    build_chat_model,
    disable_tracing,
)
from memory_action.errors import AgentError
from memory_action.run.settings import ModelSpec, Settings
from memory_action.store.secret import Secret

NO_ENV: dict[str, str] = {}


@pytest.fixture(autouse=True)
def _no_ambient_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    # The SDKs read these themselves; a developer's settings must not change what is asserted.
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "ANTHROPIC_API_URL", "LANGSMITH_GATEWAY"):
        monkeypatch.delenv(name, raising=False)


def _settings(model: str, *, base_url: str = "", api_key: str = "") -> Settings:
    provider, _, name = model.partition(":")
    return Settings(
        model=ModelSpec(provider=provider, name=name),
        model_base_url=base_url,
        model_api_key=Secret(api_key),
    )


def _openai(settings: Settings, token: str = "", env: dict[str, str] = NO_ENV) -> ChatOpenAI:
    model = build_chat_model(settings, Secret(token), timeout_s=30, env=env)
    assert isinstance(model, ChatOpenAI)
    return model


def _anthropic(settings: Settings, env: dict[str, str] = NO_ENV) -> ChatAnthropic:
    model = build_chat_model(settings, Secret(""), timeout_s=30, max_retries=1, env=env)
    assert isinstance(model, ChatAnthropic)
    return model


def _key(model: ChatOpenAI) -> str:
    assert model.openai_api_key is not None
    return model.openai_api_key.get_secret_value()


def test_github_models_defaults() -> None:
    model = _openai(_settings("github:openai/gpt-4.1-mini"), token="ghs_token")

    assert model.model_name == "openai/gpt-4.1-mini"
    assert model.openai_api_base == GITHUB_MODELS_URL == "https://models.github.ai/inference"
    assert _key(model) == "ghs_token"
    assert model.use_responses_api is False
    assert model.default_headers == {"X-GitHub-Api-Version": GITHUB_API_VERSION}
    assert model.request_timeout == 30
    assert model.max_retries == 2


def test_github_models_base_url_can_be_overridden() -> None:
    settings = _settings("github:openai/gpt-4.1", base_url="http://proxy.test/inference")

    assert _openai(settings, token="t").openai_api_base == "http://proxy.test/inference"


def test_github_models_without_a_token() -> None:
    with pytest.raises(AgentError, match="set the github_token input") as caught:
        build_chat_model(_settings("github:openai/gpt-4.1"), Secret(""), timeout_s=30, env=NO_ENV)

    assert "models: read" in str(caught.value)


def test_openai_with_the_input_key() -> None:
    model = _openai(_settings("openai:gpt-4.1", api_key="sk-input"), env={"OPENAI_API_KEY": "x"})

    assert model.model_name == "gpt-4.1"
    assert _key(model) == "sk-input"
    assert model.openai_api_base is None
    assert model.use_responses_api is None  # the real OpenAI API: let ChatOpenAI decide


def test_openai_falls_back_to_the_env_key() -> None:
    model = _openai(_settings("openai:gpt-4.1"), env={"OPENAI_API_KEY": "sk-env"})

    assert _key(model) == "sk-env"


def test_an_openai_compatible_server_uses_chat_completions() -> None:
    settings = _settings("openai:llama3", base_url="http://localhost:8000/v1", api_key="k")
    model = _openai(settings)

    assert model.openai_api_base == "http://localhost:8000/v1"
    assert model.use_responses_api is False


@pytest.mark.parametrize(
    ("model", "base_url", "env_name"),
    [
        ("openai:gpt-4.1", "", "OPENAI_API_KEY"),
        ("openai:llama3", "http://localhost:8000/v1", "OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4-5", "", "ANTHROPIC_API_KEY"),
    ],
)
def test_a_missing_key_names_the_input(model: str, base_url: str, env_name: str) -> None:
    with pytest.raises(AgentError, match="set the model_api_key input") as caught:
        build_chat_model(_settings(model, base_url=base_url), Secret(""), timeout_s=5, env=NO_ENV)

    message = str(caught.value)
    assert "\n" not in message
    assert f"secrets.{env_name}" in message
    assert ("any non-empty value" in message) == bool(base_url)


def test_anthropic_construction() -> None:
    model = _anthropic(_settings("anthropic:claude-sonnet-4-5", api_key="sk-ant-input"))

    assert model.model == "claude-sonnet-4-5"
    assert model.anthropic_api_key.get_secret_value() == "sk-ant-input"
    assert model.default_request_timeout == 30
    assert model.max_retries == 1


def test_anthropic_with_env_key_and_base_url() -> None:
    settings = _settings("anthropic:claude-haiku-4-5", base_url="http://gateway.test")
    model = _anthropic(settings, env={"ANTHROPIC_API_KEY": "sk-ant-env"})

    assert model.anthropic_api_key.get_secret_value() == "sk-ant-env"
    assert model.anthropic_api_url == "http://gateway.test"


def test_keys_never_show_in_errors() -> None:
    with pytest.raises(AgentError) as caught:
        build_chat_model(_settings("github:openai/x"), Secret(""), timeout_s=5, env=NO_ENV)

    assert "Secret" not in str(caught.value)


# --- tracing ---------------------------------------------------------------------------------


def test_tracing_is_forced_off_by_default() -> None:
    env: dict[str, str] = {}

    assert disable_tracing(env) is False
    assert env == {"LANGSMITH_TRACING": "false"}


@pytest.mark.parametrize(
    "leaked",
    [
        {"LANGCHAIN_TRACING_V2": "true"},
        {"LANGSMITH_TRACING_V2": "true", "LANGCHAIN_TRACING": "true"},
        {"LANGSMITH_TRACING": "true"},  # asked for, but no key to send with
        {"LANGSMITH_TRACING": "true", "LANGSMITH_API_KEY": "  "},
        {"LANGSMITH_TRACING": "1", "LANGSMITH_API_KEY": "lsv2_x"},
    ],
)
def test_leaked_or_incomplete_tracing_settings_are_turned_off(leaked: dict[str, str]) -> None:
    env = dict(leaked)

    assert disable_tracing(env) is False
    assert env["LANGSMITH_TRACING"] == "false"
    assert not {"LANGCHAIN_TRACING_V2", "LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING"} & set(env)


def test_tracing_the_user_asked_for_stays_on() -> None:
    env = {"LANGSMITH_TRACING": "True", "LANGSMITH_API_KEY": "lsv2_key"}

    assert disable_tracing(env) is True
    assert env == {"LANGSMITH_TRACING": "True", "LANGSMITH_API_KEY": "lsv2_key"}


def test_langsmith_sees_the_change_even_after_it_cached_the_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from langsmith import utils  # noqa: PLC0415 - only this test needs it

    monkeypatch.setenv("LANGCHAIN_TRACING_V2", "true")
    monkeypatch.setenv("LANGSMITH_TRACING", "")
    monkeypatch.delenv("LANGSMITH_TRACING_V2", raising=False)
    utils.get_env_var.cache_clear()
    assert utils.tracing_is_enabled() is True  # now cached

    disable_tracing(os.environ)

    assert utils.tracing_is_enabled() is False
    utils.get_env_var.cache_clear()  # monkeypatch restores the env; do not leave a stale cache


def test_every_model_is_capped_at_the_profile_s_output_tokens() -> None:
    github = _openai(_settings("github:openai/gpt-4.1-mini"), token="ghs_token")
    hosted = _openai(_settings("openai:gpt-4.1-mini", api_key="sk-x"))
    local = _openai(
        _settings("openai:qwen2.5-coder", base_url="http://127.0.0.1:8080/v1", api_key="x")
    )
    claude = _anthropic(_settings("anthropic:claude-sonnet-4-5", api_key="sk-ant-x"))

    assert github.max_tokens == 4000  # GitHub Models' free tier
    assert hosted.max_tokens == 32768
    # OpenAI-compatible servers read max_tokens (LangChain would send max_completion_tokens).
    assert (local.max_tokens, local.extra_body) == (None, {"max_tokens": 2000})
    assert claude.max_tokens == 8192
