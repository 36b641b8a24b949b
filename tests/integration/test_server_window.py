"""The model's window from its server, the output cap and the request timeout, over real HTTP.

The servers are the OpenAI-compatible stub on 127.0.0.1 answering what llama.cpp and Ollama
document (``tests/fakes/model_servers``); the chat model is the real ``ChatOpenAI``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI

from memory_action.main import model_factory
from memory_action.model.profile import ServedWindow
from memory_action.model.server_window import served_window
from memory_action.run.settings import parse_settings
from tests.fakes.git_repo import GitRepo
from tests.fakes.model_servers import (
    LLAMA_CPP,
    LLAMA_CPP_OLDER,
    LLAMA_MODEL_ID,
    OLLAMA_DEFAULTS,
    OLLAMA_LOADED,
    OLLAMA_MODEL,
    OLLAMA_NUM_CTX,
    llama_cpp_meta,
)
from tests.fakes.openai_stub import OpenAIStub, answer_reply
from tests.integration.test_review_local import repo, review_local

__all__ = ["repo"]  # the fixture, used by name below

LOCAL_MODEL = "openai:qwen2.5-coder-1.5b"


def ask(routes: dict[str, Any], model: str = LLAMA_MODEL_ID, key: str = "") -> ServedWindow | None:
    with OpenAIStub(routes=routes) as stub:
        return served_window(model, stub.url("/v1"), key)


def test_llama_cpp_says_its_window_in_the_model_list() -> None:
    found = ask(LLAMA_CPP, model="any-name")  # llama-server serves its one model by any name
    assert found == ServedWindow(tokens=16384, origin="llama.cpp GET /v1/models meta.n_ctx 16,384")


def test_vllm_says_its_window_in_the_model_list() -> None:
    # vLLM's docs ("OpenAI-Compatible Server"): each model of GET /v1/models has max_model_len.
    listed = {
        "object": "list",
        "data": [
            {
                "id": "Qwen/Qwen2.5-Coder-1.5B-Instruct",
                "object": "model",
                "created": 1700000000,
                "owned_by": "vllm",
                "root": "Qwen/Qwen2.5-Coder-1.5B-Instruct",
                "parent": None,
                "max_model_len": 32768,
                "permission": [],
            },
        ],
    }
    found = ask({"GET /v1/models": listed}, model="Qwen/Qwen2.5-Coder-1.5B-Instruct")
    assert found == ServedWindow(tokens=32768, origin="vLLM GET /v1/models max_model_len 32,768")


def test_an_older_llama_cpp_says_it_in_props_and_the_training_length_is_not_taken() -> None:
    found = ask(LLAMA_CPP_OLDER)
    assert found == ServedWindow(tokens=8192, origin="llama.cpp GET /props n_ctx 8,192")


def test_ollama_says_the_num_ctx_its_modelfile_sets() -> None:
    with OpenAIStub(routes=OLLAMA_NUM_CTX) as stub:
        found = served_window(OLLAMA_MODEL, stub.url("/v1"))
        [show] = [r for r in stub.other_requests if r.path == "/api/show"]
    assert found == ServedWindow(
        tokens=16384, origin="Ollama POST /api/show parameters num_ctx 16,384"
    )
    assert show.method == "POST"
    assert show.body == {"model": OLLAMA_MODEL}


def test_ollama_says_the_window_it_gave_the_loaded_model_before_the_model_s_own() -> None:
    found = ask(OLLAMA_LOADED, model=OLLAMA_MODEL)
    assert found == ServedWindow(tokens=16384, origin="Ollama GET /api/ps context_length 16,384")


def test_ollama_without_num_ctx_says_the_model_s_context_length() -> None:
    found = ask(OLLAMA_DEFAULTS, model=OLLAMA_MODEL)
    assert found == ServedWindow(
        tokens=32768, origin="Ollama POST /api/show model_info qwen2.context_length 32,768"
    )


def test_the_server_s_key_goes_with_the_question() -> None:
    with OpenAIStub(routes=LLAMA_CPP) as stub:
        served_window(LLAMA_MODEL_ID, stub.url("/v1"), "sk-local")
        assert stub.other_requests[0].header("authorization") == "Bearer sk-local"


@pytest.mark.parametrize(
    "routes",
    [
        {},  # a server that has none of these endpoints
        {"GET /v1/models": ["not", "an", "object"]},
        {"GET /v1/models": {"data": "everything"}},
        {"GET /v1/models": llama_cpp_meta(n_ctx="16384 tokens")},
        {"GET /v1/models": llama_cpp_meta(n_ctx=-1)},
        {"GET /v1/models": llama_cpp_meta(n_ctx=10**12)},
        {"GET /props": {"default_generation_settings": {"n_ctx": [16384]}}},
        {"POST /api/show": {"parameters": "num_ctx lots", "model_info": {"x.context_length": 9}}},
        {"POST /api/show": {"model_info": {"general.architecture": "qwen2"}}},
        {"POST /api/show": "num_ctx 16384"},
    ],
)
def test_an_answer_of_another_shape_is_no_answer(routes: dict[str, Any]) -> None:
    assert ask(routes) is None


def test_no_server_at_all_is_no_answer() -> None:
    with OpenAIStub() as stub:
        url = stub.url("/v1")
    assert served_window(LLAMA_MODEL_ID, url) is None  # the port is closed now


def test_settings_ask_only_when_neither_the_user_nor_the_table_says() -> None:
    asked: list[str] = []

    def server(model: str, base_url: str, key: str) -> ServedWindow:
        asked.append(model)
        return ServedWindow(tokens=16384, origin="llama.cpp GET /v1/models meta.n_ctx 16,384")

    local = {"INPUT_MODEL": LOCAL_MODEL, "INPUT_MODEL_BASE_URL": "http://127.0.0.1:1/v1"}
    settings = parse_settings(local, ask_server=server)
    assert (settings.profile.input_tokens, settings.profile.output_tokens) == (14384, 2000)
    assert "the server's window: llama.cpp GET /v1/models meta.n_ctx 16,384" in (
        settings.profile.describe()
    )
    assert settings.max_memory_kb == 16  # auto: the window leaves room for the full budget
    # The user's limit wins, a known model needs no question, nor a model without a server.
    given = parse_settings({**local, "INPUT_MAX_INPUT_TOKENS": "12000"}, ask_server=server)
    assert given.profile.input_tokens == 12000
    parse_settings({**local, "INPUT_MODEL": "openai:gpt-4.1-mini"}, ask_server=server)
    parse_settings({"INPUT_MODEL": LOCAL_MODEL}, ask_server=server)
    assert asked == ["qwen2.5-coder-1.5b"]


def test_a_max_memory_kb_that_fits_the_served_window_is_accepted() -> None:
    # With the 8,000-token guess, 16 KiB did not fit and the run refused to start.
    env = {
        "INPUT_MODEL": LOCAL_MODEL,
        "INPUT_MODEL_BASE_URL": "http://127.0.0.1:1/v1",
        "INPUT_MAX_MEMORY_KB": "16",
    }
    served = ServedWindow(tokens=16384, origin="llama.cpp GET /v1/models meta.n_ctx 16,384")
    assert parse_settings(env, ask_server=lambda *_: served).max_memory_kb == 16


def test_each_request_may_take_the_run_s_time_budget() -> None:
    env = {"INPUT_GITHUB_TOKEN": "ghs_x", "INPUT_TIMEOUT_MINUTES": "30"}
    model = model_factory(parse_settings(env), env)()
    assert isinstance(model, ChatOpenAI)
    assert model.request_timeout == 1800.0  # was 120 s whatever timeout_minutes said


def test_a_local_review_uses_the_served_window_says_so_and_caps_each_answer(
    capsys: pytest.CaptureFixture[str], repo: GitRepo, tmp_path: Path
) -> None:
    with OpenAIStub([answer_reply("Looks fine.")], routes=LLAMA_CPP) as stub:
        code, _, err = review_local(
            capsys, stub, tmp_path / "store", "--no-save", model=LOCAL_MODEL
        )
        chats = stub.requests
    assert code == 0, err
    [line] = [line for line in err.splitlines() if "Model limits:" in line]
    assert (
        "openai:qwen2.5-coder-1.5b: 14,384 tokens in (the server's window: llama.cpp GET "
        "/v1/models meta.n_ctx 16,384), 2,000 out; each request may take up to 600 s "
        "(--timeout-minutes 10)." in line  # the CLI's flag, not the action's input
    )
    assert "timeout_minutes" not in line
    assert chats[0].body["max_tokens"] == 2000
    assert "max_completion_tokens" not in chats[0].body


def test_a_local_review_with_max_input_tokens_asks_no_server(
    capsys: pytest.CaptureFixture[str], repo: GitRepo, tmp_path: Path
) -> None:
    with OpenAIStub([answer_reply("Looks fine.")], routes=LLAMA_CPP) as stub:
        flags = ("--no-save", "--max-input-tokens", "12000", "--max-model-calls", "1")
        code, _, err = review_local(capsys, stub, tmp_path / "store", *flags, model=LOCAL_MODEL)
        asked = stub.other_requests
    assert code == 0, err
    assert asked == []
    assert "12,000 tokens in (--max-input-tokens 12000)" in err


def test_the_exclude_flag_skips_files(
    capsys: pytest.CaptureFixture[str], repo: GitRepo, tmp_path: Path
) -> None:
    with OpenAIStub([answer_reply("Looks fine.")]) as stub:
        flags = ("--no-save", "--exclude", "docs/**", "--exclude", "old.txt")
        code, _, err = review_local(capsys, stub, tmp_path / "store", *flags)
        first = stub.requests[0].body["messages"][1]["content"]
    assert code == 0, err
    assert "Not reviewed: docs/manual.md: excluded" in err
    assert "Not reviewed: old.txt: excluded" in err
    assert "-line 3\n+line three" in first
    assert "Manual paragraph 30." not in first


def test_input_variables_are_named_as_ignored_with_their_flags(
    capsys: pytest.CaptureFixture[str],
    repo: GitRepo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("INPUT_MAX_INPUT_TOKENS", "16000")
    monkeypatch.setenv("INPUT_ENABLE_MEMORY", "false")
    with OpenAIStub([answer_reply("Looks fine.")]) as stub:
        code, _, err = review_local(capsys, stub, tmp_path / "store", "--no-save")
    assert code == 0, err
    [line] = [line for line in err.splitlines() if "INPUT_" in line]
    assert "Ignored INPUT_ENABLE_MEMORY, INPUT_MAX_INPUT_TOKENS" in line
    assert "use --max-input-tokens instead" in line
