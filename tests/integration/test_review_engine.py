"""The review engine through the whole action, on real pull requests (the click bundle), against
a server that enforces GitHub Models' free tier: every outcome (reviewed, partial, quota), a 413
then a retry, a 429 per minute then a wait, a 429 per day then a stop."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from memory_action.model.tokenizer import O200K
from memory_action.store.local import LocalDirectoryStore
from tests.fakes.click_corpus import ClickCorpus, CorpusPull
from tests.fakes.github_api import FakeGitHub
from tests.fakes.github_models_stub import Fault, FreeTier, GitHubModelsStub
from tests.fakes.runner import ActionRunner, RunOutcome, pull_request_event

LIMIT = 8_000
# 10 files, 26 KB of diff: one request counted by gpt-4.1-mini's tokenizer (two batches and a
# last request by the estimate of 3 characters a token)
TEN_FILES = "c2ed4149"
CLEANUP = "718485be"  # 34 files: more than one request
TYPING = "0103c957"  # 22 files, 229 KB of diff


@dataclass
class Review:
    outcome: RunOutcome
    stub: GitHubModelsStub
    github: FakeGitHub
    pull: CorpusPull
    runner: ActionRunner

    @property
    def comment(self) -> str:
        [body] = self.github.bodies(self.pull.number)
        return body


@contextmanager
def reviewing(
    corpus: ClickCorpus,
    sha: str,
    tmp_path: Path,
    *faults: Fault,
    limits: FreeTier | None = None,
    **inputs: str,
) -> Iterator[Review]:
    pull = corpus.pull(sha)
    github = FakeGitHub()
    github.add_pull(pull.fake())
    # The model is asked about the files a review reads (not uv.lock, a lock file).
    paths = [p for p in pull.paths if p != "uv.lock"]
    with github.serve(), GitHubModelsStub(paths, limits=limits or FreeTier()) as stub:
        stub.inject(*faults)
        runner = ActionRunner(tmp_path, inputs={"model_base_url": stub.base_url, **inputs})
        event = pull_request_event(pull.number, head_sha=pull.head_sha, base_sha=pull.base_sha)
        outcome = runner.run("pull_request", event, f"refs/pull/{pull.number}/merge")
        yield Review(outcome, stub, github, pull, runner)


def test_ten_files_are_reviewed_in_at_most_three_requests_within_the_limit(
    click_corpus: ClickCorpus, tmp_path: Path
) -> None:
    with reviewing(click_corpus, TEN_FILES, tmp_path) as review:
        outputs = review.outcome.outputs
        assert review.outcome.exit_code == 0, review.outcome.stdout
        assert outputs["outcome"] == "reviewed"
        assert (outputs["files_reviewed"], outputs["files_skipped"]) == ("10", "0")
        requests = review.stub.requests
        assert len(requests) == int(outputs["model_calls"]) <= 3
        assert all(r.status == 200 and r.tokens <= LIMIT for r in requests)
        assert int(outputs["tokens_in"]) == sum(r.tokens for r in requests)  # the usage
        # Every request carries the same memory block; the diff came in the first requests.
        assert all("<agent_memory>" in str(r.body["messages"][0]) for r in requests)
        assert set().union(*(r.seen for r in requests)) == set(review.pull.paths)
        calls = int(outputs["model_calls"])  # one since counted by gpt-4.1-mini's tokenizer
        assert f"{calls} model call{'s' if calls != 1 else ''}" in review.comment
        assert "10 files reviewed, 0 not" in review.comment


def test_what_the_call_budget_cannot_cover_is_partial_and_listed(
    click_corpus: ClickCorpus, tmp_path: Path
) -> None:
    with reviewing(click_corpus, TYPING, tmp_path, max_model_calls="4") as review:
        outputs = review.outcome.outputs
        assert review.outcome.exit_code == 0, review.outcome.stdout
        assert outputs["outcome"] == "partial"
        assert int(outputs["model_calls"]) <= 4
        assert int(outputs["files_skipped"]) > 0
        assert "<summary>Not reviewed (" in review.comment
        assert "over max_model_calls" in review.comment
        assert "**Review:** partial" in review.outcome.summary


def test_a_413_is_retried_once_smaller(click_corpus: ClickCorpus, tmp_path: Path) -> None:
    with reviewing(click_corpus, TEN_FILES, tmp_path, Fault("tokens")) as review:
        statuses = [r.status for r in review.stub.requests]
        assert review.outcome.exit_code == 0, review.outcome.stdout
        assert statuses[0] == 413 and statuses[1:] == [200] * (len(statuses) - 1)
        assert review.outcome.outputs["outcome"] == "reviewed"
        assert review.outcome.outputs["files_reviewed"] == "10"


def test_a_429_per_minute_is_waited_out(click_corpus: ClickCorpus, tmp_path: Path) -> None:
    with reviewing(click_corpus, TEN_FILES, tmp_path, Fault("minute", retry_after=7)) as review:
        assert review.outcome.exit_code == 0, review.outcome.stdout
        assert review.runner.waits == [7.0]
        assert review.outcome.outputs["outcome"] == "reviewed"


def test_the_daily_quota_stops_the_run_says_so_and_saves_nothing(
    click_corpus: ClickCorpus, tmp_path: Path
) -> None:
    # One request a day: the first part is reviewed, then the day's quota is used up.
    # Counted as GitHub Models counts gpt-4.1-mini's requests: by its tokenizer.
    day = FreeTier(per_day=1, encoding=O200K)
    with reviewing(click_corpus, CLEANUP, tmp_path, limits=day) as review:
        outputs = review.outcome.outputs
        assert review.outcome.exit_code == 0, review.outcome.stdout
        assert outputs["outcome"] == "quota"
        assert outputs["saved_key"] == ""
        assert [r.status for r in review.stub.requests] == [200, 429]  # no retry, no wait
        assert review.runner.waits == []
        text = "daily request quota for this token is used up; it frees up in about"
        assert text in review.comment
        assert text in review.outcome.summary
        assert "the run did not finish" in review.outcome.summary
        assert "the model's daily quota is used up" in review.comment  # the files left out
        store = LocalDirectoryStore(review.runner.store_dir)
        assert not review.runner.store_dir.exists() or not store.entries()


@pytest.mark.parametrize("sha", ["1f9cd54f", "3495fba1", "3b16957c"])
def test_small_pull_requests_take_one_request(
    click_corpus: ClickCorpus, tmp_path: Path, sha: str
) -> None:
    with reviewing(click_corpus, sha, tmp_path) as review:
        assert review.outcome.exit_code == 0, review.outcome.stdout
        assert review.outcome.outputs["model_calls"] == "1"
        assert review.outcome.outputs["outcome"] == "reviewed"


def test_a_lock_file_is_skipped_and_listed_with_the_reason(
    click_corpus: ClickCorpus, tmp_path: Path
) -> None:
    with reviewing(click_corpus, "3b16957c", tmp_path) as review:
        assert review.outcome.outputs["files_skipped"] == "1"
        assert "- `uv.lock`: lock file" in review.comment
        [request] = review.stub.requests
        task = str(request.body["messages"][-1]["content"])
        assert "Not reviewed: lock file: uv.lock" in task
        assert "### modified uv.lock" not in task
