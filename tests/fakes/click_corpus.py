"""Six real pull requests of pallets/click, as GitHub's API would give them.

The corpus is a git bundle kept beside the repository (``../shared/corpus/click-prs.bundle`` from
the repository root, where CI lays ``shared/`` too): for each change a pair of tags,
``base-<sha>`` and ``head-<sha>``, the head commit's message being the pull request's title and
body. ``load_corpus`` clones the bundle (bare) and builds, per pull request, what GitHub answers:
the changed files of ``git diff base...head`` (``filename``, ``status``, ``additions``,
``deletions``, ``patch`` = the hunks without the ``diff --git``/``---``/``+++`` headers, no patch
for a binary or an empty file, ``previous_filename`` for a rename) and the trees at both commits,
read lazily. ``CorpusPull.fake()`` is a ``FakePullRequest`` for ``FakeGitHub``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from tests.fakes.github_api import FakePullRequest, changed_file

REPO_ROOT = Path(__file__).resolve().parents[2]
BUNDLE_IN_SHARED = Path("shared", "corpus", "click-prs.bundle")
MISSING = (
    "the pull request corpus is missing: ../shared/corpus/click-prs.bundle beside the "
    "repository root (lay shared/ next to the checkout, as CI does)"
)
# A user's git config (diff.noprefix, diff.algorithm, ...) must not change the diffs.
_GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C"}
_STATUS = {"A": "added", "D": "removed", "M": "modified", "R": "renamed", "T": "changed"}


def bundle_path(repo_root: Path = REPO_ROOT) -> Path:
    """The bundle beside ``repo_root``, or beside the main checkout when ``repo_root`` is a
    linked ``git worktree`` elsewhere; the first of these when neither has it."""
    candidates = [repo_root.parent / BUNDLE_IN_SHARED]
    try:
        common = git(repo_root, "rev-parse", "--path-format=absolute", "--git-common-dir")
    except (RuntimeError, OSError, subprocess.SubprocessError):
        common = b""  # not a git checkout: only the first place counts
    if common.strip():
        candidates.append(Path(common.decode().strip()).parent.parent / BUNDLE_IN_SHARED)
    return next((c for c in candidates if c.is_file()), candidates[0])


def git(repo: Path, *args: str) -> bytes:
    """Run git in ``repo`` without the user's configuration; its stdout."""
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        check=False,
        env={**os.environ, **_GIT_ENV},
        timeout=60,
    )
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {done.stderr.decode().strip()}")
    return done.stdout


class GitTree(Mapping[str, bytes]):
    """The files of one commit, path → bytes, each read from git on first use."""

    def __init__(self, repo: Path, commit: str) -> None:
        self._repo = repo
        self._commit = commit
        self._read: dict[str, bytes] = {}

    @cached_property
    def _paths(self) -> frozenset[str]:
        listing = git(self._repo, "ls-tree", "-r", "-z", "--full-tree", self._commit)
        entries = (entry.decode().split("\t", 1) for entry in listing.split(b"\0") if entry)
        return frozenset(path for meta, path in entries if meta.split()[1] == "blob")

    def __getitem__(self, path: str) -> bytes:
        if path not in self._paths:
            raise KeyError(path)
        if path not in self._read:
            self._read[path] = git(self._repo, "cat-file", "blob", f"{self._commit}:{path}")
        return self._read[path]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._paths))

    def __len__(self) -> int:
        return len(self._paths)


@dataclass(frozen=True)
class CorpusPull:
    tag: str  # the short sha of the tags base-<tag> / head-<tag>
    number: int
    title: str
    body: str
    base_sha: str
    head_sha: str
    files: tuple[dict[str, Any], ...]  # as GET /pulls/{n}/files answers
    head: GitTree
    base: GitTree

    @property
    def paths(self) -> list[str]:
        return [f["filename"] for f in self.files]

    @property
    def diff_chars(self) -> int:
        """The size of the change as GitHub gives it: the patches' characters."""
        return sum(len(f.get("patch", "")) for f in self.files)

    def fake(self) -> FakePullRequest:
        return FakePullRequest(
            number=self.number,
            title=self.title,
            body=self.body,
            base_ref="main",
            head_ref=f"pr-{self.tag}",
            files=[dict(f) for f in self.files],
            contents=self.head,
            base_contents=self.base,
            head_sha=self.head_sha,
            base_sha=self.base_sha,
        )


