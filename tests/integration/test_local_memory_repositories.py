"""Local memory belongs to a repository: what ``review --local`` learns in one checkout never
reaches another repository's reviews; entries from before keys named a repository are read by
none; ``memory list|show|log|export`` find the repository's local layer without ``--prefix``."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_action.store.local import LocalDirectoryStore
from tests.fakes.git_repo import GitRepo, feature_repository, isolated_git_env
from tests.fakes.openai_stub import OpenAIStub, answer_reply
from tests.integration.test_cli import run_cli
from tests.integration.test_review_local import LESSON, learns, repo, review_local, stub

__all__ = ["repo", "stub"]  # fixtures

DEMO = "github.com/octo/demo"
LEGACY_TEXT = "- A lesson of some repository, saved before keys named one.\n"


def lesson_line() -> str:
    return LESSON.splitlines()[-1].removeprefix("- ")


def memory(capsys: pytest.CaptureFixture[str], store: Path, *argv: str) -> tuple[int, str, str]:
    return run_cli(capsys, "memory", *argv, "--store-dir", str(store))


def test_what_one_repository_learned_never_reaches_another(
    capsys: pytest.CaptureFixture[str],
    repo: GitRepo,
    stub: OpenAIStub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo.git("remote", "add", "origin", "git@github.com:Octo/Demo.git")
    store = tmp_path / "store"
    stub.add_replies(*learns(), answer_reply("Looks fine."))
    assert review_local(capsys, stub, store)[0] == 0
    other = feature_repository(tmp_path / "unrelated", isolated_git_env(tmp_path / "home"))
    monkeypatch.chdir(other.root)

    code, out, err = review_local(capsys, stub, store)

    assert code == 0, out + err
    assert f"with the memory of {other.root};" in err
    assert "No memory saved yet" in err and "Restored memory" not in err
    assert lesson_line() not in stub.requests[-1].body["messages"][0]["content"]
    # In the unrelated checkout, memory list shows none of it; --all shows whose it is.
    code, out, err = memory(capsys, store, "list")
    assert out.startswith("No memory entries under memory-agent/v1/memory-agent/ in ")
    assert f"(memory of {other.root})" in out
    assert "1 other entry (other repositories'" in err and "'memory list --all'" in err
    code, out, _ = memory(capsys, store, "list", "--all")
    [line] = out.splitlines()
    assert f" B  {DEMO}  github.com%2Focto%2Fdemo/memory-agent/v1/memory-agent/repo/pr-0/" in line


def test_a_clone_by_another_url_shares_the_memory(
    capsys: pytest.CaptureFixture[str], repo: GitRepo, stub: OpenAIStub, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    repo.git("remote", "add", "origin", "git@github.com:octo/demo.git")
    stub.add_replies(*learns(), answer_reply("Looks fine."))
    assert review_local(capsys, stub, store)[0] == 0
    repo.git("remote", "set-url", "origin", "https://someone:hunter2@github.com/octo/demo.git/")

    code, out, err = review_local(capsys, stub, store)

    assert code == 0, out + err
    assert lesson_line() in stub.requests[-1].body["messages"][0]["content"]
    keys = [entry.key for entry in LocalDirectoryStore(store).entries()]
    assert keys and all(key.startswith("github.com%2Focto%2Fdemo/") for key in keys)
    assert not any("hunter2" in key for key in keys)  # credentials never reach a key


def test_entries_from_before_keys_named_a_repository_are_read_by_no_review(
    capsys: pytest.CaptureFixture[str], repo: GitRepo, stub: OpenAIStub, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "AGENTS.md").write_text(LEGACY_TEXT)
    legacy = "memory-agent/v1/memory-agent/repo/pr-0/local1-1-job-00000000"
    assert LocalDirectoryStore(store).save(legacy, seed).saved
    del repo
    stub.add_replies(answer_reply("Looks fine."))

    code, out, err = review_local(capsys, stub, store)

    assert code == 0, out + err
    assert "No memory saved yet" in err
    assert LEGACY_TEXT.strip() not in stub.requests[-1].body["messages"][0]["content"]
    code, out, err = memory(capsys, store, "list", "--all")
    [line] = out.splitlines()
    assert line.endswith(f"  (none)  {legacy}")
    assert "saved before keys named a repository: no review reads them" in err


def test_memory_commands_find_the_local_layer_without_a_prefix(
    capsys: pytest.CaptureFixture[str], repo: GitRepo, stub: OpenAIStub, tmp_path: Path
) -> None:
    repo.git("remote", "add", "origin", "git@github.com:octo/demo.git")
    store = tmp_path / "store"
    stub.add_replies(*learns())
    assert review_local(capsys, stub, store)[0] == 0
    exported = tmp_path / "exported" / "AGENTS.md"

    code, out, err = memory(capsys, store, "export", "--out", str(exported))

    assert code == 0, out + err
    assert exported.read_text() == LESSON
    assert "Used the local layer (memory-agent/v1/memory-agent/repo/pr-0/" in err
    code, out, err = memory(capsys, store, "show")
    assert code == 0 and LESSON.strip() in out
    assert err.startswith(f"Showing the local layer of the memory of {DEMO} in the local store")
    code, out, err = memory(capsys, store, "list")
    [line] = out.splitlines()
    assert "  local  memory-agent/v1/memory-agent/repo/pr-0/local" in line
    assert f"Listing the memory of {DEMO} in the local store at " in err
    code, out, _ = memory(capsys, store, "log")
    [revision] = out.splitlines()
    assert revision.startswith("memory-agent/v1/memory-agent/repo/pr-0/local")


def test_an_import_into_the_local_layer_is_what_the_next_review_starts_from(
    capsys: pytest.CaptureFixture[str], repo: GitRepo, stub: OpenAIStub, tmp_path: Path
) -> None:
    del repo
    store = tmp_path / "store"
    stub.add_replies(*learns(), answer_reply("Fine."))
    assert review_local(capsys, stub, store)[0] == 0
    replacement = tmp_path / "replacement.md"
    replacement.write_text("# Conventions\n\n- Imported by hand.\n")

    code, out, err = memory(capsys, store, "import", str(replacement))
    assert code == 0, out + err
    assert "Used the local layer" in err
    assert review_local(capsys, stub, store)[0] == 0

    system_prompt = stub.requests[-1].body["messages"][0]["content"]
    assert "Imported by hand." in system_prompt
    assert lesson_line() not in system_prompt
