"""Memory a pull request learned reaches committed memory when, and only when, it is merged, and
only the items people left ticked (issue: promotion end to end)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from memory_action.memory.proposals import apply_items, checked_items, decode_block
from memory_action.store.local import LocalDirectoryStore
from tests.fakes.github_api import FakeGitHub, FakePullRequest, changed_file
from tests.fakes.runner import (
    ActionRunner,
    RunOutcome,
    comment_event,
    pull_request_event,
    push_event,
)
from tests.fakes.scripted_model import ScriptedChatModel, tool_call

MEMORY = ".agent-memory/AGENTS.md"
COMMITTED = "memory-agent/v1/memory-agent/repo/committed/"
MERGE_SHA = "a" * 40
FACT_A = "- Network calls retry with tenacity."
FACT_B = "- Fixtures live in tests/conftest.py."


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub(permissions={"maintainer": "write", "outsider": "read"})
    for number in (7, 8):
        fake.add_pull(FakePullRequest(number=number, files=[changed_file("a.py", "+x\n")]))
    with fake.serve():
        yield fake


def push(
    runner: ActionRunner, model: ScriptedChatModel | None = None, sha: str = MERGE_SHA
) -> RunOutcome:
    """A push to main whose head commit is ``sha``; its maintenance run changes nothing unless
    ``model`` does."""
    if model is None:
        model = ScriptedChatModel.from_script("Nothing to consolidate.")
    return runner.run("push", push_event(sha), "refs/heads/main", model)


def learn(*facts: str) -> ScriptedChatModel:
    content = "# Conventions\n\n" + "".join(f"{fact}\n" for fact in facts)
    return ScriptedChatModel.from_script(
        tool_call("write_file", {"file_path": MEMORY, "content": content}), "Reviewed."
    )


def untick(body: str, fact: str) -> str:
    """Untick the checklist line that names ``fact``, as a person does in the browser."""
    lines = body.splitlines(keepends=True)
    for number, line in enumerate(lines):
        if line.startswith("- [x]") and fact.removeprefix("- ").split(" ")[0] in line:
            lines[number] = line.replace("- [x]", "- [ ]", 1)
            return "".join(lines)
    raise AssertionError(f"no ticked item for {fact!r} in the comment")


def committed_entry(runner: ActionRunner) -> dict[str, str]:
    store = LocalDirectoryStore(runner.store_dir)
    newest = store.entries(COMMITTED)[0]
    return store.read_entry(newest.key)


def test_a_maintainer_vetoes_one_of_two_items_and_only_the_other_is_promoted(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    # Two separate hunks: a fact under one heading and another under a second heading, with an
    # unchanged line between them in the committed memory the PR started from.
    seed = "# Tests\n\n- Use pytest.\n\n# Network\n\n- Use httpx.\n"
    seeded = push(
        runner,
        ScriptedChatModel.from_script(
            tool_call("write_file", {"file_path": MEMORY, "content": seed}), "Seeded."
        ),
        sha="b" * 40,
    )
    assert seeded.outputs["saved_key"], seeded.stdout
    learned = seed.replace("- Use pytest.\n", f"- Use pytest.\n{FACT_B}\n").replace(
        "- Use httpx.\n", f"- Use httpx.\n{FACT_A}\n"
    )
    pr_run = runner.run(
        "pull_request",
        pull_request_event(),
        "refs/pull/7/merge",
        ScriptedChatModel.from_script(
            tool_call("write_file", {"file_path": MEMORY, "content": learned}), "Reviewed."
        ),
    )
    assert pr_run.exit_code == 0, pr_run.stdout

    [body] = github.bodies(7)
    assert body.count("- [x] <!-- memory-agent:item") == 2  # both proposed, ticked by default
    github.edit_comment_as(7, "maintainer", untick(body, FACT_B))

    github.merge(7, MERGE_SHA)
    pushed = push(runner)

    assert pushed.exit_code == 0, pushed.stdout
    entry = committed_entry(runner)
    assert FACT_A in entry["AGENTS.md"]
    assert FACT_B not in entry["AGENTS.md"]
    assert entry["AGENTS.md"].startswith("# Tests\n\n- Use pytest.\n")
    stamps = json.loads(entry["provenance.json"])["entries"]
    assert stamps[FACT_A]["pr"] == 7
    assert stamps[FACT_A]["event"] == "pull_request"
    assert stamps[FACT_A]["run_id"] == pr_run_id(pr_run.summary)
    assert "promoted 1 ticked memory change(s) of #7" in pushed.summary

    # A later pull request starts from the promoted memory.
    later = ScriptedChatModel.from_script("Fine.")
    assert (
        runner.run("pull_request", pull_request_event(8), "refs/pull/8/merge", later).exit_code == 0
    )
    assert FACT_A in later.system_prompts[0]
    assert FACT_B not in later.system_prompts[0]


def pr_run_id(summary: str) -> str:
    match = re.search(r"run (\d+)-1 pull_request", summary)
    assert match is not None, summary
    return match.group(1)


def test_a_comment_edited_by_someone_without_write_access_is_ignored(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    runner.run("pull_request", pull_request_event(), "refs/pull/7/merge", learn(FACT_A))
    [body] = github.bodies(7)
    github.edit_comment_as(7, "outsider", body)  # even an edit that changes nothing

    github.merge(7, MERGE_SHA)
    pushed = push(runner)

    assert pushed.exit_code == 0, pushed.stdout
    assert "nothing promoted from #7" in pushed.summary
    assert "outsider" in pushed.summary
    assert LocalDirectoryStore(runner.store_dir).entries(COMMITTED) == []


def test_an_unmerged_pull_request_is_never_promoted(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    runner.run("pull_request", pull_request_event(), "refs/pull/7/merge", learn(FACT_A))

    pushed = push(runner)

    assert pushed.exit_code == 0, pushed.stdout
    assert LocalDirectoryStore(runner.store_dir).entries(COMMITTED) == []


# --- issue_comment runs start from the pull request's proposed memory ---------------------------

FACT_C = "- Log with structlog, never print."


def remember(after: str, fact: str) -> ScriptedChatModel:
    """A model that adds ``fact`` on the line after ``after`` in memory, then answers."""
    return ScriptedChatModel.from_script(
        tool_call(
            "edit_file",
            {"file_path": MEMORY, "old_string": after, "new_string": f"{after}\n{fact}"},
        ),
        "Remembered.",
    )


def remember_all(content: str) -> ScriptedChatModel:
    return ScriptedChatModel.from_script(
        tool_call("write_file", {"file_path": MEMORY, "content": content}), "Done."
    )


def proposed_text(body: str) -> str:
    """The memory the comment's proposal holds, every item applied, ticked or not."""
    proposal = decode_block(body, "memory-agent")
    assert proposal is not None, body
    return apply_items(proposal.base, proposal.items)


