"""What a run changed in the memory folder: snapshots and a unified diff for people to read."""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from pathlib import Path

_NO_NEWLINE = "\\ No newline at end of file\n"


def snapshot(folder: Path) -> dict[str, str]:
    """Relative POSIX path → text of every regular UTF-8 file under ``folder``.

    Symlinks, other special files and files that are not UTF-8 are left out; a missing folder
    is an empty snapshot.
    """
    if not folder.is_dir():
        return {}
    texts: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        try:
            texts[path.relative_to(folder).as_posix()] = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return texts


def changed(before: Mapping[str, str], after: Mapping[str, str]) -> bool:
    return dict(before) != dict(after)


def memory_diff(before: Mapping[str, str], after: Mapping[str, str], label_prefix: str) -> str:
    """A unified diff of every added, removed or changed file; empty when nothing changed.

    Files are labelled ``a/<label_prefix>/<path>`` and ``b/<label_prefix>/<path>`` (git style),
    with ``/dev/null`` for the side where a file does not exist.
    """
    parts: list[str] = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        label = f"{label_prefix.rstrip('/')}/{name}" if label_prefix else name
        parts.extend(
            difflib.unified_diff(
                list(_lines(old or "")),
                list(_lines(new or "")),
                fromfile=f"a/{label}" if old is not None else "/dev/null",
                tofile=f"b/{label}" if new is not None else "/dev/null",
            )
        )
    return "".join(_terminate(parts))


def _lines(text: str) -> Iterator[str]:
    # Split on "\n" only: str.splitlines also splits on form feeds and Unicode separators.
    *complete, last = text.split("\n")
    yield from (line + "\n" for line in complete)
    if last:
        yield last


def _terminate(lines: list[str]) -> Iterator[str]:
    """Every line ends in a newline; a last line without one gets diff's usual marker."""
    for line in lines:
        if line.endswith("\n"):
            yield line
        else:
            yield line + "\n"
            yield _NO_NEWLINE
