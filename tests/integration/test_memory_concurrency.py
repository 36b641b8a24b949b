"""Runs that race never lose each other's memory (issue: lossless concurrent saves)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.cache_harness import default_tuning, fast_tuning
from tests.fakes.cache_service import CREATE, FakeCacheService
from tests.fakes.concurrency import MAIN_REF, race
from tests.fakes.github_api import FakeGitHub


@pytest.fixture
def service() -> Iterator[FakeCacheService]:
    with FakeCacheService([MAIN_REF]) as fake, default_tuning(fast_tuning([])):
        yield fake


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()
    with fake.serve():
        yield fake


def test_twenty_racing_runs_keep_all_twenty_facts(
    tmp_path: Path, service: FakeCacheService, github: FakeGitHub
) -> None:
    result = race(tmp_path, service, github, runs=20)

    assert result.exit_codes == [0] * 20
    assert result.facts_kept == 20, result.final_prompt
    assert result.final_prompt.count("- Fact number") == 20  # each exactly once


def test_jobs_of_one_workflow_run_never_save_under_one_key(
    tmp_path: Path, service: FakeCacheService, github: FakeGitHub
) -> None:
    """A matrix: four jobs with the same run id, attempt and job id, each saving a fact."""
    result = race(tmp_path, service, github, runs=4, one_workflow_run=True)

    assert result.exit_codes == [0] * 4
    assert result.facts_kept == 4, result.final_prompt
    created = [request.json()["key"] for request in service.requests_to(CREATE)]
    assert (
        len(created) == len(set(created)) == 4 + 2
    )  # and the seed, and the reader saving the four merged


def test_newest_entry_wins_loses_facts_under_the_same_race(
    tmp_path: Path, service: FakeCacheService, github: FakeGitHub
) -> None:
    """What the composite action's behaviour (restore the newest entry only) loses."""
    result = race(tmp_path, service, github, runs=20, lossless=False)

    assert result.exit_codes == [0] * 20
    assert result.facts_kept < 20
    print(f"newest-entry-wins kept {result.facts_kept}/20 facts")
