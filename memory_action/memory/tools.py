"""``edit_file`` and ``write_file``: the model's only way to change memory, confined to one file.

Every refusal is a message returned to the model (tools never raise into the agent loop), and
nothing is written when a call is refused. A call whose resulting text would hold a secret (a
token format, a private key, or a value the run masked: see ``scrub``) is refused too, and recorded
in a ``RefusalLog`` (kinds only, never values) for the job summary. Writes go through a temporary
file in the same folder and a rename, after an ``lstat`` walk, so a symlink planted in restored
memory is never followed.
"""

from __future__ import annotations

import os
import stat
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from memory_action.memory.sources import MemoryFiles, find_symlink, normalise_text
from memory_action.safety.scrub import (
    RefusalLog,
    SecretFinding,
    describe,
    find_secrets,
    replace_findings,
)

_PATH_HELP = "Workspace-relative path of your writable memory file, as named in the guidelines."


class _EditArgs(BaseModel):
    file_path: str = Field(description=_PATH_HELP)
    old_string: str = Field(description="Exact text to replace, copied from the file.")
    new_string: str = Field(description="Text to put in its place.")
    replace_all: bool = Field(
        default=False, description="Replace every occurrence instead of exactly one."
    )


class _WriteArgs(BaseModel):
    file_path: str = Field(description=_PATH_HELP)
    content: str = Field(description="The whole new content of the file.")


class _Refused(Exception):  # noqa: N818 - an outcome reported to the model, not a failure
    """A call the tools refuse; its message goes back to the model after ``Error: ``."""


class _SecretRefused(_Refused):
    """A call refused because its result would hold a secret; its message goes back as is."""


def make_memory_tools(
    files: MemoryFiles,
    on_edit: Callable[[], None] | None = None,
    *,
    refusals: RefusalLog | None = None,
) -> list[BaseTool]:
    """``edit_file`` and ``write_file`` for the writable memory file of ``files``.

    ``on_edit`` is called after every successful write (e.g. to re-read memory). A call whose
    resulting text holds a secret (see ``scrub.find_secrets``, with ``files.masked``) is refused
    and recorded in ``refusals``.
    """
    return memory_tools(
        MemoryEditor(files, on_edit, RefusalLog() if refusals is None else refusals)
    )


def memory_tools(editor: MemoryEditor) -> list[BaseTool]:
    """``edit_file`` and ``write_file`` that change memory through ``editor``."""
    shown = editor.shown

    def edit_file(
        file_path: str, old_string: str, new_string: str, replace_all: bool = False
    ) -> str:
        return _guarded(lambda: editor.edit(file_path, old_string, new_string, replace_all), shown)

    def write_file(file_path: str, content: str) -> str:
        return _guarded(lambda: editor.write(file_path, content), shown)

    return [
        StructuredTool.from_function(
            func=edit_file,
            name="edit_file",
            description=(
                f"Edit your writable memory file ({shown}) by replacing an exact string. "
                "old_string must match the file exactly, whitespace and line breaks included, "
                "and occur exactly once unless replace_all is true. Only this file can be "
                "changed. To create the file or rewrite it whole, use write_file."
            ),
            args_schema=_EditArgs,
        ),
        StructuredTool.from_function(
            func=write_file,
            name="write_file",
            description=(
                f"Create or replace your writable memory file ({shown}) with the given content. "
                "Only this file can be written. Prefer edit_file for small changes."
            ),
            args_schema=_WriteArgs,
        ),
    ]


def _guarded(action: Callable[[], str], shown: str) -> str:
    try:
        return action()
    except _SecretRefused as refusal:
        return str(refusal)
    except _Refused as refusal:
        return f"Error: {refusal}"
    except OSError as exc:
        return f"Error: could not change {shown} ({exc.strerror or exc}); nothing was written."


@dataclass(frozen=True, kw_only=True)
class Checkpoint:
    """The writable memory file's text at one moment (None: it did not exist)."""

    text: str | None


