"""A permission look-up that fails in any way means untrusted, said in one line, through the whole
action: an answer of the wrong type (it raised ``TypeError`` before), an HTTP error, a body that
is not JSON, an answer without a permission, an exception in the client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from memory_action.evaluation.github import contract as github_contract
from memory_action.evaluation.github.wire import json_reply
from tests.fakes.github_api import FakeGitHub, FakePullRequest, Reply, changed_file, error_reply
from tests.fakes.runner import ActionRunner, comment_event
from tests.integration.test_memory_promotion import (
    FACT_A,
    proposed_text,
    remember_all,
    ticked_text,
)

LOGIN = "mona"  # a member, whose association alone would let the look-up decide
FAILURES: dict[str, Reply | Exception] = {
    "a permission of the wrong type": json_reply({"permission": ["write"], "role_name": "write"}),
    "a role of the wrong type": json_reply({"permission": "read", "role_name": {"w": 1}}),
    "no permission at all": json_reply({"role_name": "write"}),
    "a list": json_reply(["write"]),
    "an HTTP error": error_reply(403, "Resource not accessible by integration"),
    "a body that is not JSON": (200, {"Content-Type": "application/json"}, '{"permission": "wr'),
    "an exception in the client": ValueError("the answer could not be read"),
    "a transport error": requests.ConnectionError("connection reset"),
}


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()
    fake.add_pull(FakePullRequest(number=7, files=[changed_file("a.py", "+x\n")]))
    with fake.serve():
        yield fake


@pytest.mark.parametrize("failure", FAILURES, ids=list(FAILURES))
def test_a_failed_permission_look_up_is_untrusted_and_said_in_one_line(
    runner: ActionRunner, github: FakeGitHub, failure: str
) -> None:
    github.permission_replies[LOGIN] = FAILURES[failure]

    outcome = runner.run(
        "issue_comment",
        comment_event(f"Please remember: {FACT_A}", "MEMBER", login=LOGIN),
        "refs/heads/main",
        remember_all(f"# Conventions\n\n{FACT_A}\n"),
    )
    github_contract.take()  # the broken answers break GitHub's contract on purpose

    assert outcome.exit_code == 0, outcome.stdout + outcome.stderr
    assert "Traceback" not in outcome.stdout + outcome.stderr
    [body] = github.bodies(7)
    assert FACT_A in proposed_text(body)
    assert FACT_A not in ticked_text(body)  # untrusted: proposed, never ticked
    warnings = [line for line in outcome.stdout.splitlines() if line.startswith("::warning")]
    [said] = [line for line in warnings if "without write access" in line]
    assert said.startswith(
        f"::warning::{LOGIN} is treated as without write access: GitHub did not tell their "
        "repository permission ("
    )
    permission_calls = [url for _, url in github.calls if "/permission" in url]
    assert len(permission_calls) == 1  # asked once, answered or not