def ticked_text(body: str) -> str:
    proposal = decode_block(body, "memory-agent")
    assert proposal is not None, body
    return apply_items(proposal.base, checked_items(body, proposal))


def test_a_comment_command_builds_on_the_proposed_memory_and_both_facts_are_promoted(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    pr_run = runner.run("pull_request", pull_request_event(), "refs/pull/7/merge", learn(FACT_A))
    assert pr_run.exit_code == 0, pr_run.stdout
    [first_body] = github.bodies(7)
    [comment_id] = [comment["id"] for comment in github.comments[7]]
    assert FACT_A in ticked_text(first_body)

    model = remember(FACT_A, FACT_B)
    commented = runner.run(
        "issue_comment",
        comment_event("Please remember fixtures live in tests/conftest.py"),
        "refs/heads/main",
        model,
    )

    assert commented.exit_code == 0, commented.stdout
    assert FACT_A in model.system_prompts[0]  # it started from the PR's proposed memory
    assert commented.outputs["saved_key"] == ""  # a read-only cache token: nothing saved
    [body] = github.bodies(7)  # the same sticky comment, updated
    assert [comment["id"] for comment in github.comments[7]] == [comment_id]
    assert "Remembered." in body
    assert FACT_A in proposed_text(body)
    assert FACT_B in proposed_text(body)
    assert ticked_text(body) == proposed_text(body)  # a collaborator's items start ticked

    github.merge(7, MERGE_SHA)
    pushed = push(runner)

    assert pushed.exit_code == 0, pushed.stdout
    entry = committed_entry(runner)
    assert FACT_A in entry["AGENTS.md"]
    assert FACT_B in entry["AGENTS.md"]
    stamps = json.loads(entry["provenance.json"])["entries"]
    assert stamps[FACT_B]["event"] == "issue_comment"
    assert stamps[FACT_B]["pr"] == 7


TWO_HEADINGS = "# Tests\n\n- Use pytest.\n\n# Network\n\n- Use httpx.\n"


def propose_two_and_veto_one(runner: ActionRunner, github: FakeGitHub) -> None:
    """Committed memory with two headings; #7 adds FACT_B under one and FACT_A under the other
    (two items); a maintainer unticks FACT_B."""
    seeded = push(runner, remember_all(TWO_HEADINGS), sha="b" * 40)
    assert seeded.outputs["saved_key"], seeded.stdout
    learned = TWO_HEADINGS.replace("- Use pytest.\n", f"- Use pytest.\n{FACT_B}\n").replace(
        "- Use httpx.\n", f"- Use httpx.\n{FACT_A}\n"
    )
    pr_run = runner.run(
        "pull_request", pull_request_event(), "refs/pull/7/merge", remember_all(learned)
    )
    assert pr_run.exit_code == 0, pr_run.stdout
    [body] = github.bodies(7)
    github.edit_comment_as(7, "maintainer", untick(body, FACT_B))


def assert_vetoed(body: str, fact: str) -> None:
    """``fact`` is still listed in the comment, and its item is unticked."""
    assert fact in proposed_text(body), body
    assert fact not in ticked_text(body), body


def promoted_after_merge(runner: ActionRunner, github: FakeGitHub) -> str:
    github.merge(7, MERGE_SHA)
    pushed = push(runner)
    assert pushed.exit_code == 0, pushed.stdout
    return committed_entry(runner)["AGENTS.md"]


def test_a_veto_outlives_a_comment_run_that_rewrites_the_comment(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    propose_two_and_veto_one(runner, github)
    model = ScriptedChatModel.from_script(
        tool_call(
            "edit_file",
            {
                "file_path": MEMORY,
                "old_string": "# Tests\n",
                "new_string": f"# Style\n\n{FACT_C}\n\n# Tests\n",
            },
        ),
        "Remembered.",
    )

    commented = runner.run(
        "issue_comment",
        comment_event("Please remember: log with structlog"),
        "refs/heads/main",
        model,
    )

    assert commented.exit_code == 0, commented.stdout
    assert FACT_A in model.system_prompts[0]
    assert FACT_B not in model.system_prompts[0]  # vetoed: not memory the comment run starts from
    [rewritten] = github.bodies(7)
    assert FACT_C in ticked_text(rewritten)
    assert FACT_A in ticked_text(rewritten)
    assert_vetoed(rewritten, FACT_B)
    assert re.search(r"- \[ \] <!-- memory-agent:item \w+ --> \*\*add\*\* `- Fixtures", rewritten)

    text = promoted_after_merge(runner, github)
    assert FACT_A in text
    assert FACT_C in text
    assert FACT_B not in text


def test_a_veto_outlives_a_comment_run_and_the_pull_requests_next_run(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    """The next PR run restores its cached overlay, which still holds the vetoed item."""
    propose_two_and_veto_one(runner, github)
    question = ScriptedChatModel.from_script("I remember that retries use tenacity.")
    asked = runner.run(
        "issue_comment",
        comment_event("@memory-agent what do you remember about retries?"),
        "refs/heads/main",
        question,
    )
    assert asked.exit_code == 0, asked.stdout
    [after_comment] = github.bodies(7)
    assert_vetoed(after_comment, FACT_B)

    pushed_to_pr = runner.run(
        "pull_request",
        pull_request_event(action="synchronize"),
        "refs/pull/7/merge",
        ScriptedChatModel.from_script("Still fine."),
    )

    assert pushed_to_pr.exit_code == 0, pushed_to_pr.stdout
    [after_push] = github.bodies(7)
    assert_vetoed(after_push, FACT_B)
    assert FACT_A in ticked_text(after_push)
    text = promoted_after_merge(runner, github)
    assert FACT_A in text
    assert FACT_B not in text


def test_a_comment_run_that_adds_a_fact_next_to_a_vetoed_one_proposes_it_on_its_own(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    """The new fact, another run's, is its own item (issue 18): the veto of the one beside it
    holds, and the new one can be kept or vetoed alone."""
    propose_two_and_veto_one(runner, github)

    commented = runner.run(
        "issue_comment",
        comment_event("Please remember: log with structlog"),
        "refs/heads/main",
        remember("- Use pytest.", FACT_C),
    )

    assert commented.exit_code == 0, commented.stdout
    [rewritten] = github.bodies(7)
    assert_vetoed(rewritten, FACT_B)
    assert FACT_C in ticked_text(rewritten)
    assert FACT_A in ticked_text(rewritten)
    text = promoted_after_merge(runner, github)
    assert FACT_A in text
    assert FACT_B not in text
    assert FACT_C in text


def test_a_veto_holds_when_a_later_run_adds_a_fact_right_next_to_the_vetoed_one(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    """The later line, written by another run, is its own item (issue 18): the veto of the first
    holds (its item keeps its id), and the new line is proposed, ticked, on its own."""
    seed = "# Conventions\n\n- Use pytest.\n"
    seeded = push(runner, remember_all(seed), sha="b" * 40)
    assert seeded.outputs["saved_key"], seeded.stdout
    runner.run(
        "pull_request", pull_request_event(), "refs/pull/7/merge", remember("- Use pytest.", FACT_A)
    )
    [body] = github.bodies(7)
    github.edit_comment_as(7, "maintainer", untick(body, FACT_A))

    later = runner.run(
        "pull_request",
        pull_request_event(action="synchronize"),
        "refs/pull/7/merge",
        remember(FACT_A, FACT_B),
    )

    assert later.exit_code == 0, later.stdout
    [rewritten] = github.bodies(7)
    assert FACT_A in proposed_text(rewritten)
    assert FACT_A not in ticked_text(rewritten), rewritten

    github.merge(7, MERGE_SHA)
    pushed = push(runner)
    assert pushed.exit_code == 0, pushed.stdout
    assert f"{FACT_B}\n" in proposed_text(rewritten)
    assert committed_entry(runner)["AGENTS.md"] == f"{seed}{FACT_B}\n"  # the veto held


# --- promotion when GitHub cannot say which pull requests were merged ---------------------------


@dataclass
class LookupFails(FakeGitHub):
    """GitHub answers everything but the pull requests of a commit (a token without access)."""

    failing: bool = True

    def _commit_pulls(self, request: Any, sha: str) -> tuple[int, dict[str, str], str]:
        if self.failing:
            return 403, {}, json.dumps({"message": "Resource not accessible by integration"})
        return super()._commit_pulls(request, sha)


@pytest.mark.parametrize("maintenance", ["no change", "a change of its own"])
def test_a_failed_lookup_of_merged_pull_requests_warns_and_promotes_nothing(
    runner: ActionRunner, maintenance: str
) -> None:
    fake = LookupFails(permissions={"maintainer": "write"})
    fake.add_pull(FakePullRequest(number=7, files=[changed_file("a.py", "+x\n")]))
    seed = "# Conventions\n\n- Use pytest.\n"
    with fake.serve():
        seeded = push(runner, remember_all(seed), sha="b" * 40)
        assert seeded.outputs["saved_key"], seeded.stdout
        runner.run(
            "pull_request",
            pull_request_event(),
            "refs/pull/7/merge",
            remember("- Use pytest.", FACT_A),
        )
        fake.merge(7, MERGE_SHA)
        model = (
            ScriptedChatModel.from_script("Nothing to consolidate.")
            if maintenance == "no change"
            else remember("# Conventions", "\n- Keep memory short.")
        )

        pushed = push(runner, model)

        assert pushed.exit_code == 0, pushed.stdout
        warnings = [line for line in pushed.stdout.splitlines() if line.startswith("::warning")]
        assert any("Merged pull requests could not be looked up" in w for w in warnings), warnings
        assert any("re-run this job" in w for w in warnings)
        assert FACT_A not in model.system_prompts[0]
        store = LocalDirectoryStore(runner.store_dir)
        texts = [store.read_entry(e.key)["AGENTS.md"] for e in store.entries(COMMITTED)]
        assert all(FACT_A not in text for text in texts)
        if maintenance == "no change":
            assert pushed.outputs["saved_key"] == ""
            assert [e.key for e in store.entries(COMMITTED)] == [seeded.outputs["saved_key"]]
        else:
            assert pushed.outputs["saved_key"]
            assert committed_entry(runner)["AGENTS.md"] == (
                "# Conventions\n\n- Keep memory short.\n\n- Use pytest.\n"
            )

        # Re-running the job once GitHub answers promotes what the failed run could not know.
        fake.failing = False
        rerun = push(runner)

    assert rerun.exit_code == 0, rerun.stdout
    assert "promoted 1 ticked memory change(s) of #7" in rerun.summary
    assert FACT_A in committed_entry(runner)["AGENTS.md"]


def test_what_a_comment_command_proposed_survives_the_pull_requests_next_run(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    """A comment run cannot write the PR's cache scope: the next PR run takes its ticked items
    from the comment, so they are neither forgotten nor dropped from the comment."""
    assert (
        runner.run(
            "pull_request", pull_request_event(), "refs/pull/7/merge", learn(FACT_A)
        ).exit_code
        == 0
    )
    commented = runner.run(
        "issue_comment",
        comment_event("Please remember fixtures"),
        "refs/heads/main",
        remember(FACT_A, FACT_B),
    )
    assert commented.exit_code == 0, commented.stdout

    later = ScriptedChatModel.from_script("Still fine.")
    next_run = runner.run(
        "pull_request", pull_request_event(action="synchronize"), "refs/pull/7/merge", later
    )

    assert next_run.exit_code == 0, next_run.stdout
    assert FACT_B in later.system_prompts[0]
    [body] = github.bodies(7)
    assert FACT_A in ticked_text(body)
    assert FACT_B in ticked_text(body)
    overlay = LocalDirectoryStore(runner.store_dir).entries(
        "memory-agent/v1/memory-agent/repo/pr-7/"
    )
    assert FACT_B in LocalDirectoryStore(runner.store_dir).read_entry(overlay[0].key)["AGENTS.md"]
    assert "comment runs proposed" in next_run.summary


def test_two_sticky_comments_converge_and_a_veto_in_the_newer_one_holds(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    """Two runs of the pull request at once each created a comment; a maintainer unticked the
    item in the newer one. The next run keeps the oldest, with the veto, and deletes the other."""
    assert push(runner, learn("- Use pytest."), sha="b" * 40).outputs["saved_key"]
    learned = learn("- Use pytest.", FACT_A)
    first = runner.run("pull_request", pull_request_event(), "refs/pull/7/merge", learned)
    assert first.exit_code == 0, first.stdout
    [oldest] = github.comments[7]
    github.next_id += 1
    duplicate = {
        **oldest,
        "id": github.next_id,
        "node_id": f"IC_node{github.next_id}",
        "url": oldest["url"].replace(str(oldest["id"]), str(github.next_id)),
        "html_url": oldest["html_url"].replace(str(oldest["id"]), str(github.next_id)),
        "body": untick(oldest["body"], FACT_A),
    }
    github.comments[7].append(duplicate)
    github.edits[duplicate["id"]] = ["maintainer"]

    review = ScriptedChatModel.from_script("Still returns on the first attempt.")
    again = runner.run(
        "pull_request", pull_request_event(action="synchronize"), "refs/pull/7/merge", review
    )

    assert again.exit_code == 0, again.stdout
    [kept] = github.comments[7]
    assert kept["id"] == oldest["id"]
    assert "Still returns on the first attempt." in kept["body"]
    assert "- [ ]" in kept["body"]
    assert "- [x]" not in kept["body"]

    github.merge(7, MERGE_SHA)
    pushed = push(runner)
    assert pushed.exit_code == 0, pushed.stdout
    assert FACT_A not in committed_entry(runner).get("AGENTS.md", "")
