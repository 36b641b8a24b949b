"""The git store against the GitHub fake, through PyGithub and GraphQL as in a run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_action.github.client import GitHubClient
from memory_action.safety.outgoing import gate
from memory_action.store.base import RestoreKeys
from memory_action.store.git import ENTRY_FILE, MEMORY_BRANCH, GitMemoryStore
from memory_action.store.git_remote import GitHubGitRemote, GitRemoteError
from memory_action.store.local import LocalDirectoryStore
from memory_action.store.tiered import TieredStore
from tests.fakes.github_api import API_URL, REPOSITORY, FakeGitHub, Reply

PREFIX = "memory-agent/v1/memory-agent/repo/committed/"
FOLDER = PREFIX.rstrip("/")


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    github = FakeGitHub()
    with github.serve():
        yield github


def make_store(origin: str = "Run: 1 (push)") -> GitMemoryStore:
    client = GitHubClient("t0ken", API_URL, REPOSITORY, retries=0)
    remote = GitHubGitRemote(client.repository, REPOSITORY)
    return GitMemoryStore(remote, origin=origin, clock=lambda: 1_700_000_000.0)


def memory_folder(tmp_path: Path, text: str, name: str = "memory") -> Path:
    folder = tmp_path / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "AGENTS.md").write_text(text, encoding="utf-8")
    return folder


def test_a_save_creates_the_orphan_branch_and_a_restore_reads_it_back(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    store = make_store("Run: 41 attempt 1 (push by mona)")
    assert store.restore(RestoreKeys(primary=PREFIX), tmp_path / "empty").hit is False
    saved = store.save(f"{PREFIX}41-1-job-aa", memory_folder(tmp_path, "- use pytest\n"))
    assert saved.saved, saved.reason
    log = fake.git.log(MEMORY_BRANCH)
    assert len(log) == 2 and log[-1].parents == ()  # an orphan root, then the memory commit
    assert "Run: 41 attempt 1 (push by mona)" in log[0].body and "41-1-job-aa" in log[0].body
    assert fake.git.verified_commits == 1
    entry = json.loads(log[0].files[f"{FOLDER}/{ENTRY_FILE}"])
    assert entry["key"] == f"{PREFIX}41-1-job-aa"

    restored = make_store().restore(RestoreKeys(primary=PREFIX), tmp_path / "back")
    assert restored.hit and restored.matched_key == f"{PREFIX}41-1-job-aa"
    assert (tmp_path / "back" / "AGENTS.md").read_text() == "- use pytest\n"
    assert not (tmp_path / "back" / ENTRY_FILE).exists()  # only the memory files come back


def test_a_commit_of_another_folder_meanwhile_only_costs_a_retry(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    store = make_store()
    assert store.save(f"{PREFIX}1-1-job-aa", memory_folder(tmp_path, "- one\n")).saved
    store.restore(RestoreKeys(primary=PREFIX), tmp_path / "read")
    rivals = [MEMORY_BRANCH]

    def rival_commits_once() -> None:
        if rivals:
            fake.git.commit_files(rivals.pop(), {"other/AGENTS.md": "x\n"})

    fake.git.before_commit = rival_commits_once
    saved = store.save(f"{PREFIX}2-1-job-bb", memory_folder(tmp_path, "- one\n- two\n"))
    assert saved.saved, saved.reason
    assert fake.git.stale_refusals == 1
    head = fake.git.head(MEMORY_BRANCH)
    assert head is not None and head.files["other/AGENTS.md"] == "x\n"  # nothing overwritten
    # The commit refused as stale was no save: the retry's commit is, and it holds ours.
    assert head.files[f"{FOLDER}/AGENTS.md"] == "- one\n- two\n"
    assert store.commits == 2  # the first save and the retried one, not the refused attempt


def test_a_save_of_the_folder_by_another_run_meanwhile_is_a_lost_race(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    first, second = make_store(), make_store()
    assert first.save(f"{PREFIX}1-1-job-aa", memory_folder(tmp_path, "- one\n")).saved
    assert second.restore(RestoreKeys(primary=PREFIX), tmp_path / "second").hit
    assert first.restore(RestoreKeys(primary=PREFIX), tmp_path / "first").hit
    assert first.save(f"{PREFIX}2-1-job-bb", memory_folder(tmp_path, "- one\n- two\n")).saved
    commits = len(fake.git.commits)
    lost = second.save(f"{PREFIX}3-1-job-cc", memory_folder(tmp_path, "- one\n- three\n", "m3"))
    assert not lost.saved and lost.raced
    assert len(fake.git.commits) == commits  # nothing written over the winner


@pytest.mark.parametrize("protected", [True, False])
def test_a_refused_write_is_reported_and_not_tried_again(
    fake: FakeGitHub, tmp_path: Path, protected: bool
) -> None:
    store = make_store()
    assert store.save(f"{PREFIX}1-1-job-aa", memory_folder(tmp_path, "- one\n")).saved
    if protected:
        fake.git.protected.add(MEMORY_BRANCH)
    else:
        fake.git.read_only = True
    store.restore(RestoreKeys(primary=PREFIX), tmp_path / "read")
    refused = store.save(f"{PREFIX}2-1-job-bb", memory_folder(tmp_path, "- two\n"))
    assert not refused.saved and refused.write_denied
    assert store.refusal is not None and store.refusal.protected is protected
    expected = "Repository rule violations" if protected else "not accessible"
    assert expected in refused.reason
    calls = len(fake.calls)
    assert store.save(f"{PREFIX}3-1-job-cc", memory_folder(tmp_path, "- three\n")).write_denied
    assert len(fake.calls) == calls


def test_a_read_answered_403_is_trouble_and_the_next_save_tries_again(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    """A secondary rate limit answers 403 too: on a read it says nothing about writing."""
    store = make_store()
    assert store.save(f"{PREFIX}1-1-job-aa", memory_folder(tmp_path, "- one\n")).saved
    store.restore(RestoreKeys(primary=PREFIX), tmp_path / "read")
    answer, limited = fake.git.graphql, [True]

    def first_read_rate_limited(document: dict[str, Any]) -> Reply:
        if limited and "ReadMemoryFolder" in document["query"]:
            limited.pop()
            return 403, {}, json.dumps({"message": "You have exceeded a secondary rate limit."})
        return answer(document)

    fake.git.graphql = first_read_rate_limited  # type: ignore[method-assign]
    failed = store.save(f"{PREFIX}2-1-job-bb", memory_folder(tmp_path, "- two\n"))
    assert not failed.saved and not failed.write_denied and store.refusal is None
    assert store.save(f"{PREFIX}3-1-job-cc", memory_folder(tmp_path, "- three\n")).saved


def test_the_log_lists_the_commits_of_one_folder(fake: FakeGitHub, tmp_path: Path) -> None:
    store = make_store()
    for number in (1, 2):
        store.restore(RestoreKeys(primary=PREFIX), tmp_path / f"r{number}")
        folder = memory_folder(tmp_path, f"- fact {number}\n", f"m{number}")
        assert store.save(f"{PREFIX}{number}-1-job-aa", folder).saved
    fake.git.commit_files(MEMORY_BRANCH, {"elsewhere/AGENTS.md": "- not ours\n"})
    revisions = store.log(PREFIX)
    assert [r.body.splitlines()[-1] for r in revisions] == [
        f"Key: {PREFIX}2-1-job-aa",
        f"Key: {PREFIX}1-1-job-aa",
    ]


def test_a_save_onto_a_new_branch_leaves_the_memory_branch_and_opens_a_pull_request(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    store = make_store()
    assert store.save(f"{PREFIX}1-1-job-aa", memory_folder(tmp_path, "- one\n")).saved
    store.restore(RestoreKeys(primary=PREFIX), tmp_path / "read")
    before = fake.git.head(MEMORY_BRANCH)
    saved = store.save(f"{PREFIX}2-1-job-bb", memory_folder(tmp_path, "- two\n"), onto="prop/2")
    assert saved.saved and saved.reason == "on branch prop/2"
    assert fake.git.head(MEMORY_BRANCH) == before
    proposed = fake.git.head("prop/2")
    assert before is not None and proposed is not None
    assert proposed.parents == (before.oid,)
    assert proposed.files[f"{FOLDER}/AGENTS.md"] == "- two\n"

    pull = store.open_pull_request("prop/2", gate("title"), gate("body"))
    assert pull.url.endswith(f"/pull/{pull.number}")
    [opened] = fake.git.opened
    assert (opened.head, opened.base, opened.title, opened.body) == (
        "prop/2",
        MEMORY_BRANCH,
        "title",
        "body",
    )
    with pytest.raises(GitRemoteError, match="A pull request already exists for"):
        store.open_pull_request("prop/2", gate("title"), gate("body"))


def test_a_push_to_the_new_branch_meanwhile_refuses_the_save_onto_it(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    store = make_store()
    assert store.save(f"{PREFIX}1-1-job-aa", memory_folder(tmp_path, "- one\n")).saved
    store.restore(RestoreKeys(primary=PREFIX), tmp_path / "read")

    def someone_pushes() -> None:
        fake.git.commit_files("prop/3", {"theirs.txt": "x\n"})

    fake.git.before_commit = someone_pushes
    saved = store.save(f"{PREFIX}3-1-job-cc", memory_folder(tmp_path, "- three\n"), onto="prop/3")
    assert not saved.saved and saved.write_denied
    assert "Expected branch to point to" in saved.reason
    proposed = fake.git.head("prop/3")
    assert proposed is not None and f"{FOLDER}/AGENTS.md" in proposed.files
    assert proposed.files[f"{FOLDER}/AGENTS.md"] == "- one\n"  # theirs kept, nothing retried


def test_a_second_save_under_a_key_already_on_the_branch_commits_nothing(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    """A key names one save: saving it again (a retried step whose first commit did land) is
    reported as not saved and makes no second commit, whatever the folder holds now."""
    store = make_store()
    key = f"{PREFIX}7-1-job-aa"
    assert store.save(key, memory_folder(tmp_path, "- one\n")).saved
    commits = len(fake.git.log(MEMORY_BRANCH))

    again = store.save(key, memory_folder(tmp_path, "- one\n- two\n", name="again"))

    assert not again.saved and "an entry with this key exists" in again.reason
    assert len(fake.git.log(MEMORY_BRANCH)) == commits
    head = fake.git.head(MEMORY_BRANCH)
    assert head is not None and head.files[f"{FOLDER}/AGENTS.md"] == "- one\n"


def test_when_github_cannot_be_read_the_cache_copy_is_read_and_nothing_is_carried_over(
    fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache's copy of committed memory serves a read GitHub failed; it is no migration:
    the branch holds memory (unreadable now), so the copy is never committed onto it."""
    git, reports = make_store(), list[str]()
    cache = LocalDirectoryStore(tmp_path / "cache")
    tiered = TieredStore(
        git,
        cache,
        is_committed=lambda key: key.startswith(PREFIX),
        migrate=True,
        report=reports.append,
    )
    assert tiered.save(f"{PREFIX}1-1-job-aa", memory_folder(tmp_path, "- one\n")).saved
    reads = len(fake.git.log(MEMORY_BRANCH))
    answer = fake.git.graphql

    def reads_fail(document: dict[str, Any]) -> Any:
        if "ReadMemoryFolder" in document["query"]:
            error = {"type": "INTERNAL", "message": "Something went wrong"}
            return 200, {}, json.dumps({"data": None, "errors": [error]})
        return answer(document)

    monkeypatch.setattr(fake.git, "graphql", reads_fail)
    restored = tiered.restore(RestoreKeys(primary=PREFIX), tmp_path / "back")

    assert restored.hit and restored.note is not None
    assert "read the cache's copy" in restored.note, restored.note
    assert (tmp_path / "back" / "AGENTS.md").read_text() == "- one\n"
    assert len(fake.git.log(MEMORY_BRANCH)) == reads and reports == []