class MemoryEditor:
    """Reads and writes the writable memory file, one call at a time; a checkpoint taken
    before a conversation lets its edits be undone when its answer is not used."""

    def __init__(
        self, files: MemoryFiles, on_edit: Callable[[], None] | None, refusals: RefusalLog
    ) -> None:
        self._files = files
        self._on_edit = on_edit
        self._refusals = refusals
        self._shown = self.shown = files.writable.as_posix()
        self._path = files.host_path(files.writable)
        # ToolNode runs parallel tool calls in threads: keep read-modify-write atomic.
        self._lock = threading.Lock()

    def edit(self, file_path: str, old_string: str, new_string: str, replace_all: bool) -> str:
        self._check_path(file_path)
        old, new = _lf(old_string), _lf(new_string)
        if not old:
            raise _Refused("old_string is empty. To write the whole file, use write_file.")
        if old == new:
            raise _Refused("old_string and new_string are the same; nothing to change.")
        with self._lock:
            current = self._read()
            if current is None:
                raise _Refused(f"{self._shown} does not exist yet; create it with write_file.")
            count = current.count(old)
            if count == 0:
                raise _Refused(
                    f"old_string was not found in {self._shown}. Copy it exactly from the file "
                    "(whitespace and line breaks matter), or rewrite the file with write_file."
                    + (_REDACTED_HINT if "[REDACTED " in old else "")
                )
            if count > 1 and not replace_all:
                raise _Refused(
                    f"old_string occurs {count} times in {self._shown}. Include more of the "
                    "surrounding text to make it unique, or set replace_all to true."
                )
            self._write(current, current.replace(old, new), tool="edit_file")
        return f"Edited {self._shown}" + (f" ({count} replacements)" if count > 1 else "")

    def write(self, file_path: str, content: str) -> str:
        self._check_path(file_path)
        with self._lock:
            self._write(self._read(), _lf(content), tool="write_file")
        return f"Wrote {self._shown}"

    def _check_path(self, file_path: str) -> None:
        raw = file_path.strip()
        pure = PurePosixPath(raw)
        yours = f"Your writable memory file is {self._shown}."
        if not raw:
            raise _Refused(f"file_path is empty. {yours}")
        if pure.is_absolute() or raw.startswith("~"):
            raise _Refused(f"{raw} is an absolute path; use the workspace-relative path. {yours}")
        if ".." in pure.parts or "\\" in raw:
            raise _Refused(f"{raw} may not contain '..' or backslashes. {yours}")
        if pure == self._files.writable:
            return
        if pure in self._files.read_only:
            raise _Refused(
                f"{raw} is read-only: it comes from the repository. Save what you learned "
                f"in {self._shown} instead."
            )
        raise _Refused(f"{raw} is not your memory file; only {self._shown} can be changed.")

    def _check_no_symlink(self) -> None:
        link = find_symlink(self._files.workspace, self._files.writable)
        if link is not None:
            raise _Refused(
                f"{self._shown} cannot be changed: {link.as_posix()} is a symlink, and memory "
                "files must be plain files in plain folders. Nothing was written."
            )

    def _read(self) -> str | None:
        """The file's text with LF line ends, or None when it does not exist."""
        self._check_no_symlink()
        try:
            fd = os.open(self._path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except (FileNotFoundError, NotADirectoryError):
            return None
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise _Refused(f"{self._shown} is not a regular file; nothing was written.")
            data = handle.read()
        try:
            return normalise_text(data.decode("utf-8"))
        except UnicodeDecodeError:
            raise _Refused(
                f"{self._shown} is not UTF-8 text; replace it whole with write_file."
            ) from None

    def _write(self, before: str | None, after: str, *, tool: str) -> None:
        self._check_secrets(before, after, tool)
        self._check_budget(before, after)
        self._replace(after)
        if self._on_edit is not None:
            self._on_edit()

    def checkpoint(self) -> Checkpoint:
        """The file as it is now, to roll back to."""
        with self._lock:
            return Checkpoint(text=self._read())

    def roll_back(self, to: Checkpoint) -> bool:
        """Put the file back as it was at ``to``; whether that changed it. What it held then
        passed every check when it was written (or came from the store), so none runs again."""
        with self._lock:
            try:
                if self._read() == to.text:
                    return False
                if to.text is None:
                    self._path.unlink(missing_ok=True)
                else:
                    self._replace(to.text)
            except (_Refused, OSError):  # a file made a link meanwhile: saving refuses it too
                return False
        if self._on_edit is not None:
            self._on_edit()
        return True

    def _replace(self, after: str) -> None:
        folder = self._path.parent
        folder.mkdir(parents=True, exist_ok=True)
        self._check_no_symlink()  # mkdir(exist_ok=True) would have accepted a linked folder
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{self._path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(after)
            Path(temporary).chmod(0o644)  # mkstemp makes 0600; memory is not secret
            Path(temporary).replace(self._path)  # replaces a link itself, never its target
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def _check_secrets(self, before: str | None, after: str, tool: str) -> None:
        findings = find_secrets(after, self._files.masked)
        if not findings:
            return
        self._refusals.record(tool, findings)
        raise _SecretRefused(_secret_refusal(findings, before or "", after, self._shown))

    def _check_budget(self, before: str | None, after: str) -> None:
        size = len(after.encode("utf-8"))
        # A shrinking edit is always allowed: it is how an oversized file gets consolidated.
        if size > self._files.max_bytes and size >= len((before or "").encode("utf-8")):
            raise _Refused(
                f"{self._shown} would be {size} bytes, over the memory limit of "
                f"{self._files.max_bytes} bytes; nothing was written. Consolidate instead: "
                "merge related entries and drop stale or one-off ones, then try again."
            )


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")


_REDACTED_HINT = (
    " Text shown as [REDACTED ...] in your memory is a hidden secret that must not stay there: "
    "rewrite the file with write_file, leaving it out."
)


def _secret_refusal(findings: list[SecretFinding], before: str, after: str, shown: str) -> str:
    """What the model is told: the kinds of secret and the lines holding them, never the values.

    Naming the line lets the model rephrase a false positive (a hash, an id, an example) instead
    of losing the whole edit.
    """
    added = [f for f in findings if after[f.start : f.end] not in before]
    if added:
        return (
            f"Refused: the new text contains what looks like {describe(added)} "
            f"({_named_lines(added, after)}). Memory must never hold secrets; write the rule "
            "without the value. If it is not a secret (a hash, an id, an example), rephrase that "
            "line: leave the value out or describe it."
        )
    return (
        f"Refused: the new text still contains what looks like {describe(findings)}, which is "
        f"already in {shown} ({_named_lines(findings, after)}). Memory must never hold secrets: "
        "leave the value out (rewrite the file with write_file without it). Nothing was written."
    )


_MAX_NAMED_LINES = 3
_MAX_SHOWN_LINE = 120


def _named_lines(findings: list[SecretFinding], text: str) -> str:
    """``line 4: `- deploy with [REDACTED GitHub token]` `` for the first few lines found."""
    redacted, marks = replace_findings(text, findings)
    lines: dict[int, str] = {}
    for finding, mark in zip(findings, marks, strict=True):
        number = text.count("\n", 0, finding.start) + 1
        start = redacted.rfind("\n", 0, mark) + 1
        end = redacted.find("\n", mark)
        line = redacted[start : len(redacted) if end == -1 else end].strip()
        if len(line) > _MAX_SHOWN_LINE:
            line = line[: _MAX_SHOWN_LINE - 3] + "..."
        lines.setdefault(number, line)
    named = [f"line {n}: `{line}`" for n, line in list(lines.items())[:_MAX_NAMED_LINES]]
    more = len(lines) - _MAX_NAMED_LINES
    return "; ".join(named) + (f"; and {more} more lines" if more > 0 else "")
