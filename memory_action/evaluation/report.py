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
    """``name`` is measured per arm; the target is a ceiling on the memory arm's ratio."""

    name: str
    ceiling: float  # the most the memory arm's ratio may be
    measured: dict[str, Ratio] = field(default_factory=dict)  # arm → ratio

    @property
    def target(self) -> str:
        return f"≤ {self.ceiling:.0%}" if self.ceiling else "0%"

    @property
    def met(self) -> bool:
        found = self.measured.get(MEMORY)
        return found is not None and found.total > 0 and found.value <= self.ceiling


def table(title: str, metrics: Sequence[Metric], arms: Sequence[str], notes: Sequence[str]) -> str:
    head = ["metric", "target", *arms, ""]
    rows = [
        [
            m.name,
            m.target,
            *(str(m.measured[a]) if a in m.measured else "—" for a in arms),
            "met" if m.met else "MISSED",
        ]
        for m in metrics
    ]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = [title, ""]
    for row in [head, ["-" * w for w in widths], *rows]:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    lines += ["", *notes]
    return "\n".join(lines).rstrip() + "\n"
