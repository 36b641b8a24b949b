"""The whole action from ``main()`` with the real Actions cache store, against the fake service.

No ``MEMORY_AGENT_STORE_DIR``: ``store_wiring.py`` picks ``ActionsCacheStore`` from
``ACTIONS_RESULTS_URL`` and ``ACTIONS_RUNTIME_TOKEN``, as in a container action (v2 without
``ACTIONS_CACHE_SERVICE_V2``). Each run gets the token of its own ref chain: a push to main reads
and writes ``refs/heads/main``; a pull request run writes ``refs/pull/7/merge`` and reads that,
then ``refs/heads/main``. The retry clock records its waits instead of sleeping, and timeouts are
short (``default_tuning``), so the fault tests finish in seconds.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_action.store.actions_cache import READ_ONLY_MESSAGE
from tests.fakes.cache_harness import JS_BACKOFF, default_tuning, fast_tuning
from tests.fakes.cache_service import (
    BLOB_GET,
    BLOB_PUT,
    CREATE,
    FINALIZE,
    LOOKUP,
    FakeCacheService,
    Fault,
)
from tests.fakes.github_api import FakeGitHub
from tests.fakes.runner import (
    CacheRunner,
    RunOutcome,
    comment_event,
    is_save_key,
    pull_request_event,
    push_event,
)
from tests.fakes.scripted_model import ScriptedChatModel, tool_call

MEMORY = ".agent-memory/AGENTS.md"
LESSON = "# Conventions\n\n- Network calls retry with tenacity, never a hand-written loop.\n"
PR_LESSON = LESSON + "- PR 7: the fetcher's retry budget is 3 attempts.\n"
PR_REF = "refs/pull/7/merge"
MAIN_REF = "refs/heads/main"
COMMITTED = "memory-agent/v1/memory-agent/repo/committed/"
OVERLAY = "memory-agent/v1/memory-agent/repo/pr-7/"


@pytest.fixture
def service() -> Iterator[FakeCacheService]:
    with FakeCacheService([MAIN_REF]) as fake:  # the default token: a run on main
        yield fake


@pytest.fixture
def sleeps() -> Iterator[list[float]]:
    """What the retry clock of the run's cache store would have slept (it sleeps not at all)."""
    waits: list[float] = []
    with default_tuning(fast_tuning(waits)):
        yield waits


@pytest.fixture
def runner(tmp_path: Path, service: FakeCacheService, sleeps: list[float]) -> CacheRunner:
    return CacheRunner(tmp_path, extra_env=service.env())


Trigger = tuple[str, dict[str, Any], str]  # event name, event payload, GITHUB_REF


def pull_request(action: str = "opened") -> Trigger:
    return ("pull_request", pull_request_event(action=action), PR_REF)


PUSH: Trigger = ("push", push_event(), MAIN_REF)


def run_as(
    runner: CacheRunner, token: str, trigger: Trigger, model: ScriptedChatModel, **env: str
) -> RunOutcome:
    """One run with this runtime token (and extra environment); never a traceback."""
    runner.extra_env = {**runner.extra_env, "ACTIONS_RUNTIME_TOKEN": token, **env}
    try:
        outcome = runner.run(*trigger, model)
    finally:
        for name in env:
            runner.extra_env.pop(name)
    log = outcome.stdout + outcome.stderr
    assert "Traceback" not in log, log
    assert not runner.store_dir.exists()  # the local store was never chosen
    return outcome


def push(runner: CacheRunner, service: FakeCacheService, content: str = LESSON) -> RunOutcome:
    """A push to main whose maintenance run writes ``content`` to memory."""
    model = ScriptedChatModel.from_script(
        tool_call("write_file", {"file_path": MEMORY, "content": content}), "Memory consolidated."
    )
    return run_as(runner, service.token, PUSH, model)


def warnings(log: str) -> list[str]:
    return [line for line in log.splitlines() if line.startswith("::warning")]


def leftovers(workspace: Path) -> list[str]:
    """Staging or swapped-out folders a restore could leave next to the memory folder."""
    return sorted(path.name for path in workspace.iterdir() if path.name != ".agent-memory")


# -- the normal life of memory -----------------------------------------------------------------


