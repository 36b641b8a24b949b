"""Which cache service a container action uses, from its environment (protocol §1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_action.store.cache_env import (
    CacheProtocol,
    cache_mode,
    choose_protocol,
    decide_cache_config,
    is_ghes,
    origin,
)

RESULTS = "https://results-receiver.actions.example.test/some/path/"
CACHE = "https://artifactcache.example.test/tenant/"
V1, V2 = CacheProtocol.V1, CacheProtocol.V2


@pytest.mark.parametrize(
    ("server_url", "ghes"),
    [
        (None, False),
        ("", False),
        ("https://github.com", False),
        ("https://GitHub.com/", False),
        ("https://octo.ghe.com", False),
        ("https://my-company.ghe.com", False),
        ("http://github.localhost:8080", False),
        ("https://github.example.corp", True),
        ("https://ghe.com.evil.test", True),
    ],
)
def test_ghes_detection(server_url: str | None, ghes: bool) -> None:
    env = {} if server_url is None else {"GITHUB_SERVER_URL": server_url}
    assert is_ghes(env) is ghes


GHES = {"GITHUB_SERVER_URL": "https://github.example.corp"}


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        # A container never sees ACTIONS_CACHE_SERVICE_V2: v2 whenever the results URL is there.
        ({"ACTIONS_RESULTS_URL": RESULTS}, V2),
        ({"ACTIONS_RESULTS_URL": RESULTS, "ACTIONS_CACHE_URL": CACHE}, V2),
        ({"ACTIONS_CACHE_URL": CACHE}, V1),
        ({}, None),
        ({"ACTIONS_RESULTS_URL": ""}, None),
        # GHES: v1 only.
        ({**GHES, "ACTIONS_RESULTS_URL": RESULTS}, None),
        ({**GHES, "ACTIONS_RESULTS_URL": RESULTS, "ACTIONS_CACHE_URL": CACHE}, V1),
        # The variable set, as for node actions: exactly the JS client's rule (a truthiness test).
        ({"ACTIONS_CACHE_SERVICE_V2": "false", "ACTIONS_RESULTS_URL": RESULTS}, V2),
        ({"ACTIONS_CACHE_SERVICE_V2": "True", "ACTIONS_CACHE_URL": CACHE}, None),
        ({**GHES, "ACTIONS_CACHE_SERVICE_V2": "True", "ACTIONS_CACHE_URL": CACHE}, V1),
    ],
)
def test_protocol_choice(env: dict[str, str], expected: CacheProtocol | None) -> None:
    assert choose_protocol(env) == expected


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (None, (True, True)),
        ("", (True, True)),
        ("none", (False, False)),
        ("read", (True, False)),
        (" Read ", (True, False)),
        ("write", (True, True)),
        ("write-only", (False, True)),
        ("WRITE-ONLY", (False, True)),
        ("sideways", (True, True)),
    ],
)
def test_cache_mode(mode: str | None, expected: tuple[bool, bool]) -> None:
    env = {} if mode is None else {"ACTIONS_CACHE_MODE": mode}
    assert cache_mode(env) == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://results.example.test/a/b/", "https://results.example.test"),
        ("http://127.0.0.1:8080/x", "http://127.0.0.1:8080"),
        ("https://results.example.test", "https://results.example.test"),
        ("results.example.test/path", None),
        ("ftp://results.example.test/", None),
    ],
)
def test_origin(url: str, expected: str | None) -> None:
    assert origin(url) == expected


def test_v2_config_uses_the_origin_and_keeps_the_token_secret(tmp_path: Path) -> None:
    env = {
        "ACTIONS_RESULTS_URL": RESULTS,
        "ACTIONS_RUNTIME_TOKEN": "runtime-token-value",
        "ACTIONS_CACHE_MODE": "Read",
        "GITHUB_WORKSPACE": str(tmp_path / "ws"),
        "RUNNER_TEMP": str(tmp_path / "tmp"),
    }
    config = decide_cache_config(env).config
    assert config is not None
    assert config.protocol is V2
    assert config.base_url == "https://results-receiver.actions.example.test"
    assert config.token.reveal() == "runtime-token-value"
    assert "runtime-token-value" not in repr(config)
    assert (config.may_read, config.may_write, config.mode) == (True, False, "read")
    assert config.workspace == tmp_path / "ws"
    assert config.temp_dir == tmp_path / "tmp"


def test_v2_without_a_token_is_unavailable_with_a_reason() -> None:
    decision = decide_cache_config({"ACTIONS_RESULTS_URL": RESULTS})
    assert decision.config is None
    assert "ACTIONS_RUNTIME_TOKEN" in decision.reason


def test_v2_with_a_results_url_that_is_no_url() -> None:
    decision = decide_cache_config(
        {"ACTIONS_RESULTS_URL": "nonsense", "ACTIONS_RUNTIME_TOKEN": "t"}
    )
    assert decision.config is None
    assert "ACTIONS_RESULTS_URL" in decision.reason


def test_no_service_gives_a_reason_for_the_notice() -> None:
    decision = decide_cache_config({"ACTIONS_RUNTIME_TOKEN": "t"})
    assert decision.config is None
    assert "ACTIONS_RESULTS_URL" in decision.reason
    assert "ACTIONS_CACHE_URL" in decision.reason


@pytest.mark.parametrize("url", [CACHE, CACHE.rstrip("/")])
def test_v1_base_ends_in_a_slash_and_keeps_its_path(url: str) -> None:
    config = decide_cache_config({**GHES, "ACTIONS_CACHE_URL": url}).config
    assert config is not None
    assert config.protocol is V1
    assert config.base_url == CACHE
    assert config.token.reveal() == ""  # like the JS client, v1 goes on with "Bearer "


def test_defaults_without_workspace_and_runner_temp(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    config = decide_cache_config({"ACTIONS_RESULTS_URL": RESULTS, "ACTIONS_RUNTIME_TOKEN": "t"})
    assert config.config is not None
    assert config.config.workspace == tmp_path
    assert config.config.temp_dir.is_dir()
