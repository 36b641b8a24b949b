"""Figures of an evaluation: each a ratio with its target, measured with memory on and in the
baselines of the same run, printed as one table."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field

MEMORY = "memory"  # the arm every target is judged on
NO_MEMORY = "no memory"  # enable_memory: false
NO_TRUST = "no veto, no trust"  # every reply learned, every proposal promoted
WHOLE_FILE = "whole AGENTS.md"  # the reviewer reads the stored memory file as plain text
WIDTH = 100  # columns the table fits in


@dataclass(frozen=True, kw_only=True)
class Ratio:
    count: int
    total: int

    @property
    def value(self) -> float:
        return self.count / self.total if self.total else 0.0

    def __str__(self) -> str:
        return f"{self.value:.0%} ({self.count}/{self.total})"


@dataclass(frozen=True, kw_only=True)
class Metric:
    """``name`` is measured per arm; the target bounds the memory arm's ratio: at most
    ``ceiling``, at least ``floor``.

    ``known_gap`` says why the target is not met yet (what the product still lacks): such a
    metric is printed "MISSED (known gap: …)" and fails no run; only one flagged so does.
    """

    name: str
    ceiling: float | None = None  # the most the memory arm's ratio may be
    floor: float | None = None  # the least it may be
    measured: dict[str, Ratio] = field(default_factory=dict)  # arm → ratio
    known_gap: str | None = None

    def __post_init__(self) -> None:
        if (self.ceiling is None) == (self.floor is None):
            raise ValueError(f"metric {self.name!r}: give it a ceiling or a floor, not both")

    @property
    def target(self) -> str:
        if self.floor is not None:
            return f"≥ {self.floor:.0%}" if self.floor < 1 else "100%"
        return f"≤ {self.ceiling:.0%}" if self.ceiling else "0%"

    @property
    def met(self) -> bool:
        found = self.measured.get(MEMORY)
        if found is None or found.total == 0:
            return False
        if self.floor is not None:
            return found.value >= self.floor
        return self.ceiling is not None and found.value <= self.ceiling

    @property
    def fails(self) -> bool:
        """Missed and not flagged as a known gap: the run fails."""
        return not self.met and self.known_gap is None

    @property
    def verdict(self) -> str:
        if self.met:
            return "met"
        return f"MISSED (known gap: {self.known_gap})" if self.known_gap else "MISSED"


def table(title: str, metrics: Sequence[Metric], arms: Sequence[str], notes: Sequence[str]) -> str:
    """The metrics as rows, one column per arm, within ``WIDTH`` columns: a cell too wide for
    its column wraps onto the next lines (the metric's name, a known gap's reason; the arms'
    names in the head)."""
    head = ["metric", "target", *arms, ""]
    rows = [
        [
            m.name,
            m.target,
            *(str(m.measured[a]) if a in m.measured else "—" for a in arms),
            m.verdict,
        ]
        for m in metrics
    ]
    widths = [max([_longest_word(head[i]), *(len(r[i]) for r in rows)]) for i in range(len(head))]
    # The figures keep their width; the name and the verdict (a known gap's reason) share the
    # rest, the verdict at most half of it.
    room = WIDTH - sum(widths[1:-1]) - _GAP * (len(head) - 1)
    longest_verdict_word = max((_longest_word(r[-1]) for r in rows), default=0)
    widths[-1] = min(widths[-1], max(longest_verdict_word, room // 2))
    widths[0] = max(_longest_word(head[0]), room - widths[-1])
    lines = [title, ""]
    lines += _wrapped(head, widths)
    lines.append(_GAP_TEXT.join("-" * w for w in widths))
    for row in rows:
        lines += _wrapped(row, widths)
    lines += ["", *notes]
    return "\n".join(lines).rstrip() + "\n"


_GAP = 2
_GAP_TEXT = " " * _GAP


def _longest_word(text: str) -> int:
    return max((len(word) for word in text.split()), default=0)


def _wrapped(row: Sequence[str], widths: Sequence[int]) -> list[str]:
    """One row as lines: each cell wrapped to its column, the first line holding every cell's
    start (so a row's figures are on the line its name starts)."""
    cells = [textwrap.wrap(cell, width) or [""] for cell, width in zip(row, widths, strict=True)]
    depth = max(len(cell) for cell in cells)
    return [
        _GAP_TEXT.join(
            (cell[n] if n < len(cell) else "").ljust(width)
            for cell, width in zip(cells, widths, strict=True)
        ).rstrip()
        for n in range(depth)
    ]