def test_push_then_pull_request_runs_share_memory_through_the_cache(
    runner: CacheRunner, service: FakeCacheService, github: FakeGitHub
) -> None:
    pr_token = service.add_run([PR_REF, MAIN_REF])

    pushed = push(runner, service)

    assert pushed.exit_code == 0, pushed.stdout
    committed_key = pushed.outputs["saved_key"]
    assert is_save_key(committed_key, COMMITTED, 1001)
    entry = service.find(committed_key)
    assert entry is not None
    assert entry.scope == MAIN_REF

    # The first PR run restores main's memory (its own scope has nothing yet) and saves an overlay.
    first_model = ScriptedChatModel.from_script(
        tool_call("get_file_patch", {"path": "src/fetch.py"}),
        tool_call("write_file", {"file_path": MEMORY, "content": PR_LESSON}),
        "The loop returns on the first attempt.",
    )
    first = run_as(runner, pr_token, pull_request(), first_model)

    assert first.exit_code == 0, first.stdout
    assert "never a hand-written loop" in first_model.system_prompts[0]
    assert first.outputs["memory_hit"] == "true"
    assert first.outputs["memory_key"] == committed_key
    overlay_key = first.outputs["saved_key"]
    assert is_save_key(overlay_key, OVERLAY, 1002)
    overlay = service.find(overlay_key)
    assert overlay is not None
    assert overlay.scope == PR_REF
    # Committed memory and the PR's overlay are looked up separately (then merged), each only
    # within its own prefix: never a fallback across layers.
    looked_up = {request.json()["key"] for request in service.requests_to(LOOKUP)}
    assert {OVERLAY, COMMITTED} <= looked_up
    assert all("restore_keys" not in request.json() for request in service.requests_to(LOOKUP))

    # The second PR run starts from the first one's overlay.
    second_model = ScriptedChatModel.from_script("Still returns on the first attempt.")
    second = run_as(runner, pr_token, pull_request("synchronize"), second_model)

    assert second.exit_code == 0, second.stdout
    assert "retry budget is 3 attempts" in second_model.system_prompts[0]
    assert second.outputs["memory_key"] == overlay_key
    assert second.outputs["saved_key"] == ""  # unchanged: nothing to save
    assert "did not change it" in second.summary

    # main never sees the pull request's overlay.
    main_model = ScriptedChatModel.from_script("Nothing to consolidate.")
    again = run_as(runner, service.token, PUSH, main_model)
    assert again.outputs["memory_key"] == committed_key
    assert "retry budget" not in main_model.system_prompts[0]
    assert leftovers(runner.workspace) == []


def test_cache_mode_read_restores_but_does_not_save(
    runner: CacheRunner, service: FakeCacheService, github: FakeGitHub
) -> None:
    pr_token = service.add_run([PR_REF, MAIN_REF])
    push(runner, service)
    creates = len(service.requests_to(CREATE))
    model = ScriptedChatModel.from_script(
        tool_call("write_file", {"file_path": MEMORY, "content": PR_LESSON}), "Fine."
    )

    outcome = run_as(runner, pr_token, pull_request(), model, ACTIONS_CACHE_MODE="read")

    assert outcome.exit_code == 0, outcome.stdout
    assert "never a hand-written loop" in model.system_prompts[0], outcome.stdout
    assert outcome.outputs["memory_hit"] == "true"
    assert outcome.outputs["memory_changed"] == "true"
    assert outcome.outputs["saved_key"] == ""
    assert "ACTIONS_CACHE_MODE=read forbids cache writes" in outcome.summary
    assert "retry budget" in outcome.summary  # the change is shown, not saved
    assert len(service.requests_to(CREATE)) == creates  # no write was even tried


def test_a_comment_run_with_a_read_only_token_restores_and_succeeds(
    runner: CacheRunner, service: FakeCacheService, github: FakeGitHub
) -> None:
    push(runner, service)
    read_only = service.add_run([MAIN_REF], read_only=True)
    event = comment_event("Please remember: retries use tenacity")
    model = ScriptedChatModel.from_script(
        tool_call("write_file", {"file_path": MEMORY, "content": PR_LESSON}), "Noted."
    )

    outcome = run_as(runner, read_only, ("issue_comment", event, MAIN_REF), model)

    assert outcome.exit_code == 0, outcome.stdout
    assert "never a hand-written loop" in model.system_prompts[0], outcome.stdout
    assert outcome.outputs["memory_hit"] == "true"
    assert outcome.outputs["saved_key"] == ""
    assert "issue_comment runs get a read-only cache token" in outcome.summary
    assert len(service.visible()) == 1


def test_a_token_the_service_refuses_to_write_with_is_a_notice_not_a_failure(
    runner: CacheRunner, service: FakeCacheService, github: FakeGitHub
) -> None:
    """An event that may write, but the service says ``cache write denied:`` (read-only)."""
    read_only = service.add_run([MAIN_REF], read_only=True)
    model = ScriptedChatModel.from_script(
        tool_call("write_file", {"file_path": MEMORY, "content": LESSON}), "Consolidated."
    )

    outcome = run_as(runner, read_only, PUSH, model)

    assert outcome.exit_code == 0, outcome.stdout
    assert outcome.outputs["saved_key"] == ""
    assert READ_ONLY_MESSAGE in outcome.summary
    assert any(
        line.startswith("::notice::Memory was not saved") for line in outcome.stdout.splitlines()
    )
    assert warnings(outcome.stdout) == []
    assert len(service.requests_to(CREATE)) == 1
    assert service.visible() == []


# -- a misbehaving service: the job succeeds, memory is missing ---------------------------------

