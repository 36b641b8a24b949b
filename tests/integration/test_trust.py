"""Who a run trusts, end to end through ``main()`` and the fake GitHub: the repository permission
of the person whose input the run reads, never their association alone, and never a fork's
content (issue 8)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.github_api import FakeGitHub, FakePullRequest, changed_file
from tests.fakes.runner import ActionRunner, comment_event
from tests.integration.test_memory_promotion import (
    FACT_A,
    proposed_text,
    remember_all,
    ticked_text,
)

MEMBER_WHO_READS = "reader"  # an organisation member with read access only
TRIAGER = "triager"  # a collaborator with the triage role


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub(permissions={MEMBER_WHO_READS: "read", TRIAGER: "triage"})
    fake.add_pull(FakePullRequest(number=7, files=[changed_file("a.py", "+x\n")]))
    with fake.serve():
        yield fake


def comment_run(runner: ActionRunner, login: str, association: str) -> str:
    """``login`` asks the agent to remember FACT_A on #7; the comment body afterwards."""
    commented = runner.run(
        "issue_comment",
        comment_event(f"@memory-agent remember: {FACT_A}", association, login=login),
        "refs/heads/main",
        remember_all(f"# Conventions\n\n{FACT_A}\n"),
    )
    assert commented.exit_code == 0, commented.stdout
    return commented.stdout


@pytest.mark.parametrize(
    ("login", "association"), [(MEMBER_WHO_READS, "MEMBER"), (TRIAGER, "COLLABORATOR")]
)
def test_a_comment_by_someone_without_write_access_proposes_unticked_items(
    runner: ActionRunner, github: FakeGitHub, login: str, association: str
) -> None:
    comment_run(runner, login, association)

    [body] = github.bodies(7)
    assert FACT_A in proposed_text(body)
    assert FACT_A not in ticked_text(body)  # nothing is promoted unless a maintainer ticks it
    permission_calls = [url for _, url in github.calls if "/permission" in url]
    assert len(permission_calls) == 1  # once per person per run


def test_a_comment_by_a_maintainer_proposes_ticked_items(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    comment_run(runner, "mona", "MEMBER")

    [body] = github.bodies(7)
    assert FACT_A in ticked_text(body)
    # The note under the checklist tells the truth: these items are ticked.
    assert "start unticked" not in body


def test_a_maintainers_comment_on_a_fork_pull_request_is_untrusted(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    github.pulls[7].head_repo = "outside-dev/octo-repo"

    comment_run(runner, "mona", "OWNER")

    [body] = github.bodies(7)
    assert FACT_A in proposed_text(body)
    assert FACT_A not in ticked_text(body)
    assert "start unticked" in body
    assert not [url for _, url in github.calls if "/permission" in url]  # a fork: no need
