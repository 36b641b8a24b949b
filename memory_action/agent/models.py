"""``Settings.model`` → a LangChain chat model, and LangSmith tracing kept off.

One function per provider; each passes an explicit key, ``timeout`` and a small ``max_retries`` so
a bad endpoint fails when the caller says, not after the SDK's 600 s default, and the profile's
output cap, so an answer stops there (a local model left uncapped writes on for thousands of
tokens). OpenAI-compatible servers get the cap as ``max_tokens``, which llama.cpp, Ollama and
vLLM read; OpenAI itself and GitHub Models get ``max_completion_tokens``, as LangChain sends it.
Nothing here counts tokens: ``ChatOpenAI.get_num_tokens*`` would load tiktoken, which downloads
its encoding on first use. LangChain is imported inside ``build_chat_model`` so
``disable_tracing`` stays cheap to call first.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

from memory_action.errors import AgentError
from memory_action.run.settings import API_KEY_VARIABLES, Settings, provider_api_key
from memory_action.store.secret import Secret

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

GITHUB_MODELS_URL = "https://models.github.ai/inference"
GITHUB_API_VERSION = "2022-11-28"
DEFAULT_MAX_RETRIES = 2

# Env vars that turn LangSmith tracing on; langsmith reads the *_V2 ones before LANGSMITH_TRACING.
_TRACING_SWITCHES = ("LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING")


def build_chat_model(
    settings: Settings,
    github_token: Secret,
    *,
    timeout_s: float,
    max_retries: int = DEFAULT_MAX_RETRIES,
    env: Mapping[str, str] | None = None,
) -> BaseChatModel:
    """The chat model ``settings.model`` names; AgentError naming the input if a key is missing.

    ``timeout_s`` bounds each HTTP call to the provider; ``env`` defaults to ``os.environ``.
    """
    from langchain.chat_models import init_chat_model  # noqa: PLC0415 - heavy, load on use

    env = os.environ if env is None else env
    spec = settings.model
    common: dict[str, Any] = {"timeout": timeout_s, "max_retries": max_retries}
    cap = settings.profile.output_tokens
    if spec.provider == "github":
        kwargs = {**_github_kwargs(settings, github_token), "max_tokens": cap}
    elif spec.provider == "openai":
        kwargs = _openai_kwargs(settings, env)
        if settings.model_base_url:
            kwargs["extra_body"] = {"max_tokens": cap}
        else:
            kwargs["max_tokens"] = cap
    elif spec.provider == "anthropic":
        kwargs = {**_anthropic_kwargs(settings, env), "max_tokens": cap}
    else:
        raise AgentError(
            f"Unknown model provider in model={spec}: use github, openai or anthropic."
        )
    provider = "anthropic" if spec.provider == "anthropic" else "openai"
    try:
        model: BaseChatModel = init_chat_model(
            spec.name, model_provider=provider, **kwargs, **common
        )
    except ImportError as exc:
        raise AgentError(f"model={spec} needs a package the action image lacks: {exc}") from exc
    return model


def _github_kwargs(settings: Settings, github_token: Secret) -> dict[str, Any]:
    """GitHub Models: OpenAI-compatible chat completions, authenticated by the workflow token."""
    if not github_token:
        raise AgentError(
            f"model={settings.model} needs a GitHub token: set the github_token input "
            "(the workflow token works with `permissions: models: read`)."
        )
    return {
        "base_url": settings.model_base_url or GITHUB_MODELS_URL,
        "api_key": github_token.reveal(),
        "use_responses_api": False,  # GitHub Models speaks chat completions only
        "default_headers": {"X-GitHub-Api-Version": GITHUB_API_VERSION},
    }


def _openai_kwargs(settings: Settings, env: Mapping[str, str]) -> dict[str, Any]:
    key = _api_key(settings, env, API_KEY_VARIABLES["openai"])
    kwargs: dict[str, Any] = {"api_key": key, "base_url": settings.model_base_url or None}
    if settings.model_base_url:
        # OpenAI-compatible servers speak chat completions, not the Responses API.
        kwargs["use_responses_api"] = False
    return kwargs


def _anthropic_kwargs(settings: Settings, env: Mapping[str, str]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"api_key": _api_key(settings, env, API_KEY_VARIABLES["anthropic"])}
    if settings.model_base_url:
        kwargs["base_url"] = settings.model_base_url
    return kwargs


def _api_key(settings: Settings, env: Mapping[str, str], env_name: str) -> str:
    key = provider_api_key(settings, env)
    if key:
        return key
    hint = " (any non-empty value if the server needs none)" if settings.model_base_url else ""
    raise AgentError(
        f"model={settings.model} needs an API key: set the model_api_key input{hint}, "
        f"e.g. model_api_key: ${{{{ secrets.{env_name} }}}}."
    )


def disable_tracing(env: MutableMapping[str, str] | None = None) -> bool:
    """Keep LangSmith tracing off unless the user asked for it; True when it stays on.

    Tracing stays on only with ``LANGSMITH_TRACING=true`` *and* a ``LANGSMITH_API_KEY``: anything
    else (a leaked ``LANGCHAIN_TRACING_V2``, a flag without a key) would make every run try to
    reach LangSmith and block at exit flushing traces.
    """
    env = os.environ if env is None else env
    wanted = env.get("LANGSMITH_TRACING", "").strip().lower() == "true"
    if wanted and env.get("LANGSMITH_API_KEY", "").strip():
        return True
    env["LANGSMITH_TRACING"] = "false"
    for name in _TRACING_SWITCHES:
        env.pop(name, None)
    _forget_cached_tracing_env()
    return False


def _forget_cached_tracing_env() -> None:
    """langsmith caches env lookups; clear the cache if it was already imported."""
    utils = sys.modules.get("langsmith.utils")
    get_env_var = getattr(utils, "get_env_var", None)
    cache_clear = getattr(get_env_var, "cache_clear", None)
    if callable(cache_clear):
        cache_clear()
