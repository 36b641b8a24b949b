"""A file of ``main`` with a block appended, and where in it the lines a scenario plants are:
what an episode's pull request changes, and the lines its findings point at."""

from __future__ import annotations

from dataclasses import dataclass

from memory_action.evaluation.world import World


@dataclass(frozen=True, kw_only=True)
class Appended:
    text: str
    line: int  # of the marker in the appended block
    start: int  # the first line of the appended block

    def line_of(self, marker: str) -> int:
        lines = self.text.splitlines()
        return next(n for n in range(self.start, len(lines) + 1) if lines[n - 1] == marker)


def appended(world: World, path: str, block: str, marker: str) -> Appended:
    """``path`` on main with ``block`` appended, and the line of ``marker`` in the block."""
    old = world.repo.text("main", path)
    text = old + block
    start = len(old.splitlines()) + 1
    found = Appended(text=text, line=start, start=start)
    return Appended(text=text, line=found.line_of(marker), start=start)
