"""One GitHub client per run: ``main`` builds it and every part that talks to GitHub (the review,
the sticky comment, promotion, comment commands, cache hygiene's listing, the git store) gets
that one, never a second PyGithub client of its own."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import github
import pytest

from memory_action.store.git import MEMORY_BRANCH
from tests.fakes import call_counts, runner
from tests.fakes.cache_harness import default_tuning, fast_tuning
from tests.fakes.cache_service import FakeCacheService
from tests.fakes.concurrency import MAIN_REF, MEMORY, run_once
from tests.fakes.github_api import FakeGitHub
from tests.fakes.scripted_model import ScriptedChatModel, tool_call


@pytest.fixture
def clients_built(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many PyGithub clients were built, counted at PyGithub's own constructor."""
    built: list[int] = []
    original = github.Github.__init__

    def counting(self: github.Github, *args: Any, **kwargs: Any) -> None:
        built.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(github.Github, "__init__", counting)
    return built


def test_every_kind_of_run_builds_one_github_client(
    monkeypatch: pytest.MonkeyPatch, clients_built: list[int]
) -> None:
    per_run: list[int] = []
    real_main: Callable[..., int] = runner.main

    def counted_main(*args: Any, **kwargs: Any) -> int:
        before = len(clients_built)
        code = real_main(*args, **kwargs)
        per_run.append(len(clients_built) - before)
        return code

    monkeypatch.setattr(runner, "main", counted_main)
    runs = call_counts.count_runs(files=3)
    assert [run.exit_code for run in runs] == [0] * len(call_counts.KINDS)
    by_kind = list(zip(call_counts.KINDS, per_run, strict=False))
    assert per_run == [1] * len(call_counts.KINDS), by_kind


@pytest.fixture
def world() -> Iterator[tuple[FakeCacheService, FakeGitHub]]:
    fake = FakeGitHub()
    with FakeCacheService([MAIN_REF]) as service, default_tuning(fast_tuning([])), fake.serve():
        fake.cache = service
        yield service, fake


def test_a_git_store_run_uses_the_run_s_client_for_git_and_the_cache(
    tmp_path: Path, world: tuple[FakeCacheService, FakeGitHub], clients_built: list[int]
) -> None:
    service, fake = world
    model = ScriptedChatModel.from_script(
        tool_call("write_file", {"file_path": MEMORY, "content": "- Use pytest.\n"}), "Saved."
    )
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        run_once(tmp_path, 1, service, model, lossless=True, store="git")
    head = fake.git.head(MEMORY_BRANCH)
    assert head is not None and "- Use pytest." in "".join(head.files.values())
    assert len(clients_built) == 1
