"""A local change as a pull request: ``git diff BASE...HEAD`` of a checkout behind the
``PullRequestReader`` protocol, so the review engine cannot tell it from a GitHub pull request.

Like GitHub's three-dot comparison, the change is HEAD against its merge base with BASE. Files
come as GitHub's API lists them: status (``added``, ``removed``, ``modified``, ``renamed`` with
its previous path…), additions, deletions and ``patch``, the unified hunks without the ``diff
--git``/``---``/``+++`` headers, None for a binary file or one with no hunk (a pure rename).
Contents are read at HEAD and at BASE's tip, as GitHub reads ``head.sha`` and ``base.sha``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memory_action.errors import InputError
from memory_action.github.pull_request import (
    MAX_FILE_BYTES,
    ChangedFile,
    PullRequestInfo,
    decode_text,
)
from memory_action.maintenance.git_checkout import GitCheckout

LOCAL_NUMBER = 0  # no pull request on GitHub has it: a stamp records no PR for it
# What GitHub's comparison does, whatever the developer's diff configuration says.
DIFF_OPTIONS = (
    "--find-renames",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--unified=3",
    "--inter-hunk-context=0",
)
_STATUS = {
    "A": "added",
    "D": "removed",
    "M": "modified",
    "R": "renamed",
    "C": "copied",
    "T": "changed",
}
_PATCH_START = b"diff --git "
_ABSENT = "000000"  # the mode git gives the missing side of an added or removed file


@dataclass(frozen=True, kw_only=True)
class RawChange:
    """One record of ``git diff --raw -z``."""

    letter: str  # git's status letter: A D M R C T
    path: str
    previous_path: str | None
    mode_changed: bool


def parse_raw(output: bytes) -> list[RawChange]:
    """``git diff --raw -z`` records: ``:old new oldsha newsha R086\\0old\\0new\\0`` or
    ``:old new oldsha newsha M\\0path\\0``."""
    fields = output.split(b"\0")
    changes: list[RawChange] = []
    index = 0
    while index < len(fields) and fields[index].startswith(b":"):
        old_mode, new_mode, _, _, letter_score = fields[index][1:].decode("ascii").split()
        letter = letter_score[0]
        paths = 2 if letter in "RC" else 1
        names = [os.fsdecode(name) for name in fields[index + 1 : index + 1 + paths]]
        changes.append(
            RawChange(
                letter=letter,
                path=names[-1],
                previous_path=names[0] if paths == 2 else None,
                mode_changed=old_mode != new_mode and _ABSENT not in (old_mode, new_mode),
            )
        )
        index += 1 + paths
    return changes


def split_patches(output: bytes) -> list[bytes]:
    """``git diff``'s output cut into one chunk per file, each from its ``diff --git`` line.

    A content line inside a hunk starts with `` ``, ``+``, ``-`` or ``\\``, so a line starting
    with ``diff --git`` is always a file's header.
    """
    if not output:
        return []
    if not output.startswith(_PATCH_START):
        raise ValueError("git diff output does not start with a 'diff --git' line")
    starts = [0]
    position = output.find(b"\n" + _PATCH_START)
    while position != -1:
        starts.append(position + 1)
        position = output.find(b"\n" + _PATCH_START, position + 1)
    return [output[a:b] for a, b in zip(starts, [*starts[1:], len(output)], strict=True)]


@dataclass(frozen=True, kw_only=True)
class Hunks:
    patch: str | None  # the hunks as GitHub gives them (no final newline); None when none
    additions: int
    deletions: int


def hunks_of(chunk: bytes) -> Hunks:
    """The hunks of one file's chunk of ``git diff``, without its headers."""
    lines = chunk.split(b"\n")
    first = next((i for i, line in enumerate(lines) if line.startswith(b"@@ ")), None)
    if first is None:  # binary, a pure rename, a mode change, an empty file
        return Hunks(patch=None, additions=0, deletions=0)
    body = lines[first:]
    if body and body[-1] == b"":
        body.pop()  # the chunk's last newline ends the last line, it adds no line
    additions = sum(1 for line in body if line.startswith(b"+"))
    deletions = sum(1 for line in body if line.startswith(b"-"))
    return Hunks(
        patch=b"\n".join(body).decode("utf-8", "replace"), additions=additions, deletions=deletions
    )


