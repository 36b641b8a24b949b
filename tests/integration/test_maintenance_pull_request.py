"""``maintenance_output: pull_request`` with the git store, over a real checkout and the GitHub
fake: maintenance's commit goes to a new branch and a pull request into the memory branch,
which does not move; every refusal is reported once and changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_action.evaluation.github.git_data import FakeCommit, OpenedPull
from memory_action.store.git import MEMORY_BRANCH
from tests.fakes.github_api import FakeGitHub
from tests.fakes.maintenance_checkout import (
    checkout_runner,
    maintain,
    seed_without_digest,
    write,
)
from tests.fakes.runner import ActionRunner

COMMITTED = "memory-agent/v1/memory-agent/repo/committed/AGENTS.md"
KEPT = "- Retries go through `src/app.py:fetch_retry`, never a bare loop.\n"
STALE = "- Settings are parsed in `src/settings.py`.\n"
SEEDED = f"# Memory\n{KEPT}{STALE}"
CLEAN = f"# Memory\n{KEPT}"
TITLE = "memory-agent: maintenance of repository memory (default branch main)"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub().serve() as fake:
        yield fake


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ActionRunner:
    return checkout_runner(tmp_path, monkeypatch, memory_store="git")


def seed(runner: ActionRunner, github: FakeGitHub, text: str = SEEDED) -> FakeCommit:
    """Memory committed directly (``commit``), without a maintenance digest (the checkout is
    hidden, so citations are not checked); then the next runs open pull requests."""
    seed_without_digest(runner, text)
    runner.inputs["maintenance_output"] = "pull_request"
    head = github.git.head(MEMORY_BRANCH)
    assert head is not None and head.files[COMMITTED] == text
    return head


def next_branch(runner: ActionRunner) -> str:
    return f"memory-agent-maintenance/{runner.run_id + 1}-1"  # the runner's attempt is 1


def assert_unchanged(github: FakeGitHub, before: FakeCommit) -> None:
    head = github.git.head(MEMORY_BRANCH)
    assert head is not None and head.oid == before.oid


def test_maintenance_opens_a_pull_request_and_leaves_the_memory_branch(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    before = seed(runner, github)
    branch = next_branch(runner)
    outcome, _ = maintain(runner, write(CLEAN), "Removed the stale item.")

    assert_unchanged(github, before)
    [pull] = github.git.opened
    assert (pull.head, pull.base, pull.title) == (branch, MEMORY_BRANCH, TITLE)
    assert "`src/settings.py` is not in the default branch" in pull.body  # the reason
    assert "-- Settings are parsed in" in pull.body.replace("\n", "")  # the diff
    proposed = github.git.head(branch)
    assert proposed is not None and proposed.files[COMMITTED] == CLEAN
    assert proposed.parents == (before.oid,)  # made at the memory branch's head
    assert proposed.verified  # createCommitOnBranch, as a direct save
    assert proposed.headline == before.headline  # the message a direct save would have
    assert f"Run: https://github.com/{_repo(github)}/actions/runs/{runner.run_id}" in (
        proposed.body
    )

    url = f"https://github.com/{_repo(github)}/pull/{pull.number}"
    assert "::notice" in outcome.stdout and url in outcome.stdout
    assert url in outcome.summary
    assert outcome.outputs["saved_key"] == ""  # memory itself was not saved
    assert outcome.outputs["memory_changed"] == "true"

    # Not merged: the next maintenance reads memory as it was, and checks it again.
    again, model = maintain(runner, "Waiting for the pull request.")
    assert model.calls == 1
    assert STALE.strip() in model.system_prompts[0]
    assert "pull request" not in again.stdout
    head = github.git.head(MEMORY_BRANCH)
    assert head is not None and head.files[COMMITTED] == SEEDED  # still as it was
    assert len(github.git.opened) == 1  # changed nothing: no second pull request


def test_a_run_that_changes_no_memory_opens_no_pull_request(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    before = seed(runner, github, CLEAN)
    _, model = maintain(runner, "Nothing to change.")
    assert model.calls == 1
    assert github.git.opened == []
    head = github.git.head(MEMORY_BRANCH)
    assert head is not None and head.oid != before.oid  # only what it checked, as commit does
    assert head.files[COMMITTED] == CLEAN
    _, quiet = maintain(runner)
    assert quiet.calls == 0  # and so the next maintenance skips the model


@pytest.mark.parametrize(
    ("refuse", "said"),
    [
        ("pulls_read_only", "Resource not accessible by integration"),
        ("actions_may_not_open", "GitHub Actions is not permitted to create"),
        ("already_open", "A pull request already exists for"),
    ],
)
def test_a_refused_pull_request_is_reported_once_and_keeps_the_changes_on_the_branch(
    runner: ActionRunner, github: FakeGitHub, refuse: str, said: str
) -> None:
    before = seed(runner, github)
    branch = next_branch(runner)
    if refuse == "pulls_read_only":
        github.git.pulls_read_only = True
    elif refuse == "actions_may_not_open":
        github.git.actions_may_open_pulls = False
    else:
        github.git.opened.append(
            OpenedPull(
                number=1,
                head=branch,
                base=MEMORY_BRANCH,
                title="old",
                body="",
                head_sha=before.oid,
            )
        )
    outcome, _ = maintain(runner, write(CLEAN), "Removed the stale item.")

    assert_unchanged(github, before)
    assert outcome.stdout.count(said) == 1
    assert "::warning" in outcome.stdout
    assert f"its changes are on the branch {branch}" in outcome.stdout
    assert "pull-requests: write" in outcome.stdout
    proposed = github.git.head(branch)
    assert proposed is not None and proposed.files[COMMITTED] == CLEAN  # nothing lost
    assert "-- Settings are parsed in" in outcome.summary.replace("\n", "")
    assert outcome.outputs["saved_key"] == ""


def test_a_token_without_contents_write_writes_nothing_anywhere(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    before = seed(runner, github)
    stored = sorted(p.name for p in runner.store_dir.rglob("*"))
    github.git.read_only = True
    outcome, _ = maintain(runner, write(CLEAN), "Removed the stale item.")

    assert_unchanged(github, before)
    assert github.git.head(next_branch(runner)) is None
    assert github.git.opened == []
    assert outcome.stdout.count("Resource not accessible by integration") == 1
    assert "maintenance could not commit its changes" in outcome.stdout
    assert "contents: write" in outcome.stdout
    assert "goes on with the Actions cache" not in outcome.stdout  # no other write instead
    assert sorted(p.name for p in runner.store_dir.rglob("*")) == stored
    assert "-- Settings are parsed in" in outcome.summary.replace("\n", "")


def test_a_branch_that_exists_already_is_not_reused(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    before = seed(runner, github)
    branch = next_branch(runner)
    github.git.refs[f"refs/heads/{branch}"] = before.oid
    github.git.commit_files(branch, {"notes.txt": "someone's work\n"}, "someone's commit")
    theirs = github.git.head(branch)
    outcome, _ = maintain(runner, write(CLEAN), "Removed the stale item.")

    assert_unchanged(github, before)
    assert github.git.head(branch) == theirs
    assert github.git.opened == []
    assert outcome.stdout.count(f"the branch {branch} exists already") == 1


def _repo(github: FakeGitHub) -> str:
    return "/".join(github.repo_url.rsplit("/", 2)[-2:])
