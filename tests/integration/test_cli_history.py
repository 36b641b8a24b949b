"""``memory-agent memory log|rollback|export|import``, on the local store and on the git branch."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_action.store.git import MEMORY_BRANCH
from memory_action.store.local import LocalDirectoryStore
from tests.fakes.github_api import REPOSITORY, FakeGitHub
from tests.integration.test_cli import run_cli

COMMITTED = "memory-agent/v1/memory-agent/repo/committed/"
FIRST, SECOND = "- First convention.\n", "- Second convention.\n"
TOKEN_LIKE = "ghp_" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"


def memory_file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken-for-the-fake")
    monkeypatch.delenv("GITHUB_API_URL", raising=False)
    fake = FakeGitHub()
    with fake.serve():
        yield fake


@pytest.mark.parametrize("where", ["local", "git"])
def test_import_log_rollback_export(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, github: FakeGitHub, where: str
) -> None:
    store = ["--repo", REPOSITORY] if where == "git" else ["--store-dir", str(tmp_path / "store")]
    for name, text in (("first.md", FIRST), ("second.md", SECOND)):
        code, out, err = run_cli(
            capsys, "memory", "import", str(memory_file(tmp_path, name, text)), *store
        )
        assert code == 0, err
        assert "Imported" in out
    code, out, _ = run_cli(capsys, "memory", "log", *store)
    revisions = [line.split()[0] for line in out.splitlines()]
    assert code == 0 and len(revisions) == 2
    code, out, err = run_cli(capsys, "memory", "rollback", revisions[1], *store)
    assert code == 0, err
    assert "as a new entry" in out
    exported = tmp_path / "out" / "AGENTS.md"
    code, _, err = run_cli(capsys, "memory", "export", "--out", str(exported), *store)
    assert code == 0, err
    assert exported.read_text() == FIRST  # the rollback restored the first state
    assert json.loads((tmp_path / "out" / "AGENTS.provenance.json").read_text()) is not None
    code, out, _ = run_cli(capsys, "memory", "log", *store)
    assert len(out.splitlines()) == 3  # nothing rewritten: the rollback is one more entry
    if where == "git":
        commits = github.git.log(MEMORY_BRANCH)
        assert len(commits) == 4  # the orphan root and three memory commits, in a line
        assert commits[0].files[f"{COMMITTED}AGENTS.md"] == FIRST


@pytest.mark.parametrize("where", ["local", "git"])
def test_an_import_holding_a_secret_or_over_budget_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, github: FakeGitHub, where: str
) -> None:
    store = ["--repo", REPOSITORY] if where == "git" else ["--store-dir", str(tmp_path / "store")]
    secret = memory_file(tmp_path, "secret.md", f"- Deploy with {TOKEN_LIKE}\n")
    code, _, err = run_cli(capsys, "memory", "import", str(secret), *store)
    assert code != 0 and "Not imported" in err and TOKEN_LIKE not in err
    assert len(err.strip().splitlines()) == 1
    big = memory_file(tmp_path, "big.md", "- a fact\n" * 300)
    code, _, err = run_cli(capsys, "memory", "import", str(big), "--max-memory-kb", "1", *store)
    assert code != 0 and "over the memory budget" in err
    code, out, _ = run_cli(capsys, "memory", "log", *store)
    assert "No committed memory" in out
    assert github.git.head(MEMORY_BRANCH) is None


def test_a_rollback_to_a_commit_that_never_held_this_memory_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, github: FakeGitHub
) -> None:
    run_cli(
        capsys, "memory", "import", str(memory_file(tmp_path, "a.md", FIRST)), "--repo", REPOSITORY
    )
    code, _, err = run_cli(capsys, "memory", "rollback", "0" * 40, "--repo", REPOSITORY)
    assert code != 0 and "did not change" in err
    assert len(github.git.log(MEMORY_BRANCH)) == 2


@pytest.mark.parametrize("where", ["local", "git"])
def test_a_rollback_to_a_state_holding_a_secret_or_over_budget_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, github: FakeGitHub, where: str
) -> None:
    """A rollback saves memory, so it goes through the checks an import goes through: a state
    that held a secret (saved before a detector knew its shape, or planted on the branch) is
    not committed again, and nor is one over the budget."""
    store = ["--repo", REPOSITORY] if where == "git" else ["--store-dir", str(tmp_path / "store")]
    held = f"- Deploy with {TOKEN_LIKE}\n"
    run_cli(capsys, "memory", "import", str(memory_file(tmp_path, "a.md", FIRST)), *store)
    if where == "git":  # planted on the branch: a commit the CLI never checked
        github.git.commit_files(MEMORY_BRANCH, {f"{COMMITTED}AGENTS.md": held}, "planted")
    else:
        planted = tmp_path / "planted"
        planted.mkdir()
        (planted / "AGENTS.md").write_text(held, encoding="utf-8")
        local = LocalDirectoryStore(tmp_path / "store")
        imported = local.entries()[0].key  # the layer the CLI keeps, under its repository
        local.save(imported.rsplit("/", 1)[0] + "/planted-1", planted)
    run_cli(capsys, "memory", "import", str(memory_file(tmp_path, "b.md", SECOND)), *store)
    code, out, _ = run_cli(capsys, "memory", "log", *store)
    revisions = [line.split()[0] for line in out.splitlines()]
    before = len(revisions)
    assert before == 3
    code, _, err = run_cli(capsys, "memory", "rollback", revisions[1], *store)
    assert code != 0 and "Not rolled back" in err and "secret" in err, err
    assert TOKEN_LIKE not in err and len(err.strip().splitlines()) == 1
    big = memory_file(tmp_path, "big.md", "- a fact\n" * 300)
    run_cli(capsys, "memory", "import", str(big), *store)
    code, out, _ = run_cli(capsys, "memory", "log", *store)
    revisions = [line.split()[0] for line in out.splitlines()]
    code, _, err = run_cli(
        capsys, "memory", "rollback", revisions[0], "--max-memory-kb", "1", *store
    )
    assert code != 0 and "Not rolled back" in err and "over the memory budget" in err
    code, out, _ = run_cli(capsys, "memory", "log", *store)
    assert len(out.splitlines()) == before + 1  # only the import of big.md was saved


@pytest.mark.parametrize("where", ["local", "git"])
def test_an_export_of_an_entry_holding_a_secret_writes_it_redacted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, github: FakeGitHub, where: str
) -> None:
    """An entry that holds a secret (planted on the branch, or saved before a detector knew its
    shape) leaves the store only through the gate: the export shows where it was, not what."""
    store = ["--repo", REPOSITORY] if where == "git" else ["--store-dir", str(tmp_path / "store")]
    held = f"- Deploy with {TOKEN_LIKE}\n"
    run_cli(capsys, "memory", "import", str(memory_file(tmp_path, "a.md", FIRST)), *store)
    if where == "git":
        github.git.commit_files(MEMORY_BRANCH, {f"{COMMITTED}AGENTS.md": held}, "planted")
    else:
        planted = tmp_path / "planted"
        planted.mkdir()
        (planted / "AGENTS.md").write_text(held, encoding="utf-8")
        (planted / "provenance.json").write_text(json.dumps({held: {"run": "1"}}))
        local = LocalDirectoryStore(tmp_path / "store")
        imported = local.entries()[0].key  # the layer the CLI keeps, under its repository
        local.save(imported.rsplit("/", 1)[0] + "/planted-1", planted)
    exported = tmp_path / "out" / "AGENTS.md"
    code, out, err = run_cli(capsys, "memory", "export", "--out", str(exported), *store)
    assert code == 0, err
    written = exported.read_text() + (tmp_path / "out" / "AGENTS.provenance.json").read_text()
    assert TOKEN_LIKE not in written and TOKEN_LIKE[4:12] not in written + out
    assert "- Deploy with [REDACTED" in exported.read_text()
    assert "redacted" in out