def to_changed_files(raw: bytes, patches: bytes) -> list[ChangedFile]:
    """``git diff --raw -z`` and ``git diff`` of the same comparison → GitHub's file list.

    Both list the files in the same order (one diff queue), so they are zipped.
    """
    changes, chunks = parse_raw(raw), split_patches(patches)
    if len(changes) != len(chunks):
        raise ValueError(f"git listed {len(changes)} changed files but {len(chunks)} patches")
    files: list[ChangedFile] = []
    for change, chunk in zip(changes, chunks, strict=True):
        hunks = hunks_of(chunk)
        status = _STATUS.get(change.letter, "changed")
        if status == "modified" and hunks.patch is None and change.mode_changed:
            status = "changed"  # only the file mode changed
        files.append(
            ChangedFile(
                path=change.path,
                status=status,
                additions=hunks.additions,
                deletions=hunks.deletions,
                patch=hunks.patch,
                previous_path=change.previous_path,
            )
        )
    return files


class LocalChange:
    """``PullRequestReader`` for ``git diff BASE...HEAD`` of a checkout; see ``open_change``."""

    def __init__(
        self, git: GitCheckout, base: str, base_sha: str, merge_base: str, head_sha: str
    ) -> None:
        self.git = git
        self.base = base
        self.base_sha = base_sha
        self.merge_base = merge_base
        self.head_sha = head_sha
        self._files: list[ChangedFile] | None = None
        self._info: PullRequestInfo | None = None

    def changed_files(self) -> list[ChangedFile]:
        if self._files is None:
            span = (self.merge_base, self.head_sha)
            # Attributes never come from the branch under review (its ``*.py -diff`` hides it).
            diff = self.git.run_without_attributes
            raw = diff("diff", "--raw", "-z", "--no-abbrev", *DIFF_OPTIONS, *span, "--")
            patches = diff("diff", *DIFF_OPTIONS, *span, "--")
            self._files = to_changed_files(raw, patches)
        return self._files

    def info(self) -> PullRequestInfo:
        if self._info is None:
            fields = self.git.run(
                "log", "-1", "--no-show-signature", "--format=%an%x00%s%x00%b", self.head_sha
            )
            author, title, body = fields.decode("utf-8", "replace").split("\0", 2)
            self._info = PullRequestInfo(
                number=LOCAL_NUMBER,
                title=title,
                body=body.strip(),
                author=author,
                html_url="",
                head_sha=self.head_sha,
                head_ref=self.git.current_branch() or self.head_sha,
                base_ref=self.base,
                base_sha=self.base_sha,
            )
        return self._info

    def file_content(self, path: str) -> str | None:
        return self._text(self.head_sha, path)

    def base_file_content(self, path: str) -> str | None:
        return self._text(self.base_sha, path)

    def _text(self, commit: str, path: str) -> str | None:
        data = self.git.read_blob(commit, path, MAX_FILE_BYTES)
        return decode_text(data) if data is not None else None


def open_change(folder: Path, base: str | None, env: Mapping[str, str]) -> LocalChange:
    """The change of the checkout ``folder`` is in against ``base`` (default: the upstream
    default branch); an InputError when there is no checkout, no such ref or nothing to review."""
    git = GitCheckout.find(folder, env)
    base = git.default_base() if base is None else base
    base_sha = git.commit(base)
    if base_sha is None:
        raise InputError(
            f"--base {base} names no commit in {git.root}: pass a branch, tag or commit "
            "that exists here (e.g. --base origin/main), fetching it first if it is remote."
        )
    head_sha = git.commit("HEAD")
    if head_sha is None:
        raise InputError(f"HEAD has no commit yet in {git.root}: commit the change to review.")
    merge_base = git.merge_base(base_sha, head_sha)
    if merge_base is None:
        raise InputError(f"{base} and HEAD share no history: pass a --base that HEAD grew from.")
    change = LocalChange(git, base, base_sha, merge_base, head_sha)
    if not change.changed_files():
        raise InputError(
            f"Nothing to review: git diff {base}...HEAD is empty (HEAD has no commit that "
            f"{base} lacks). Commit the change on a branch, or pass an older --base."
        )
    return change
