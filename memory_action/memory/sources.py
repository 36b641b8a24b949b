"""Which files make up one run's memory, and loading them with errors that say how to fix them.

Read-only sources come from the repository (``memory_sources``, e.g. ``AGENTS.md``); the one
writable file (``<memory_path>/AGENTS.md``) was restored from the memory store, so it is untrusted:
no symlink may appear anywhere on its path. A read-only source may be a symlink, but only to a
file inside the workspace.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Protocol

from memory_action.errors import MemoryFileError, Setting

WRITABLE_OVERRUN = 4  # how far past its budget the writable memory may be and still load
_FIX_READ_ONLY = "remove it from memory_sources"
_FIX_WRITABLE = "fix or delete it in the memory store it was restored from"


@dataclass(frozen=True, kw_only=True)
class MemorySource:
    """One loaded memory file, as the model sees it."""

    path: str  # workspace-relative POSIX path, as shown to the model
    content: str
    writable: bool


class MemorySettings(Protocol):
    """The inputs that name the memory files (``settings.Settings`` has them)."""

    @property
    def memory_file(self) -> PurePosixPath: ...

    @property
    def memory_sources(self) -> Sequence[str]: ...

    @property
    def max_memory_bytes(self) -> int: ...


@dataclass(frozen=True, kw_only=True)
class MemoryFiles:
    """The files that make up one run's memory, relative to the workspace."""

    workspace: Path
    read_only: tuple[PurePosixPath, ...]
    writable: PurePosixPath
    max_bytes: int
    # Every value the run masked (``Workflow.masked_values``): edits that hold one are refused.
    # Kept out of repr so that logging these settings can never print a secret.
    masked: tuple[str, ...] = field(default=(), repr=False)
    # Where the read-only sources are read (None: the workspace); a pull request run reads
    # copies of them at the base commit (``base_sources``), which the pull request cannot change.
    read_only_root: Path | None = None

    @classmethod
    def from_settings(
        cls, settings: MemorySettings, workspace: Path, masked: Iterable[str] = ()
    ) -> MemoryFiles:
        writable = settings.memory_file
        # A source listed twice, or naming the writable file, is shown once (as writable).
        read_only = tuple(
            dict.fromkeys(
                path for path in map(PurePosixPath, settings.memory_sources) if path != writable
            )
        )
        return cls(
            workspace=workspace,
            read_only=read_only,
            writable=writable,
            max_bytes=settings.max_memory_bytes,
            masked=tuple(sorted(set(masked))),
        )

    def host_path(self, relative: PurePosixPath) -> Path:
        return self.workspace.joinpath(*relative.parts)


def load_sources(files: MemoryFiles) -> list[MemorySource]:
    """Read-only sources in order, then the writable file; missing and empty files are left out.

    Raises ``MemoryFileError`` (one line: the path, what is wrong, the fix) for a file that is
    not UTF-8, over ``max_bytes``, not a regular file, or an unsafe symlink.
    """
    loaded = [_load_read_only(files, path) for path in files.read_only]
    loaded.append(_load_writable(files))
    return [source for source in loaded if source is not None and source.content.strip()]


def find_symlink(workspace: Path, relative: PurePosixPath) -> PurePosixPath | None:
    """The first prefix of ``relative`` (a folder or the file itself) that is a symlink, if any.

    Uses ``lstat``, so a link is reported even when its target is missing. Parts that do not
    exist yet are not links.
    """
    current = workspace
    for depth, part in enumerate(relative.parts, start=1):
        current = current / part
        try:
            mode = current.lstat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            return None
        if stat.S_ISLNK(mode):
            return PurePosixPath(*relative.parts[:depth])
    return None


def normalise_text(text: str) -> str:
    """Drop a UTF-8 byte-order mark and turn CRLF/CR line ends into LF."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def _load_read_only(files: MemoryFiles, relative: PurePosixPath) -> MemorySource | None:
    shown = relative.as_posix()
    folder = files.read_only_root or files.workspace
    path = folder.joinpath(*relative.parts)
    if not os.path.lexists(path):
        return None
    root = Path(os.path.realpath(folder))
    target = Path(os.path.realpath(path))
    if target != root and root not in target.parents:
        raise MemoryFileError(
            f"Memory source {shown} is a symlink to a file outside the workspace: "
            f"copy that file into the repository or {_FIX_READ_ONLY}."
        )
    content = _read(target, shown, files.max_bytes, fix=_FIX_READ_ONLY)
    return None if content is None else MemorySource(path=shown, content=content, writable=False)


def _load_writable(files: MemoryFiles) -> MemorySource | None:
    shown = files.writable.as_posix()
    link = find_symlink(files.workspace, files.writable)
    if link is not None:
        raise MemoryFileError(
            f"Memory file {shown} is unsafe: {link.as_posix()} is a symlink and memory files "
            f"must be plain files in plain folders; {_FIX_WRITABLE}."
        )
    # Over budget is allowed here (merging raced runs, or a lowered max_memory_kb, can get it
    # there): the agent is asked to consolidate and it is not saved until it fits. Only far
    # beyond the budget is it refused, as a file nobody can consolidate in one run.
    content = _read(
        files.host_path(files.writable),
        shown,
        files.max_bytes * WRITABLE_OVERRUN,
        fix=_FIX_WRITABLE,
        budget=files.max_bytes,
    )
    return None if content is None else MemorySource(path=shown, content=content, writable=True)


def _read(
    path: Path, shown: str, max_bytes: int, *, fix: str, budget: int | None = None
) -> str | None:
    """The normalised text of a regular UTF-8 file of at most ``max_bytes``; None if missing."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise MemoryFileError(f"Memory file {shown} is not a regular file: {fix}.")
        _check_size(shown, info.st_size, max_bytes, budget or max_bytes)
        # O_NOFOLLOW: the last part cannot have become a link since the checks above;
        # O_NONBLOCK: a FIFO swapped in cannot hang the run.
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise MemoryFileError(
            f"Memory file {shown} cannot be read ({exc.strerror}): {fix}."
        ) from exc
    _check_size(shown, len(data), max_bytes, budget or max_bytes)
    try:
        return normalise_text(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise MemoryFileError(
            f"Memory file {shown} is not UTF-8 text (bad byte at offset {exc.start}): "
            f"save it as UTF-8, or {fix}."
        ) from exc


def _check_size(shown: str, size: int, max_bytes: int, budget: int) -> None:
    if size > max_bytes:
        budget_setting = Setting(name="max_memory_kb")
        raise MemoryFileError(
            (
                f"Memory file {shown} is {size} bytes, over the limit of {max_bytes} bytes "
                f"({budget // 1024} KiB from ",
                budget_setting,
                "): raise ",
                budget_setting,
                " or trim it.",
            )
        )