@dataclass(frozen=True)
class ClickCorpus:
    repo: Path  # the bare clone
    pulls: tuple[CorpusPull, ...]  # smallest change first, numbered from 1

    def pull(self, tag: str) -> CorpusPull:
        return next(p for p in self.pulls if p.tag == tag)


def load_corpus(bundle: Path, dest: Path) -> ClickCorpus:
    """Clone ``bundle`` into ``dest`` (which must not exist) and read its pull requests."""
    if not bundle.is_file():
        raise FileNotFoundError(MISSING)
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(bundle), str(dest)],
        check=True,
        env={**os.environ, **_GIT_ENV},
        timeout=120,
        capture_output=True,
    )
    tags = git(dest, "tag", "--list", "head-*").decode().split()
    pulls = sorted((_read_pull(dest, tag.removeprefix("head-")) for tag in tags), key=_size)
    numbered = (replace(pull, number=n) for n, pull in enumerate(pulls, start=1))
    return ClickCorpus(dest, tuple(numbered))


def _size(pull: CorpusPull) -> int:
    return sum(f["additions"] + f["deletions"] for f in pull.files)


def _read_pull(repo: Path, tag: str) -> CorpusPull:
    base = git(repo, "rev-parse", f"base-{tag}^{{commit}}").decode().strip()
    head = git(repo, "rev-parse", f"head-{tag}^{{commit}}").decode().strip()
    title, _, body = git(repo, "log", "-1", "--format=%B", head).decode().partition("\n")
    return CorpusPull(
        tag=tag,
        number=0,
        title=title.strip(),
        body=body.strip(),
        base_sha=base,
        head_sha=head,
        files=tuple(pull_files(repo, base, head)),
        head=GitTree(repo, head),
        base=GitTree(repo, base),
    )


def pull_files(repo: Path, base: str, head: str) -> list[dict[str, Any]]:
    """``git diff base...head`` as GitHub's list of changed files."""
    changes = _name_status(git(repo, "diff", "--name-status", "-z", "-M", f"{base}...{head}"))
    diff = git(
        repo,
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "-M",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        f"{base}...{head}",
    ).decode("utf-8", errors="replace")
    sections = _sections(diff)
    if len(sections) != len(changes):
        raise RuntimeError(f"{len(changes)} changed files but {len(sections)} diff sections")
    pairs = zip(changes, sections, strict=True)
    return [_file(status, paths, section) for (status, paths), section in pairs]


def _name_status(output: bytes) -> list[tuple[str, list[str]]]:
    """``--name-status -z``: a status, then one path (two for a rename or copy)."""
    tokens = [t.decode() for t in output.split(b"\0") if t]
    changes: list[tuple[str, list[str]]] = []
    while tokens:
        status = tokens.pop(0)
        count = 2 if status[0] in "RC" else 1
        changes.append((status[0], [tokens.pop(0) for _ in range(count)]))
    return changes


def _sections(diff: str) -> list[list[str]]:
    sections: list[list[str]] = []
    for line in diff.split("\n"):
        if line.startswith("diff --git "):
            sections.append([])
        elif sections:
            sections[-1].append(line)
    return sections


def _file(status: str, paths: list[str], section: list[str]) -> dict[str, Any]:
    hunks = next((i for i, line in enumerate(section) if line.startswith("@@")), None)
    patch = "\n".join(section[hunks:]).rstrip("\n") if hunks is not None else None
    entry = changed_file(paths[-1], patch or "", _STATUS.get(status, "modified"))
    if patch is None:  # GitHub sends no patch for a binary or an empty file
        del entry["patch"]
    if status == "R":
        entry["previous_filename"] = paths[0]
    return entry
