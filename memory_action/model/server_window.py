"""Ask an OpenAI-compatible server how large its model's window is, when the user gave no limit.

- llama.cpp (``llama-server``): ``GET <base>/models`` answers each model with ``meta.n_ctx``, the
  context the server runs with; builds whose ``meta`` lacks it answer ``GET /props`` with
  ``default_generation_settings.n_ctx`` (``meta.n_ctx_train`` is what the model was trained on,
  not what the server gives a request, so it is not used).
- vLLM: the same ``GET <base>/models`` answers each model with ``max_model_len``.
- Ollama: ``POST /api/show`` with the model's name answers ``parameters`` (``num_ctx N`` when the
  Modelfile sets it) and ``model_info`` (``<architecture>.context_length``, what the model takes).
  Ollama serves a model with less unless told (``OLLAMA_CONTEXT_LENGTH``, by default 4k to 256k
  by the machine's memory), so a loaded model's ``context_length`` in ``GET /api/ps``, what the
  server gave it, comes before the model's own length.

The answers are untrusted: each is parsed into a pydantic model, and anything else (no server
there, another server, an error, a value out of range) is no answer: the profile's guess stays
and the log says so. Each question waits at most ``TIMEOUT_S``.
"""

from __future__ import annotations

import re
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx
import pydantic

from memory_action.model.profile import ServedWindow

TIMEOUT_S = 5.0
WINDOW_TOKENS = (512, 10_000_000)  # a window outside this is a server's mistake, not a limit
AnswerT = TypeVar("AnswerT", bound="_Answer")
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d{1,9})\s*$", re.M)


class _Answer(pydantic.BaseModel):
    """Every answer's model ignores what it does not need (servers add fields freely)."""

    model_config = pydantic.ConfigDict(extra="ignore")


class _LlamaMeta(_Answer):
    n_ctx: int | None = None


class _ListedModel(_Answer):
    id: str = ""
    meta: _LlamaMeta | None = None  # llama.cpp
    max_model_len: int | None = None  # vLLM


class _ModelList(_Answer):
    data: list[_ListedModel] = []


class _SlotSettings(_Answer):
    n_ctx: int | None = None


class _Props(_Answer):
    default_generation_settings: _SlotSettings | None = None


class _OllamaShow(_Answer):
    parameters: str = ""
    model_info: dict[str, object] = {}


class _LoadedModel(_Answer):
    name: str = ""
    model: str = ""
    context_length: int | None = None


class _OllamaRunning(_Answer):
    models: list[_LoadedModel] = []


def served_window(model: str, base_url: str, api_key: str = "") -> ServedWindow | None:
    """The window the server at ``base_url`` says ``model`` has; None when it does not say."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    with httpx.Client(timeout=TIMEOUT_S, follow_redirects=False) as http:
        for ask in (_llama_models, _llama_props, _ollama_show):
            found = ask(http, model, base_url.rstrip("/"), headers)
            if found is not None:
                return found
    return None


def _llama_models(
    http: httpx.Client, model: str, base: str, headers: dict[str, str]
) -> ServedWindow | None:
    listed = _get(http, f"{base}/models", headers, _ModelList)
    if listed is None:
        return None
    # llama-server lists the one model it serves, whatever name the request gives it.
    named = [m for m in listed.data if m.id == model] or (
        listed.data[:1] if len(listed.data) == 1 else []
    )
    for entry in named:
        tokens = entry.meta.n_ctx if entry.meta is not None else None
        if _plausible(tokens):
            return ServedWindow(
                tokens=tokens or 0, origin=f"llama.cpp GET /v1/models meta.n_ctx {tokens:,}"
            )
        if _plausible(entry.max_model_len):
            tokens = entry.max_model_len
            return ServedWindow(
                tokens=tokens or 0, origin=f"vLLM GET /v1/models max_model_len {tokens:,}"
            )
    return None


def _llama_props(
    http: httpx.Client, model: str, base: str, headers: dict[str, str]
) -> ServedWindow | None:
    props = _get(http, f"{_origin(base)}/props", headers, _Props)
    settings = props.default_generation_settings if props is not None else None
    tokens = settings.n_ctx if settings is not None else None
    if not _plausible(tokens):
        return None
    return ServedWindow(tokens=tokens or 0, origin=f"llama.cpp GET /props n_ctx {tokens:,}")


def _ollama_show(
    http: httpx.Client, model: str, base: str, headers: dict[str, str]
) -> ServedWindow | None:
    try:
        response = http.post(f"{_origin(base)}/api/show", json={"model": model}, headers=headers)
        shown = _parsed(response, _OllamaShow)
    except httpx.HTTPError:
        return None
    if shown is None:
        return None
    configured = _NUM_CTX.search(shown.parameters)
    if configured is not None and _plausible(int(configured.group(1))):
        tokens = int(configured.group(1))
        return ServedWindow(
            tokens=tokens, origin=f"Ollama POST /api/show parameters num_ctx {tokens:,}"
        )
    running = _get(http, f"{_origin(base)}/api/ps", headers, _OllamaRunning)
    for loaded in running.models if running is not None else []:
        if model in (loaded.name, loaded.model) and _plausible(loaded.context_length):
            tokens = loaded.context_length or 0
            return ServedWindow(
                tokens=tokens, origin=f"Ollama GET /api/ps context_length {tokens:,}"
            )
    architecture = shown.model_info.get("general.architecture")
    length = shown.model_info.get(f"{architecture}.context_length")
    if isinstance(architecture, str) and isinstance(length, int) and _plausible(length):
        return ServedWindow(
            tokens=length,
            origin=f"Ollama POST /api/show model_info {architecture}.context_length {length:,}",
        )
    return None


def _get(
    http: httpx.Client, url: str, headers: dict[str, str], shape: type[AnswerT]
) -> AnswerT | None:
    try:
        return _parsed(http.get(url, headers=headers), shape)
    except httpx.HTTPError:
        return None


def _parsed(response: httpx.Response, shape: type[AnswerT]) -> AnswerT | None:
    if response.status_code != 200:
        return None
    try:
        return shape.model_validate_json(response.content)
    except pydantic.ValidationError:
        return None


def _plausible(tokens: int | None) -> bool:
    return tokens is not None and WINDOW_TOKENS[0] <= tokens <= WINDOW_TOKENS[1]


def _origin(base: str) -> str:
    """``http://host:port`` of a base URL such as ``http://host:port/v1``."""
    parts = urlsplit(base)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))
