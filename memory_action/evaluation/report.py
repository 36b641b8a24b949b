"""Figures of an evaluation: each a ratio with its target, measured with memory on and in the
baselines of the same run, printed as one table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

MEMORY = "memory"  # the arm every target is judged on
NO_MEMORY = "no memory"  # enable_memory: false


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
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = [title, ""]
    for row in [head, ["-" * w for w in widths], *rows]:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    lines += ["", *notes]
    return "\n".join(lines).rstrip() + "\n"
