"""Runs that race never lose each other's memory (issue: lossless concurrent saves)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_action.lifecycle.layers import NOT_LISTED_NOTE
from memory_action.store.git import MEMORY_BRANCH
from tests.fakes.cache_harness import default_tuning
from tests.fakes.cache_service import BLOB_GET, CREATE, LOOKUP, FakeCacheService, Fault
from tests.fakes.concurrency import MAIN_REF, RACE_TUNING, fact, race, run_once
from tests.fakes.github_api import FakeGitHub
from tests.fakes.scripted_model import ScriptedChatModel


@pytest.fixture
def service() -> Iterator[FakeCacheService]:
    with FakeCacheService([MAIN_REF]) as fake, default_tuning(RACE_TUNING):
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


def test_with_actions_read_only_forty_racing_runs_keep_all_forty_facts(
    tmp_path: Path, service: FakeCacheService, github: FakeGitHub
) -> None:
    """Nothing is deleted (no ``actions: write``), so every entry is listed: more than one
    restore used to look at (32), and most of them held by a newer one, never downloaded."""
    result = race(tmp_path, service, github, runs=40, actions="read")

    assert result.exit_codes == [0] * 40
    assert result.facts_kept == 40, result.final_prompt
    assert result.entries_left == 40 + 2  # the seed and the reader's save too
    assert result.reader_downloads < result.entries_left


def test_without_actions_read_runs_that_race_are_told_they_can_lose_memory(
    tmp_path: Path, service: FakeCacheService, github: FakeGitHub
) -> None:
    result = race(tmp_path, service, github, runs=8, actions="none")

    assert result.exit_codes == [0] * 8
    assert result.reader_log.count(NOT_LISTED_NOTE) == 1, result.reader_log
    assert result.reader_summary.count(NOT_LISTED_NOTE) == 1, result.reader_summary
    assert "::warning" not in result.reader_log


def test_newest_entry_wins_loses_facts_under_the_same_race(
    tmp_path: Path, service: FakeCacheService, github: FakeGitHub
) -> None:
    """What the composite action's behaviour (restore the newest entry only) loses."""
    result = race(tmp_path, service, github, runs=20, lossless=False)

    assert result.exit_codes == [0] * 20
    assert result.facts_kept < 20
    print(f"newest-entry-wins kept {result.facts_kept}/20 facts")


def test_twenty_trusted_runs_racing_on_the_git_store_keep_every_fact(tmp_path: Path) -> None:
    github = FakeGitHub()
    with FakeCacheService([MAIN_REF]) as service, default_tuning(RACE_TUNING), github.serve():
        result = race(tmp_path, service, github, runs=20, store="git")
    assert result.exit_codes == [0] * 20
    assert result.facts_kept == 20, result.final_prompt
    assert result.commits == 20  # one commit per save: a lost race writes nothing
    head = github.git.head(MEMORY_BRANCH)
    assert head is not None and all(
        fact(n) in head.files["memory-agent/v1/memory-agent/repo/committed/AGENTS.md"]
        for n in range(20)
    )
    assert not github.git.protected and github.unknown == []


SLOW_ROUNDS = 60


def slow_reads(service: FakeCacheService) -> None:
    """From now on, of every three lookups and downloads one is answered and two are too slow
    (both attempts of the client fail): the runs' checks for what was saved meanwhile fail."""
    for route in (LOOKUP, BLOB_GET):
        service.fail(route, *([Fault.answer(), Fault.reset(), Fault.reset()] * SLOW_ROUNDS))


@pytest.mark.parametrize("actions", ["read", "write"])
def test_slow_cache_answers_while_racing_runs_save_lose_no_memory(
    tmp_path: Path, service: FakeCacheService, github: FakeGitHub, actions: str
) -> None:
    """A run that cannot read what was saved since it started saves what it has, unmerged: its
    entry holds no other, so the next restore merges every head and nothing is lost (nor is
    anything it could not read deleted as superseded)."""
    result = race(tmp_path, service, github, runs=16, actions=actions, while_saving=slow_reads)

    assert result.exit_codes == [0] * 16
    assert result.facts_kept == 16, result.final_prompt
    assert result.final_prompt.count("- Fact number") == 16
    assert result.faults_left < 2 * 3 * SLOW_ROUNDS - 16  # every racer met slow answers


def test_a_head_that_cannot_be_downloaded_is_said_and_merged_by_the_next_run(
    tmp_path: Path, service: FakeCacheService, github: FakeGitHub
) -> None:
    """Slow answers to a run that merges what racing runs left: a head it cannot download is
    cache trouble (said), not an entry gone since the listing (skipped in silence); the run goes
    on without it, and its own save holds none of it, so the next run merges it."""
    # Racers that never merge (newest entry wins) leave six heads for the next run to merge.
    race(tmp_path, service, github, runs=6, actions="read", lossless=False)
    # the newest entry comes down; the next head's download fails on both attempts
    service.fail(BLOB_GET, Fault.answer(), Fault.reset(), Fault.reset())
    slowed = run_once(tmp_path / "slowed", 2001, service, no_edit(), lossless=True)
    assert "could not be read (cache trouble" in slowed.log, slowed.log
    assert "they are kept, and a later run merges them" in slowed.summary
    after = no_edit()
    run_once(tmp_path / "after", 2002, service, after, lossless=True)
    assert all(fact(n) in after.system_prompts[0] for n in range(6))


def no_edit() -> ScriptedChatModel:
    return ScriptedChatModel.from_script("Nothing to add.")
