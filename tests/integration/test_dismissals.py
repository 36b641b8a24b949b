"""A dismissed finding stays dismissed on later pull requests, whatever the model says: through
the whole action, pull request 7's finding is dismissed, 7 is merged (its proposal promoted),
and pull request 8's review, whose model reports the same finding again, holds it back and says
so; the same title on other code is posted; a vetoed dismissal, or a non-writer's, holds back
nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from memory_action.review.answer import ANSWER_TOOL
from memory_action.store.local import LocalDirectoryStore
from tests.fakes.github_api import FakeGitHub, FakePullRequest, changed_file
from tests.fakes.runner import ActionRunner, RunOutcome, pull_request_event, push_event
from tests.fakes.scripted_model import ScriptedChatModel, tool_call

MERGE_SHA = "c" * 40
COMMITTED = "memory-agent/v1/memory-agent/repo/committed/"
# Two functions with the same kind of loop (the same names on its line): the finding is
# dismissed in ``fetch`` only.
PATCH = (
    "@@ -1,2 +1,9 @@\n def fetch(url):\n+    for attempt in range(3):\n+        data = get(url)\n"
    "+    return data\n+\n+\n+def poll(url):\n+    for attempt in range(5):\n+        ping(url)\n"
    "     return None\n"
)
TITLE = "The loop never retries"
IN_FETCH = {"path": "src/fetch.py", "line": 2, "title": TITLE, "body": "It returns."}
IN_POLL = {"path": "src/fetch.py", "line": 8, "title": TITLE, "body": "It returns."}


def answer(*findings: dict[str, Any]) -> Any:
    args = {"summary": "A retry loop.", "findings": list(findings), "fixed": []}
    return tool_call(ANSWER_TOOL, args)


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub(permissions={"maintainer": "write", "outsider": "read"})
    for number in (7, 8):
        fake.add_pull(FakePullRequest(number=number, files=[changed_file("src/fetch.py", PATCH)]))
    with fake.serve():
        yield fake


def review(runner: ActionRunner, number: int, *findings: dict[str, Any], action: str) -> RunOutcome:
    model = ScriptedChatModel.from_script(answer(*findings))
    event = pull_request_event(number, action=action)
    outcome = runner.run("pull_request", event, f"refs/pull/{number}/merge", model)
    assert outcome.exit_code == 0, outcome.stdout + outcome.stderr
    return outcome


def merge_7(runner: ActionRunner, github: FakeGitHub) -> RunOutcome:
    """Pull request 7 is merged: the push run on main promotes its ticked proposal."""
    github.merge(7, MERGE_SHA)
    model = ScriptedChatModel.from_script("Nothing to consolidate.")
    pushed = runner.run("push", push_event(MERGE_SHA), "refs/heads/main", model)
    assert pushed.exit_code == 0, pushed.stdout + pushed.stderr
    return pushed


def committed_memory(runner: ActionRunner) -> str:
    store = LocalDirectoryStore(runner.store_dir)
    entries = store.entries(COMMITTED)
    return store.read_entry(entries[0].key)["AGENTS.md"] if entries else ""


def dismiss_in_pr_7(runner: ActionRunner, github: FakeGitHub, *, login: str, how: str) -> None:
    """Pull request 7's review posts the finding in ``fetch``; ``login`` dismisses it (a reply
    or a 👎), and the next run of 7 reads that and proposes the memory line."""
    review(runner, 7, IN_FETCH, action="opened")
    [posted] = github.reviews.posted(7)
    if how == "reply":
        github.reviews.reply(7, posted["id"], login, "Intended, because the caller retries.")
    else:
        github.reviews.react(posted["id"], login, "-1")
    review(runner, 7, IN_FETCH, action="synchronize")
    assert len(github.reviews.posted(7)) == 1  # inside one pull request: the ledger


def untick_dismissal(github: FakeGitHub) -> None:
    """A maintainer unticks the proposed dismissal in 7's sticky comment (a veto)."""
    [body] = github.bodies(7)
    lines = body.splitlines(keepends=True)
    [number] = [i for i, line in enumerate(lines) if line.startswith("- [x]") and TITLE in line]
    lines[number] = lines[number].replace("- [x]", "- [ ]", 1)
    github.edit_comment_as(7, "maintainer", "".join(lines))


def test_a_writers_dismissal_holds_the_same_finding_back_on_a_later_pull_request(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    dismiss_in_pr_7(runner, github, login="mona", how="reply")
    merge_7(runner, github)
    memory = committed_memory(runner)
    assert "`dismissed: the loop never retries | in fetch | on for attempt in range" in memory
    assert "at src/fetch.py`" in memory

    second = review(runner, 8, IN_FETCH, IN_POLL, action="opened")

    posted = github.reviews.posted(8)
    assert [(c["path"], c["line"]) for c in posted] == [("src/fetch.py", 8)]  # poll's: other code
    [comment] = github.bodies(8)
    assert "**Held back:** 1 finding was not posted" in comment
    assert "<details><summary>Held back by memory (1 finding)</summary>" in comment
    held = comment.split("Held back by memory (1 finding)</summary>")[1].split("</details>")[0]
    assert f"**{TITLE}** at `src/fetch.py:2`" in held
    assert "do not flag" in held and "dismissed: the loop never retries" in held
    assert "Held back by memory (1 finding)" in second.summary  # the job summary too


def test_a_vetoed_dismissal_holds_nothing_back(runner: ActionRunner, github: FakeGitHub) -> None:
    dismiss_in_pr_7(runner, github, login="mona", how="thumbs-down")
    untick_dismissal(github)
    merge_7(runner, github)
    assert "do not flag" not in committed_memory(runner)

    review(runner, 8, IN_FETCH, IN_POLL, action="opened")

    assert [c["line"] for c in github.reviews.posted(8)] == [2, 8]
    [comment] = github.bodies(8)
    assert "Held back" not in comment


def test_a_non_writers_thumbs_down_holds_nothing_back(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    dismiss_in_pr_7(runner, github, login="outsider", how="thumbs-down")
    merge_7(runner, github)
    assert "do not flag" not in committed_memory(runner)

    review(runner, 8, IN_FETCH, action="opened")

    assert [c["line"] for c in github.reviews.posted(8)] == [2]
    assert "Held back" not in github.bodies(8)[0]
