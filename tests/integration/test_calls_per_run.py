"""Each resource is read once per run (issue 18): the calls of every kind of run, counted
through the fakes (``tests/fakes/call_counts.py``, the figures ``bench/startup.py`` prints)."""

from __future__ import annotations

import pytest

from memory_action.github.client import pull_request_from_event
from tests.fakes.call_counts import RunCalls, count_runs
from tests.fakes.runner import pull_request_event

# (REST, GraphQL) per kind of run: a call added back fails here, the bench prints the same.
CALLS = {
    "push": (1, 0),
    "pull request": (6, 2),  # the files at the base commit: one GraphQL request, not two REST
    "synchronize": (7, 2),  # the run the earlier proposal names: still asked (another run)
    "comment: remember": (8, 1),
    "comment: forget": (8, 1),  # its two runs (the review's, remember's): one listing
    "promotion": (4, 2),
}


@pytest.fixture(scope="module")
def runs() -> dict[str, RunCalls]:
    return {run.kind: run for run in count_runs(files=100)}


@pytest.mark.parametrize("kind", list(CALLS))
def test_no_run_reads_a_resource_twice(runs: dict[str, RunCalls], kind: str) -> None:
    run = runs[kind]
    assert run.exit_code == 0
    reads = [call for call in run.rest_calls if call.startswith("GET ")]
    assert len(reads) == len(set(reads)), reads


def test_a_pull_request_run_of_100_files_keeps_the_target_of_8_rest_calls(
    runs: dict[str, RunCalls],
) -> None:
    """13 REST calls before the per-run caches (files listed twice, the pull request read twice,
    its comments three times); the pull request itself now comes from the event's payload, and
    the files at the base commit (the memory source, .gitattributes) from one GraphQL request."""
    run = runs["pull request"]
    assert run.target == 8
    assert (run.rest, run.graphql) == (6, 2), run.rest_calls
    assert "GET /pulls/7" not in run.rest_calls
    assert not [call for call in run.rest_calls if "/contents/" in call]


@pytest.mark.parametrize("kind", CALLS)
def test_each_kind_of_run_makes_its_calls_and_keeps_the_target(
    runs: dict[str, RunCalls], kind: str
) -> None:
    run = runs[kind]
    assert run.exit_code == 0
    assert (run.rest, run.graphql) == CALLS[kind], run.rest_calls
    assert run.target is not None
    assert run.rest <= run.target


def test_each_cache_entry_is_downloaded_once_and_a_gzip_miss_is_not_asked_again(
    runs: dict[str, RunCalls],
) -> None:
    # The PR run: committed memory (zstd hit), its overlay (zstd and gzip miss), and the check
    # for a racing run's overlay before the save (zstd only); one download.
    assert (runs["pull request"].cache_lookups, runs["pull request"].downloads) == (4, 1)
    # The merge's push: the committed entry restored, and found again before the save, is
    # downloaded once.
    assert runs["promotion"].downloads == 1


def test_a_payload_without_a_field_the_run_needs_is_read_from_the_api() -> None:
    event = pull_request_event()
    info = pull_request_from_event(event)
    assert info is not None
    assert (info.number, info.title, info.author) == (7, "Add a retry to the fetcher", "mona")
    del event["pull_request"]["html_url"]
    assert pull_request_from_event(event) is None
    assert pull_request_from_event({"pull_request": "not an object"}) is None
