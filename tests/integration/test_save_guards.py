"""The guards that keep a save from losing memory, each proven by a test that fails without it:

- a run whose restore failed does not save (it would hide the memory saved before);
- memory over budget after merging with a save made meanwhile is not saved (nothing is cut);
- the redacted memory is written back to the memory folder (later steps of the job read it);
- a corrupt entry in the local store is skipped with a note: the restore worked, the run saves;
- a comment command whose restore failed changes nothing (no proposal, no commit).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_action.store.git import MEMORY_BRANCH
from memory_action.store.local import LocalDirectoryStore
from tests.fakes.cache_harness import default_tuning, fast_tuning
from tests.fakes.cache_service import CREATE, LOOKUP, FakeCacheService, Fault
from tests.fakes.github_api import REPOSITORY, FakeGitHub, FakePullRequest, changed_file
from tests.fakes.runner import ActionRunner, CacheRunner, RunOutcome, push_event
from tests.fakes.scripted_model import ScriptedChatModel, tool_call
from tests.fakes.secrets_corpus import PLANTED

MEMORY = ".agent-memory/AGENTS.md"
MAIN_REF = "refs/heads/main"
COMMITTED = "memory-agent/v1/memory-agent/repo/committed/"
LESSON = "# Conventions\n\n- Network calls retry with tenacity, never a hand-written loop.\n"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()
    with fake.serve():
        yield fake


def writes(content: str) -> ScriptedChatModel:
    return ScriptedChatModel.from_script(
        tool_call("write_file", {"file_path": MEMORY, "content": content}), "Done."
    )


def warnings(outcome: RunOutcome) -> list[str]:
    return [line for line in outcome.stdout.splitlines() if line.startswith("::warning")]


def seed(store_dir: Path, key: str, text: str) -> None:
    folder = store_dir.parent / "seed" / key.rsplit("/", 1)[-1] / ".agent-memory"
    folder.mkdir(parents=True)
    (folder / "AGENTS.md").write_text(text)
    assert LocalDirectoryStore(store_dir).save(key, folder).saved


# -- a run whose restore failed does not save ------------------------------------------------------


def test_a_run_whose_restore_failed_does_not_save_over_the_memory_before(
    tmp_path: Path, github: FakeGitHub
) -> None:
    with FakeCacheService([MAIN_REF]) as service, default_tuning(fast_tuning([])):
        runner = CacheRunner(tmp_path, extra_env=service.env())
        first = runner.run("push", push_event(), MAIN_REF, writes(LESSON))
        assert first.outputs["saved_key"], first.stdout
        service.fail(LOOKUP, *[Fault.http(500)] * 5)  # every retry of the restore meets it
        creates = len(service.requests_to(CREATE))

        outcome = runner.run("push", push_event(), MAIN_REF, writes("# Other\n\n- A rule.\n"))

        assert outcome.exit_code == 0, outcome.stdout
        assert outcome.outputs["memory_hit"] == "false"
        assert outcome.outputs["saved_key"] == ""
        assert "saving now would hide the memory saved before" in outcome.summary
        assert len(service.requests_to(CREATE)) == creates  # not even tried
        assert [entry.key for entry in service.visible()] == [first.outputs["saved_key"]]


# -- over budget after merging: not saved ---------------------------------------------------------


def test_memory_over_budget_after_merging_with_a_save_made_meanwhile_is_not_saved(
    tmp_path: Path, github: FakeGitHub
) -> None:
    runner = ActionRunner(tmp_path)
    runner.inputs["max_memory_kb"] = "1"
    rules = "# Rules\n\n" + "".join(f"- Rule {n:02d}: keep the code tidy.\n" for n in range(16))
    ours = "".join(f"- Ours {n:02d}: " + "o" * 30 + "\n" for n in range(8))
    theirs = "".join(f"- Theirs {n:02d}: " + "t" * 30 + "\n" for n in range(8))
    assert len((rules + ours).encode()) <= 1024 < len((rules + ours + theirs).encode())
    seed(runner.store_dir, f"{COMMITTED}1-1", rules)
    model = ScriptedChatModel.from_script(
        tool_call("write_file", {"file_path": MEMORY, "content": rules + ours}), "Done."
    )
    # Another run saves its own addition while this one runs.
    model.before_first_call = lambda: seed(runner.store_dir, f"{COMMITTED}2-1", rules + theirs)

    outcome = runner.run("push", push_event(), MAIN_REF, model)

    assert outcome.exit_code == 0, outcome.stdout
    assert outcome.outputs["saved_key"] == ""
    [warning] = warnings(outcome)
    assert "over max_memory_kb=1 after merging" in warning
    store = LocalDirectoryStore(runner.store_dir)
    assert sorted(entry.key for entry in store.entries()) == [f"{COMMITTED}1-1", f"{COMMITTED}2-1"]


# -- the redacted memory is written back ----------------------------------------------------------


def test_a_secret_put_into_the_memory_folder_behind_the_tools_is_redacted_there(
    tmp_path: Path, github: FakeGitHub
) -> None:
    """A run that does not save (repository memory, a feature branch) leaves the memory folder
    to the job's later steps: the secret must not be in it."""
    runner = ActionRunner(tmp_path)
    secret = PLANTED[0].secrets[0]
    model = ScriptedChatModel.from_script("Done.")
    folder = runner.workspace / ".agent-memory"

    def plant() -> None:  # e.g. a shell tool of another agent, or a step running meanwhile
        folder.mkdir(exist_ok=True)
        (folder / "AGENTS.md").write_text(f"# Notes\n\n- Deploy with {secret}\n")

    model.before_first_call = plant

    outcome = runner.run("push", push_event(), "refs/heads/feature", model)

    assert outcome.exit_code == 0, outcome.stdout
    assert outcome.outputs["saved_key"] == ""
    left = (folder / "AGENTS.md").read_text()
    assert secret not in left
    assert "- Deploy with" in left
    assert "found in memory" in outcome.summary


