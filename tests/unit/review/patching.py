"""A strict patch applier for tests: a hunk applies only where its header says, without fuzz.

It proves hunk headers exact: applying compressed hunks to the old file must give the new file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from memory_action.review.patch import Hunk

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "review"


def apply_hunks(old: Sequence[str], hunks: Sequence[Hunk]) -> list[str]:
    """The new file's lines; AssertionError when a header does not match the lines it holds."""
    new: list[str] = []
    copied = 0  # old lines consumed so far
    for hunk in hunks:
        start = hunk.old_start - 1 if hunk.old_count else hunk.old_start
        assert start >= copied, f"{hunk.header()} overlaps the hunk before it"
        new += old[copied:start]
        expected_new_start = len(new) + 1 if hunk.new_count else len(new)
        assert hunk.new_start == expected_new_start, f"{hunk.header()}: new side is off"
        old_side = side(hunk, "-")
        assert len(old_side) == hunk.old_count, f"{hunk.header()}: old count is off"
        assert len(side(hunk, "+")) == hunk.new_count, f"{hunk.header()}: new count is off"
        assert list(old[start : start + len(old_side)]) == old_side, f"{hunk.header()} misplaced"
        new += side(hunk, "+")
        copied = start + len(old_side)
    return new + list(old[copied:])


def reverse(hunks: Sequence[Hunk]) -> list[Hunk]:
    """The hunks that turn the new file back into the old one."""
    swap = {"+": "-", "-": "+"}
    return [
        Hunk(
            old_start=h.new_start,
            old_count=h.new_count,
            new_start=h.old_start,
            new_count=h.old_count,
            section=h.section,
            lines=tuple(swap.get(line[0], line[0]) + line[1:] for line in h.lines),
        )
        for h in hunks
    ]


def side(hunk: Hunk, changed: str) -> list[str]:
    """The text of the lines on one side: context lines plus those marked ``changed``."""
    return [line[1:] for line in hunk.lines if line[:1] in (" ", changed)]
