"""The citation checks read a checkout in a few git processes, however many items cite it, and
judge each distinct citation once."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from memory_action.maintenance.workspace_code import checkout_code
from memory_action.memory.citations import CitationChecker, parse_items
from tests.fakes.git_repo import GitRepo, isolated_git_env

FILES = 60


def test_many_cited_files_are_read_by_a_few_git_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = isolated_git_env(tmp_path / "home")
    repo = GitRepo(tmp_path / "repo", env)
    repo.git("init", "--quiet", "--initial-branch=main")
    for n in range(FILES):
        repo.write(f"pkg/module_{n}.py", f"def kept_{n}():\n    return {n}\n")
    repo.commit("Start")
    memory = "".join(
        f"- `pkg/module_{n}.py:kept_{n}` stays; `pkg/module_{n}.py:gone_{n}` went; "
        f"`src/gone_{n}.py` too; `removed_{n}()` and `kept_{n}()`.\n"
        for n in range(FILES)
    )
    gits: list[Sequence[str]] = []
    real_run = subprocess.run

    def counting_run(command: Sequence[str], *args: Any, **kwargs: Any) -> Any:
        gits.append(command)
        return real_run(command, *args, **kwargs)

    code = checkout_code(repo.root, env)
    assert not isinstance(code, str)
    monkeypatch.setattr(subprocess, "run", counting_run)
    checker = CitationChecker(code)
    items = parse_items(memory)
    stale = checker.stale(items)
    checker.digest(memory, items)

    assert len(stale) == FILES
    assert all(len(s.reasons) == 3 for s in stale)  # gone_n, src/gone_n.py, removed_n
    assert len(gits) <= 6  # the tree listed, the files read in batches: not a process a file


class CountingCode:
    def __init__(self, files: dict[str, str]) -> None:
        self.files = files
        self.reads: list[str] = []
        self.listings = 0

    def paths(self) -> frozenset[str]:
        self.listings += 1
        return frozenset(self.files)

    def read_many(self, paths: Sequence[str]) -> dict[str, str | None]:
        self.reads.extend(paths)
        return {path: self.files.get(path) for path in paths}


def test_each_file_is_read_once_and_the_tree_listed_once() -> None:
    code = CountingCode({f"src/m{n}.py": f"def f_{n}(): pass\n" for n in range(300)})
    memory = "".join(
        f"- rule {n}: `src/m{n % 300}.py:f_{n % 300}`, `src/m{n % 7}.py:gone_{n % 5}`, `src/`.\n"
        for n in range(3_000)
    )
    checker = CitationChecker(code)
    items = parse_items(memory)
    stale = checker.stale(items)
    checker.digest(memory, items)

    assert len(stale) == 3_000
    assert code.listings == 1
    cited = [path for path in code.reads if path.startswith("src/m")]
    assert len(cited) == len(set(cited))  # every cited file read once, though cited 10 times