# -- a corrupt entry in the local store: restored, with a note ------------------------------------


def test_a_corrupt_local_entry_is_a_note_and_the_run_restores_and_saves(
    tmp_path: Path, github: FakeGitHub
) -> None:
    runner = ActionRunner(tmp_path)
    seed(runner.store_dir, f"{COMMITTED}1-1", LESSON)
    seed(runner.store_dir, f"{COMMITTED}2-1", "# Broken\n")
    broken = hashlib.sha256(f"{COMMITTED}2-1".encode()).hexdigest()
    (runner.store_dir / broken / "entry.json").write_text("{not json")

    outcome = runner.run("push", push_event(), MAIN_REF, writes(LESSON + "- One more rule.\n"))

    assert outcome.exit_code == 0, outcome.stdout
    assert outcome.outputs["memory_hit"] == "true"
    assert outcome.outputs["memory_key"] == f"{COMMITTED}1-1"
    assert outcome.outputs["saved_key"], outcome.stdout
    assert "Memory was not restored" not in outcome.stdout
    assert f"Restored memory from key {COMMITTED}1-1" in outcome.stdout
    assert f"ignored corrupt entry {broken}" in outcome.summary
    assert warnings(outcome) == []


# -- a comment command whose restore failed changes nothing ---------------------------------------


def command_event(body: str, number: int = 7) -> dict[str, Any]:
    """``issue_comment`` (created) by a maintainer on pull request ``number``."""
    return {
        "action": "created",
        "issue": {"number": number, "user": {"login": "mona"}, "pull_request": {"url": "x"}},
        "comment": {
            "id": 5_001,
            "html_url": f"https://github.com/{REPOSITORY}/pull/{number}#issuecomment-5001",
            "body": body,
            "author_association": "MEMBER",
            "user": {"login": "maintainer", "type": "User"},
        },
        "repository": {"full_name": REPOSITORY, "default_branch": "main"},
    }


def test_a_comment_command_whose_restore_failed_proposes_nothing(tmp_path: Path) -> None:
    """A ``remember`` on a pull request lands in the proposal of its sticky comment, against
    committed memory: started from memory it could not read, the proposal's base would be
    empty, and promoting it after the merge would hide every committed line."""
    github = FakeGitHub(permissions={"maintainer": "write"})
    github.add_pull(FakePullRequest(number=7, files=[changed_file("a.py", "@@ -0,0 +1 @@\n+x\n")]))
    with (
        FakeCacheService([MAIN_REF]) as service,
        default_tuning(fast_tuning([])),
        github.serve(),
    ):
        runner = CacheRunner(tmp_path, extra_env=service.env())
        assert runner.run("push", push_event(), MAIN_REF, writes(LESSON)).outputs["saved_key"]
        service.fail(LOOKUP, *[Fault.http(500)] * 5)  # every retry of the restore meets it

        body = "@memory-agent remember Logs go through structlog."
        outcome = runner.run("issue_comment", command_event(body), MAIN_REF, writes(""))

    assert outcome.exit_code == 0, outcome.stdout
    [reply] = github.bodies(7)  # the reply, and no sticky comment with a proposal
    assert "Memory could not be read" in reply and "nothing was changed" in reply
    assert github.reactions[5_001] == ["eyes"]


def test_a_comment_command_on_the_git_store_whose_restore_failed_commits_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the git store a command commits at once: started from a read that failed, the
    commit would hold the command's line instead of the memory it could not read."""
    github = FakeGitHub(permissions={"maintainer": "write"})
    github.add_pull(FakePullRequest(number=7, files=[changed_file("a.py", "@@ -0,0 +1 @@\n+x\n")]))
    runner = ActionRunner(tmp_path, inputs={"memory_store": "git"})
    with github.serve():
        assert runner.run("push", push_event(), MAIN_REF, writes(LESSON)).outputs["saved_key"]
        commits = len(github.git.log(MEMORY_BRANCH))
        shutil.rmtree(runner.store_dir)  # no copy in the cache to read instead
        answer = github.git.graphql
        reads = {"failed": 0}

        def first_read_fails(document: dict[str, Any]) -> Any:
            if "ReadMemoryFolder" in document["query"] and not reads["failed"]:
                reads["failed"] += 1
                error = {"type": "INTERNAL", "message": "Something went wrong"}
                return 200, {}, json.dumps({"data": None, "errors": [error]})
            return answer(document)

        monkeypatch.setattr(github.git, "graphql", first_read_fails)
        body = "@memory-agent remember Logs go through structlog."
        outcome = runner.run("issue_comment", command_event(body), MAIN_REF, writes(""))

    assert outcome.exit_code == 0, outcome.stdout
    assert reads["failed"] == 1
    [reply] = github.bodies(7)
    assert "Memory could not be read" in reply and "nothing was changed" in reply
    assert len(github.git.log(MEMORY_BRANCH)) == commits  # nothing committed
