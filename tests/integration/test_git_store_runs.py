"""Whole runs with memory_store: git: the cache can lose everything, git keeps committed memory;
a repository switching from the cache is migrated on its first trusted run; branch protection
that refuses the write is reported once and the run saves to the cache."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from memory_action.store.git import MEMORY_BRANCH
from tests.fakes.cache_harness import default_tuning, fast_tuning
from tests.fakes.cache_service import FakeCacheService
from tests.fakes.concurrency import MAIN_REF, MEMORY, run_once
from tests.fakes.github_api import FakeGitHub
from tests.fakes.scripted_model import ScriptedChatModel, tool_call

COMMITTED = "memory-agent/v1/memory-agent/repo/committed/AGENTS.md"
FACT = "- We use pytest fixtures, not setUp.\n"


@pytest.fixture
def world() -> Iterator[tuple[FakeCacheService, FakeGitHub]]:
    github = FakeGitHub()
    with FakeCacheService([MAIN_REF]) as service, default_tuning(fast_tuning([])), github.serve():
        github.cache = service
        yield service, github


def writer(text: str = FACT) -> ScriptedChatModel:
    return ScriptedChatModel.from_script(
        tool_call("write_file", {"file_path": MEMORY, "content": text}), "Saved."
    )


def reader() -> ScriptedChatModel:
    return ScriptedChatModel.from_script("Nothing to add.")


def run(
    root: Path, run_id: int, service: FakeCacheService, model: ScriptedChatModel, store: str
) -> str:
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        return run_once(root, run_id, service, model, lossless=True, store=store).log


def evict_everything(service: FakeCacheService) -> None:
    for entry in service.visible():
        assert service.rest_delete(entry.id)


def test_after_the_cache_loses_every_entry_the_next_run_restores_from_git(
    tmp_path: Path, world: tuple[FakeCacheService, FakeGitHub]
) -> None:
    service, github = world
    run(tmp_path, 1, service, writer(), "git")
    head = github.git.head(MEMORY_BRANCH)
    assert head is not None and head.files[COMMITTED] == FACT
    assert service.visible()  # the cache's copy
    evict_everything(service)
    model = reader()
    run(tmp_path, 2, service, model, "git")
    assert FACT.strip() in model.system_prompts[0]


def test_the_first_trusted_run_with_git_carries_cached_memory_over(
    tmp_path: Path, world: tuple[FakeCacheService, FakeGitHub]
) -> None:
    service, github = world
    run(tmp_path, 1, service, writer(), "cache")
    assert github.git.head(MEMORY_BRANCH) is None
    model = reader()
    log = run(tmp_path, 2, service, model, "git")  # changes nothing: still migrates
    assert FACT.strip() in model.system_prompts[0]
    head = github.git.head(MEMORY_BRANCH)
    assert head is not None and head.files[COMMITTED] == FACT
    assert "carried the cached committed memory" in log
    evict_everything(service)
    later = reader()
    run(tmp_path, 3, service, later, "git")
    assert FACT.strip() in later.system_prompts[0]


def test_branch_protection_is_reported_once_and_the_run_saves_to_the_cache(
    tmp_path: Path, world: tuple[FakeCacheService, FakeGitHub]
) -> None:
    service, github = world
    run(tmp_path, 1, service, writer(), "git")
    github.git.protected.add(MEMORY_BRANCH)
    before = len(service.visible())
    log = run(tmp_path, 2, service, writer(FACT + "- Second fact.\n"), "git")
    assert log.count("Repository rule violations") == 1
    assert "::warning" in log and "goes on with the Actions cache" in log
    assert len(service.visible()) == before + 1  # saved to the cache instead
    head = github.git.head(MEMORY_BRANCH)
    assert head is not None and "Second fact" not in head.files[COMMITTED]


def test_a_refused_migration_and_save_are_reported_once(
    tmp_path: Path, world: tuple[FakeCacheService, FakeGitHub]
) -> None:
    service, github = world
    run(tmp_path, 1, service, writer(), "cache")
    github.git.read_only = True  # the token may not write contents
    log = run(tmp_path, 2, service, writer(FACT + "- Second fact.\n"), "auto")
    assert log.count("this run goes on with the Actions cache") == 1
    assert "::notice" in log and "contents: write" in log
    later = reader()
    run(tmp_path, 3, service, later, "auto")
    assert "Second fact" in later.system_prompts[0]  # saved to the cache, read from it


# A Slack bot token pasted into a branch name (Slack's documented xoxb- shape, fake digits).
BRANCH_TOKEN = "xoxb-2048193740-4817302958163-Qm7vTz3KpX9wLr2NbH6yDs4F"


def test_a_secret_in_a_branch_name_is_in_no_folder_entry_or_key_of_the_memory_branch(
    tmp_path: Path,
) -> None:
    """Branch memory is kept in a folder named by the branch: the token in the branch's name is
    a hash there, in entry.json and in the commit, and the next run on the branch finds it."""
    ref = f"refs/heads/fix/{BRANCH_TOKEN}"
    github = FakeGitHub()
    with FakeCacheService([ref]) as service, default_tuning(fast_tuning([])), github.serve():
        github.cache = service
        inputs = {"INPUT_MEMORY_SCOPE": "branch"}
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            run_once(
                tmp_path, 1, service, writer(), store="git", ref=ref, inputs=inputs, lossless=True
            )
            evict_everything(service)
            second = run_once(
                tmp_path, 2, service, reader(), store="git", ref=ref, inputs=inputs, lossless=True
            )
    head = github.git.head(MEMORY_BRANCH)
    assert head is not None
    written = [path for path in head.files if path.endswith("/AGENTS.md")]
    assert len(written) == 1 and "/branch/fix%2F~" in written[0], written
    assert head.files[written[0]] == FACT
    for commit in github.git.log(MEMORY_BRANCH):
        assert BRANCH_TOKEN[5:] not in repr((commit.files, commit.headline, commit.body))
    assert "memory-agent/v1/memory-agent/branch/fix%2F~" in second.log  # restored from git


def test_the_job_log_shows_the_cache_keys_of_branch_memory(tmp_path: Path) -> None:
    """A key is what a user debugging a restore needs: "Cache hit for restore-key: <key>" and
    "Cache saved with key: <key>" show it, also when its parts are encoded or mixed-case."""
    ref = "refs/heads/feature/Login_Flow"
    github = FakeGitHub()
    with FakeCacheService([ref]) as service, default_tuning(fast_tuning([])), github.serve():
        github.cache = service
        inputs = {"INPUT_MEMORY_SCOPE": "branch"}
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            first = run_once(tmp_path, 1, service, writer(), ref=ref, inputs=inputs, lossless=True)
            second = run_once(tmp_path, 2, service, reader(), ref=ref, inputs=inputs, lossless=True)
    prefix = "memory-agent/v1/memory-agent/branch/feature%2FLogin_Flow/committed/"
    assert f"Cache saved with key: {prefix}" in first.log, first.log
    assert f"Cache hit for restore-key: {prefix}" in second.log, second.log
    assert "REDACTED" not in first.log + second.log
