"""The episodes' git repository: generated in the workspace, driven by the ``git`` command.

Pull requests are branches off ``main``; what the GitHub fake answers about one (its changed
files with their patches, the files at its head and base commits) is read from git, so line
numbers, hunks and shas are real. Git runs with no configuration but the repository's own.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memory_action.evaluation.github.api import changed_file

AUTHOR = ("Eval Author", "eval@example.com")
_STATUS = {"A": "added", "M": "modified", "D": "removed"}


class FixtureRepo:
    def __init__(self, root: Path, home: Path) -> None:
        self.root = root
        home.mkdir(parents=True, exist_ok=True)
        self._trees: dict[str, dict[str, str]] = {}  # a commit's files never change
        self.env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_NOSYSTEM": "1",
        }

    def git(self, *args: str, stdin: bytes | None = None) -> str:
        return self.git_bytes(*args, stdin=stdin).decode()

    def git_bytes(self, *args: str, stdin: bytes | None = None) -> bytes:
        name, email = AUTHOR
        done = subprocess.run(  # noqa: S603 - git with arguments of our own
            ["git", "-c", f"user.name={name}", "-c", f"user.email={email}", *args],  # noqa: S607
            cwd=self.root,
            env=self.env,
            input=stdin,
            capture_output=True,
            check=True,
        )
        return done.stdout

    def init(self, files: Mapping[str, str]) -> str:
        """A new repository whose ``main`` holds ``files``; the commit's sha."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.git("init", "--quiet", "--initial-branch=main")
        return self.commit(files, "Start")

    def commit(self, changes: Mapping[str, str | None], message: str) -> str:
        """Commit ``changes`` (path → new text; None deletes it) on the checked-out branch."""
        for path, text in changes.items():
            file = self.root / path
            if text is None:
                self.git("rm", "--quiet", "--", path)
                continue
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(text)
            self.git("add", "--", path)
        self.git("commit", "--quiet", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()

    def start_branch(self, name: str, base: str = "main") -> str:
        """Check out a new branch ``name`` at ``base``; the base commit's sha."""
        self.git("checkout", "--quiet", "-B", name, base)
        return self.head()

    def checkout(self, ref: str) -> None:
        self.git("checkout", "--quiet", ref)

    def merge(self, branch: str, message: str) -> str:
        """Merge ``branch`` into ``main`` with a merge commit; its sha."""
        self.checkout("main")
        self.git("merge", "--quiet", "--no-ff", "-m", message, branch)
        return self.head()

    def text(self, sha: str, path: str) -> str:
        return self.git("show", f"{sha}:{path}")

    def changed(self, base: str, head: str) -> list[dict[str, Any]]:
        """The files ``base...head`` changes, as GitHub lists a pull request's files."""
        found = []
        for line in self.git(
            "diff", "--name-status", "--no-renames", f"{base}...{head}"
        ).splitlines():
            status, path = line.split("\t", 1)
            diff = self.git("diff", "--unified=3", f"{base}...{head}", "--", path)
            patch = diff[diff.index("@@") :] if "@@" in diff else ""
            found.append(
                changed_file(path, patch.removesuffix("\n"), _STATUS.get(status[0], "modified"))
            )
        return found

    def tree(self, sha: str) -> dict[str, str]:
        """Every file at ``sha``, path → text (read with one ``cat-file --batch``)."""
        if sha not in self._trees:
            paths = self.git("ls-tree", "-r", "--name-only", sha).splitlines()
            asked = "".join(f"{sha}:{path}\n" for path in paths).encode()
            batch = self.git_bytes("cat-file", "--batch", stdin=asked)
            self._trees[sha] = dict(zip(paths, _batch_texts(batch), strict=True))
        return dict(self._trees[sha])


def _batch_texts(batch: bytes) -> list[str]:
    """The contents in ``git cat-file --batch``'s output: for each object a header line
    "<sha> blob <size>", that many bytes, a newline."""
    texts, at = [], 0
    while at < len(batch):
        header_end = batch.index(b"\n", at)
        size = int(batch[at:header_end].split()[2])
        texts.append(batch[header_end + 1 : header_end + 1 + size].decode())
        at = header_end + 1 + size + 1
    return texts
