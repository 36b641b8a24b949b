"""Memory a pull request learned reaches committed memory when, and only when, it is merged, and
only the items people left ticked (issue: promotion end to end)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_action.store.local import LocalDirectoryStore
from tests.fakes.github_api import FakeGitHub, FakePullRequest, changed_file
from tests.fakes.runner import ActionRunner, pull_request_event
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


@pytest.fixture
def runner(tmp_path: Path) -> ActionRunner:
    return ActionRunner(tmp_path)


def push_event(sha: str = MERGE_SHA) -> dict[str, Any]:
    return {
        "ref": "refs/heads/main",
        "after": sha,
        "head_commit": {"id": sha},
        "commits": [{"id": sha}],
        "repository": {"full_name": "octo-org/octo-repo", "default_branch": "main"},
    }


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
    seeded = runner.run(
        "push",
        push_event("b" * 40),
        "refs/heads/main",
        ScriptedChatModel.from_script(
            tool_call("write_file", {"file_path": MEMORY, "content": seed}), "Seeded."
        ),
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
    pushed = runner.run(
        "push",
        push_event(),
        "refs/heads/main",
        ScriptedChatModel.from_script("Nothing to consolidate."),
    )

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
    pushed = runner.run(
        "push",
        push_event(),
        "refs/heads/main",
        ScriptedChatModel.from_script("Nothing to consolidate."),
    )

    assert pushed.exit_code == 0, pushed.stdout
    assert "nothing promoted from #7" in pushed.summary
    assert "outsider" in pushed.summary
    assert LocalDirectoryStore(runner.store_dir).entries(COMMITTED) == []


def test_an_unmerged_pull_request_is_never_promoted(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    runner.run("pull_request", pull_request_event(), "refs/pull/7/merge", learn(FACT_A))

    pushed = runner.run(
        "push",
        push_event(),
        "refs/heads/main",
        ScriptedChatModel.from_script("Nothing to consolidate."),
    )

    assert pushed.exit_code == 0, pushed.stdout
    assert LocalDirectoryStore(runner.store_dir).entries(COMMITTED) == []