RESTORE_FAULTS = {
    "lookup-500": (LOOKUP, [Fault.http(500)] * 5),
    "lookup-hang": (LOOKUP, [Fault.hang(), Fault.hang()]),
    "lookup-not-json": (LOOKUP, [Fault.non_json(502)] * 5),
    "download-503": (BLOB_GET, [Fault.http(503)] * 5),
    "download-hang": (BLOB_GET, [Fault.hang(), Fault.hang()]),
    "download-reset": (BLOB_GET, [Fault.reset(), Fault.reset()]),
    "download-truncated": (BLOB_GET, [Fault.truncate(), Fault.truncate()]),
    "corrupt-archive": (BLOB_GET, [Fault.replace_body(os.urandom(300))]),
}


@pytest.mark.parametrize("fault", list(RESTORE_FAULTS), ids=list(RESTORE_FAULTS))
def test_a_failing_restore_warns_and_the_run_goes_on_without_memory(
    runner: CacheRunner, service: FakeCacheService, github: FakeGitHub, fault: str
) -> None:
    pr_token = service.add_run([PR_REF, MAIN_REF])
    push(runner, service)
    route, faults = RESTORE_FAULTS[fault]
    service.fail(route, *faults)
    model = ScriptedChatModel.from_script("Looks fine.")

    outcome = run_as(runner, pr_token, pull_request(), model)

    assert outcome.exit_code == 0, outcome.stdout
    [warning] = warnings(outcome.stdout)
    assert "Memory was not restored" in warning
    assert service.token not in warning
    assert "sig=" not in warning
    assert "(No memory loaded)" in model.system_prompts[0]
    assert outcome.outputs["memory_hit"] == "false"
    assert outcome.outputs["memory_key"] == ""
    assert "use tenacity" not in outcome.summary
    assert not (runner.workspace / ".agent-memory").exists()
    assert leftovers(runner.workspace) == []
    assert service.pending_faults(route) == 0
    assert [c for c in github.bodies(7) if "Looks fine." in c]  # the review was still posted


DEEP = b"[" * 20_000 + b"]" * 20_000


@pytest.mark.parametrize(
    "body", [b'{"ok":"yes","signed_download_url":"x"}', b'{"ok":NaN}', b'{"ok":' + DEEP + b"}"]
)
def test_a_garbled_lookup_answer_warns_and_the_run_saves_nothing_over_memory_it_never_read(
    runner: CacheRunner, service: FakeCacheService, github: FakeGitHub, body: bytes
) -> None:
    push(runner, service)
    saves = len(service.requests_to(CREATE))
    service.fail(LOOKUP, Fault.replace_body(body))

    outcome = push(runner, service, content="# Conventions\n\n- Only this.\n")

    assert outcome.exit_code == 0, outcome.stdout
    [warning] = warnings(outcome.stdout)
    assert "Memory was not restored" in warning
    assert "GetCacheEntryDownloadURL sent a garbled answer: " in warning
    assert "Cache not found" not in outcome.stdout
    assert len(service.requests_to(CREATE)) == saves  # memory saved before is still the newest
    assert outcome.outputs["memory_hit"] == "false"


def test_retries_wait_like_the_js_client_on_the_fake_clock(
    runner: CacheRunner, service: FakeCacheService, github: FakeGitHub, sleeps: list[float]
) -> None:
    pr_token = service.add_run([PR_REF, MAIN_REF])
    service.fail(LOOKUP, *[Fault.http(503)] * 5)
    model = ScriptedChatModel.from_script("Looks fine.")

    outcome = run_as(runner, pr_token, pull_request(), model)

    assert outcome.exit_code == 0
    assert sleeps == JS_BACKOFF  # nothing slept for real


SAVE_FAULTS = {
    "create-500": (CREATE, [Fault.http(500)] * 5),
    "create-429": (CREATE, [Fault.rate_limit("30")]),
    "create-hang": (CREATE, [Fault.hang(), Fault.hang()]),
    "upload-503": (BLOB_PUT, [Fault.http(503)] * 5),
    "upload-reset": (BLOB_PUT, [Fault.reset(), Fault.reset()]),
    "finalize-504": (FINALIZE, [Fault.http(504)] * 5),
    "finalize-not-json": (FINALIZE, [Fault.non_json(200)] * 5),
}


@pytest.mark.parametrize("fault", list(SAVE_FAULTS), ids=list(SAVE_FAULTS))
def test_a_failing_save_warns_and_the_run_succeeds(
    runner: CacheRunner, service: FakeCacheService, github: FakeGitHub, fault: str
) -> None:
    route, faults = SAVE_FAULTS[fault]
    service.fail(route, *faults)

    outcome = push(runner, service)

    assert outcome.exit_code == 0, outcome.stdout
    [warning] = warnings(outcome.stdout)
    assert "Memory was not saved" in warning
    assert service.token not in warning
    assert outcome.outputs["saved_key"] == ""
    assert outcome.outputs["memory_changed"] == "true"
    assert "Not saved:" in outcome.summary
    assert service.visible() == []
    assert service.pending_faults(route) == 0
