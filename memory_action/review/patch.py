"""Unified-diff hunks of one file: parse GitHub's ``patch``, trim context, render compactly.

Every hunk this module produces carries a header whose line numbers are exact for the lines it
holds, so a model (or ``git apply``) reading a compressed hunk sees the real line numbers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

_HEADER = re.compile(r"^@@ -([0-9]+)(?:,([0-9]+))? \+([0-9]+)(?:,([0-9]+))? @@ ?(.*)$")
_LINE_KINDS = (" ", "+", "-", "\\")
# git's default hunk-header rule: a line that starts with a letter, "_" or "$" names a section,
# and git keeps at most 80 bytes of it.
_SECTION_LINE = re.compile(r"^[A-Za-z_$]")
_SECTION_MAX = 80
_QUOTE_MAX = 80


@dataclass(frozen=True, kw_only=True)
class Hunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    section: str  # text after the closing @@ (may be "")
    lines: tuple[str, ...]  # each starts with " ", "+", "-" or "\\" (no newline at end)

    def header(self) -> str:
        old = _range(self.old_start, self.old_count)
        new = _range(self.new_start, self.new_count)
        return f"@@ -{old} +{new} @@" + (f" {self.section}" if self.section else "")

    def render(self) -> str:
        return "\n".join((self.header(), *self.lines)) + "\n"

    def piece(self, start: int, stop: int) -> Hunk:
        """The lines ``[start:stop]`` as a hunk of their own, with exact line numbers."""
        before = self.lines[:start]
        lines = self.lines[start:stop]
        old_first = _first_line(self.old_start, self.old_count) + _count(before, " -")
        new_first = _first_line(self.new_start, self.new_count) + _count(before, " +")
        old_count = _count(lines, " -")
        new_count = _count(lines, " +")
        return Hunk(
            old_start=old_first if old_count else old_first - 1,
            old_count=old_count,
            new_start=new_first if new_count else new_first - 1,
            new_count=new_count,
            section=_section_before(before, self.section),
            lines=lines,
        )

    def numbered(self) -> Iterator[tuple[str, int, int]]:
        """Each line with the numbers it has in the old and in the new file (for a line on one
        side only, the other number is where it would be on the other side)."""
        old = _first_line(self.old_start, self.old_count)
        new = _first_line(self.new_start, self.new_count)
        for line in self.lines:
            yield line, old, new
            old += _is(line, " -")
            new += _is(line, " +")

    @property
    def added(self) -> int:
        return _count(self.lines, "+")

    @property
    def removed(self) -> int:
        return _count(self.lines, "-")


def parse_patch(patch: str) -> list[Hunk]:
    """The hunks of GitHub's per-file ``patch``; lines before the first ``@@`` are ignored.

    Raises ValueError for a line that cannot be part of a unified diff.
    """
    hunks: list[Hunk] = []
    header: re.Match[str] | None = None
    lines: list[str] = []
    text = patch[:-1] if patch.endswith("\n") else patch
    for number, line in enumerate(text.split("\n"), start=1):
        match = _HEADER.match(line)
        if match:
            if header:
                hunks.append(_hunk(header, lines))
            header, lines = match, []
        elif header is None:
            continue  # "diff --git", "index", "---", "+++" of a full git diff
        elif line == "":
            lines.append(" ")  # an empty context line whose leading space was stripped
        elif line.startswith(_LINE_KINDS):
            lines.append(line)
        else:
            raise ValueError(f"line {number} of the patch is not a unified diff line: {line!r}")
    if header:
        hunks.append(_hunk(header, lines))
    return hunks


def compress_hunks(hunks: Sequence[Hunk], *, context: int) -> list[Hunk]:
    """Keep at most ``context`` unchanged lines around each change; split hunks at longer gaps.

    A hunk is split where a run of unchanged lines is longer than ``2 * context``; every header
    is recomputed. A hunk without any change is left out (it has nothing to review).
    """
    if context < 0:
        raise ValueError(f"context must be 0 or more, not {context}")
    compressed: list[Hunk] = []
    for hunk in hunks:
        compressed.extend(_compress(hunk, context))
    return compressed


def render_hunks(hunks: Sequence[Hunk], *, summarise_deletions_over: int = 8) -> str:
    """The hunks as text; a hunk that only removes more than N lines becomes one summary line."""
    return "".join(_render(hunk, summarise_deletions_over) for hunk in hunks)


def _render(hunk: Hunk, summarise_over: int) -> str:
    removed = hunk.removed
    if hunk.added or removed <= summarise_over:
        return hunk.render()
    removed_text = (line[1:].strip() for line in hunk.lines if _is(line, "-"))
    first = next((text for text in removed_text if text), "")
    quoted = f", from `{_shorten(first)}`" if first else ""
    return f"{hunk.header()}\n[{removed} lines removed{quoted}]\n"


def _compress(hunk: Hunk, context: int) -> list[Hunk]:
    # A "\ No newline at end of file" marker belongs to the line before it: keep them together.
    units: list[tuple[int, int]] = []  # (first line index, index after the unit)
    for index, line in enumerate(hunk.lines):
        if _is(line, "\\") and units:
            units[-1] = (units[-1][0], index + 1)
        else:
            units.append((index, index + 1))
    changed = [i for i, (first, _) in enumerate(units) if _is(hunk.lines[first], "+-")]
    keep = [False] * len(units)
    for unit in changed:
        for near in range(max(0, unit - context), min(len(units), unit + context + 1)):
            keep[near] = True
    pieces: list[Hunk] = []
    run_start: int | None = None
    for index, kept in enumerate([*keep, False]):
        if kept and run_start is None:
            run_start = index
        elif not kept and run_start is not None:
            pieces.append(hunk.piece(units[run_start][0], units[index - 1][1]))
            run_start = None
    return pieces


def _hunk(header: re.Match[str], lines: list[str]) -> Hunk:
    old_start, old_count, new_start, new_count, section = header.groups()
    return Hunk(
        old_start=int(old_start),
        old_count=1 if old_count is None else int(old_count),
        new_start=int(new_start),
        new_count=1 if new_count is None else int(new_count),
        section=section,
        lines=tuple(lines),
    )


def _range(start: int, count: int) -> str:
    # git (and difflib) leave out a count of 1.
    return str(start) if count == 1 else f"{start},{count}"


def _first_line(start: int, count: int) -> int:
    # With a count of 0 the header names the line *before* the (empty) range.
    return start if count else start + 1


def _count(lines: Sequence[str], kinds: str) -> int:
    return sum(1 for line in lines if _is(line, kinds))


def _is(line: str, kinds: str) -> bool:
    """Whether the diff line is of one of the kinds (" ", "+", "-", "\\")."""
    return line != "" and line[0] in kinds


def _section_before(lines: Sequence[str], section: str) -> str:
    # git looks backwards through the old file for the nearest section line.
    for line in reversed(lines):
        if _is(line, " -") and _SECTION_LINE.match(line[1:]):
            return line[1:].rstrip()[:_SECTION_MAX]
    return section


def _shorten(text: str) -> str:
    return text if len(text) <= _QUOTE_MAX else text[: _QUOTE_MAX - 1] + "…"
