"""Inline reviews through the whole action: one review per run whose anchors the GitHub fake
validates, the findings ledger across three pushes, incremental review after a normal push and a
full one after a force push, and feedback becoming memory proposals by trust."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_action.evaluation.github.reviews import Comparison
from memory_action.github.pull_request import ChangedFile
from memory_action.review.answer import ANSWER_TOOL
from memory_action.review.findings import Finding
from memory_action.review.ledger import fingerprint
from memory_action.store.local import LocalDirectoryStore
from tests.fakes.github_api import HEAD_SHA, FakeGitHub, FakePullRequest, changed_file
from tests.fakes.runner import ActionRunner, RunOutcome, pull_request_event, reply_event
from tests.fakes.scripted_model import ScriptedChatModel, tool_call

PR_REF = "refs/pull/7/merge"
HEAD2, HEAD3 = "a" * 40, "b" * 40
FETCH_V1 = (
    "@@ -1,2 +1,6 @@\n def fetch(url):\n+    for attempt in range(3):\n+        data = get(url)\n"
    "+        if data is None:\n+            continue\n     return get(url)\n"
)
# Push 2: ``continue`` became ``sleep(1)`` (the finding on it is outdated); the rest stays.
FETCH_V2 = FETCH_V1.replace("+            continue\n", "+            sleep(1)\n")
UTIL = "@@ -0,0 +1,2 @@\n+def sleep(s):\n+    pass\n"
LOOP = {"path": "src/fetch.py", "line": 2, "title": "The loop never retries", "body": "It returns."}
NONE = {
    "path": "src/fetch.py",
    "line": 5,
    "title": "Skips on None",
    "body": "Log it.",
    "side": "RIGHT",
}
NOWHERE = {"path": "src/fetch.py", "line": 40, "title": "Not in the diff", "body": "Far away."}
UTIL3 = "@@ -0,0 +1,3 @@\n+def sleep(s):\n+    pass\n+\n"
SLEEP = {"path": "src/util.py", "line": 2, "title": "sleep does nothing", "body": "Use time."}


def answer(*findings: dict[str, Any], fixed: tuple[str, ...] = ()) -> Any:
    args = {"summary": "A retry loop.", "findings": list(findings), "fixed": list(fixed)}
    return tool_call(ANSWER_TOOL, args)


def files(*pairs: tuple[str, str]) -> list[dict[str, Any]]:
    return [changed_file(path, patch) for path, patch in pairs]


def as_changed(found: list[dict[str, Any]]) -> list[ChangedFile]:
    return [
        ChangedFile(
            path=f["filename"], status=f["status"], additions=0, deletions=0, patch=f["patch"]
        )
        for f in found
    ]


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()
    fake.add_pull(FakePullRequest(files=files(("src/fetch.py", FETCH_V1))))
    with fake.serve():
        yield fake


def push(github: FakeGitHub, head: str, found: list[dict[str, Any]], status: str = "ahead") -> None:
    pull = github.pulls[7]
    changed = [f for f in found if f not in pull.files]
    github.reviews.compare_as(pull.head_sha, head, Comparison(status=status, files=changed))
    pull.head_sha, pull.files = head, found


def run(runner: ActionRunner, model: ScriptedChatModel, head: str, action: str) -> RunOutcome:
    event = pull_request_event(action=action, head_sha=head)
    outcome = runner.run("pull_request", event, PR_REF, model)
    assert outcome.exit_code == 0, outcome.stdout + outcome.stderr
    return outcome


def ledger(runner: ActionRunner) -> dict[str, Any]:
    store = LocalDirectoryStore(runner.store_dir)
    newest = max(store.entries(), key=lambda e: e.key)
    state = json.loads(store.read_entry(newest.key)[".memory-agent/state.json"])
    review: dict[str, Any] = state["review"]
    return review


def first_request(model: ScriptedChatModel) -> str:
    return str(model.seen[0][-1].content)


def test_three_pushes_never_repeat_a_finding_and_mark_fixed_and_outdated(
    github: FakeGitHub, tmp_path: Path
) -> None:
    runner = ActionRunner(tmp_path)

    first = run(
        runner, ScriptedChatModel.from_script(answer(LOOP, NONE, NOWHERE)), HEAD_SHA, "opened"
    )

    posted = github.reviews.posted(7)
    assert [(c["path"], c["line"]) for c in posted] == [("src/fetch.py", 2), ("src/fetch.py", 5)]
    [review] = github.reviews.reviews[7]
    assert "Not in the diff" in review["body"]  # no valid anchor: in the review's body
    assert github.reviews.rejected == []
    [comment] = github.bodies(7)
    assert "2 new comments on the changed lines" in comment and review["html_url"] in comment
    assert first.outputs["outcome"] == "reviewed"
    assert {e["state"] for e in ledger(runner)["entries"]} == {"open"}

    v2 = files(("src/fetch.py", FETCH_V2), ("src/util.py", UTIL))
    push(github, HEAD2, v2)
    second_model = ScriptedChatModel.from_script(answer(LOOP, NOWHERE, SLEEP))
    run(runner, second_model, HEAD2, "synchronize")

    assert "Open findings of earlier reviews" in first_request(second_model)
    posted = github.reviews.posted(7)
    assert [(c["path"], c["line"]) for c in posted][2:] == [("src/util.py", 2)]  # only the new
    assert "Not in the diff" not in github.reviews.reviews[7][1]["body"]  # nor in the body
    states = {e["title"]: e["state"] for e in ledger(runner)["entries"]}
    assert states["Skips on None"] == "outdated"  # its line changed
    assert states["The loop never retries"] == "open"

    loop_id = fingerprint(Finding.model_validate(LOOP), as_changed(v2)).fingerprint[:8]
    # Push 3 changes only src/util.py; the model says the loop's finding is fixed (elsewhere).
    push(github, HEAD3, files(("src/fetch.py", FETCH_V2), ("src/util.py", UTIL3)))
    run(
        runner,
        ScriptedChatModel.from_script(answer(LOOP, SLEEP, fixed=(loop_id,))),
        HEAD3,
        "synchronize",
    )

    posted = github.reviews.posted(7)
    assert len(posted) == 3
    bodies = [(c["path"], c["body"]) for c in posted]
    assert len(set(bodies)) == len(bodies)  # nothing posted twice across three pushes
    states = {e["title"]: e["state"] for e in ledger(runner)["entries"]}
    assert states == {
        "The loop never retries": "fixed",
        "Skips on None": "outdated",
        "Not in the diff": "open",
        "sleep does nothing": "open",
    }
    assert github.reviews.rejected == []
    assert ledger(runner)["head"] == HEAD3


def test_a_normal_push_is_reviewed_incrementally_and_a_force_push_in_full(
    github: FakeGitHub, tmp_path: Path
) -> None:
    runner = ActionRunner(tmp_path)
    run(runner, ScriptedChatModel.from_script(answer()), HEAD_SHA, "opened")

    push(github, HEAD2, files(("src/fetch.py", FETCH_V1), ("src/util.py", UTIL)))
    model = ScriptedChatModel.from_script(answer())
    second = run(runner, model, HEAD2, "synchronize")

    request = first_request(model)
    assert "### added src/util.py" in request or "src/util.py (+2" in request
    assert "### modified src/fetch.py" not in request
    assert "unchanged since the last review: src/fetch.py" in request
    [comment] = github.bodies(7)
    assert "Incremental review: 1 files changed since 6dcb09b were reviewed" in comment
    assert second.outputs["files_reviewed"] == "1"

    push(github, HEAD3, files(("src/fetch.py", FETCH_V2), ("src/util.py", UTIL)), "diverged")
    model = ScriptedChatModel.from_script(answer())
    run(runner, model, HEAD3, "synchronize")

    request = first_request(model)
    assert "src/fetch.py" in request and "src/util.py" in request
    assert "unchanged since the last review" not in request
    [comment] = github.bodies(7)
    assert "Full review: the branch was rewritten since aaaaaaa (a force push)" in comment


def test_feedback_from_people_with_write_access_becomes_a_ticked_proposal(
    github: FakeGitHub, tmp_path: Path
) -> None:
    runner = ActionRunner(tmp_path)
    run(runner, ScriptedChatModel.from_script(answer(LOOP, NONE)), HEAD_SHA, "opened")
    loop, none = github.reviews.posted(7)
    github.reviews.reply(7, loop["id"], "mona", "This is intended, because the caller retries.")
    github.reviews.react(none["id"], "outsider", "-1")  # no write access: only counted

    push(github, HEAD2, files(("src/fetch.py", FETCH_V1)))
    model = ScriptedChatModel.from_script(answer(LOOP, NONE))
    outcome = run(runner, model, HEAD2, "synchronize")

    [comment] = github.bodies(7)
    assert "- [x] <!-- memory-agent:item" in comment  # a trusted run: ticked
    assert 'do not flag "The loop never retries" in src/fetch.py' in comment
    assert "the caller retries. (@mona)" in comment
    assert "Skips on None" not in comment.split("Proposed memory changes")[-1]
    assert "1 dismissals from people without write access" in outcome.summary
    states = {e["title"]: e["state"] for e in ledger(runner)["entries"]}
    assert states == {"The loop never retries": "dismissed", "Skips on None": "open"}
    assert len(github.reviews.posted(7)) == 2  # nothing new, nothing repeated


def test_without_memory_the_bot_s_own_comments_keep_it_from_repeating(
    github: FakeGitHub, tmp_path: Path
) -> None:
    """No cache, no ledger: the comments already on the pull request are the record."""
    runner = ActionRunner(tmp_path, inputs={"enable_memory": "false"})
    run(runner, ScriptedChatModel.from_script(answer(LOOP)), HEAD_SHA, "opened")
    push(github, HEAD2, files(("src/fetch.py", FETCH_V2)))
    run(runner, ScriptedChatModel.from_script(answer(LOOP)), HEAD2, "synchronize")

    assert len(github.reviews.posted(7)) == 1
    assert len(github.reviews.reviews[7]) == 1  # the second run had nothing new to post


def test_a_reply_to_the_agents_comment_is_a_request_to_it(
    github: FakeGitHub, tmp_path: Path
) -> None:
    runner = ActionRunner(tmp_path)
    run(runner, ScriptedChatModel.from_script(answer(LOOP)), HEAD_SHA, "opened")
    [posted] = github.reviews.posted(7)
    model = ScriptedChatModel.from_script(answer())

    outcome = runner.run(
        "pull_request_review_comment",
        reply_event(posted["id"], "Why would it never retry?"),
        PR_REF,
        model,
    )

    assert outcome.exit_code == 0, outcome.stdout
    assert "Why would it never retry?" in first_request(model)
    assert len(github.reviews.posted(7)) == 1  # nothing repeated


def test_a_reply_to_someone_elses_review_comment_is_not_the_agents_business(
    github: FakeGitHub, tmp_path: Path
) -> None:
    runner = ActionRunner(tmp_path)
    run(runner, ScriptedChatModel.from_script(answer(LOOP)), HEAD_SHA, "opened")
    [posted] = github.reviews.posted(7)
    human = github.reviews.reply(7, posted["id"], "octocat", "A person's own comment.")
    model = ScriptedChatModel.from_script()

    outcome = runner.run("pull_request_review_comment", reply_event(human, "+1"), PR_REF, model)

    assert outcome.exit_code == 0, outcome.stdout
    assert "a reply to a review comment the agent did not write" in outcome.stdout
    assert model.calls == 0


LOCK = '@@ -1,1 +1,1 @@\n-{}\n+{"lockfileVersion": 3}\n'
MINIFIED = "@@ -0,0 +1,1 @@\n+var a=1;\n"


@pytest.mark.parametrize(
    "finding",
    [
        {"path": "package-lock.json", "line": 1, "title": "Lock drift", "body": "Pin it."},
        {"path": "vendor/lib.py", "line": 1, "title": "Vendored bug", "body": "Patch it."},
        {"path": "dist/app.min.js", "line": 1, "title": "Minified bug", "body": "Fix it."},
        {"path": "src/excluded.py", "line": 1, "title": "Excluded bug", "body": "Fix it."},
        {"path": "src/ghost.py", "line": 1, "title": "Ghost bug", "body": "Not in the diff."},
    ],
    ids=["lock", "vendored", "minified", "excluded", "not-in-the-diff"],
)
def test_findings_on_files_the_model_was_not_shown_are_never_posted(
    tmp_path: Path, finding: dict[str, Any]
) -> None:
    fake = FakeGitHub()
    fake.add_pull(
        FakePullRequest(
            files=files(
                ("src/fetch.py", FETCH_V1),
                ("package-lock.json", LOCK),
                ("vendor/lib.py", UTIL),
                ("dist/app.min.js", MINIFIED),
                ("src/excluded.py", UTIL),
            )
        )
    )
    runner = ActionRunner(tmp_path, inputs={"exclude": "src/excluded.py"})
    model = ScriptedChatModel.from_script(answer(LOOP, finding))
    with fake.serve():
        outcome = run(runner, model, HEAD_SHA, "opened")
    assert finding["path"] not in first_request(model).split("Not reviewed")[0]
    assert [(c["path"], c["line"]) for c in fake.reviews.posted(7)] == [("src/fetch.py", 2)]
    [review] = fake.reviews.reviews[7]
    everything = review["body"] + "".join(fake.bodies(7)) + outcome.summary
    assert finding["title"] not in everything
    assert "1 finding on a file the model was not shown was not posted" in outcome.summary
    assert all(e["path"] == "src/fetch.py" for e in ledger(runner)["entries"])
