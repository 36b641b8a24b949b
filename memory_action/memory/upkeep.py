"""What maintenance must look at, found without the model: stale items, near-duplicates and
conflict blocks. The model gets them as a list with both versions and the reasons; what it
changes is an ordinary memory edit."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from memory_action.memory.citations import Item, StaleItem
from memory_action.memory.merge import CONFLICT_END, CONFLICT_MIDDLE, CONFLICT_START

SIMILAR = 0.85  # difflib ratio from which two items say the same thing
MAX_LISTED = 40  # of each kind, so the list stays short next to memory itself
_BULLET = re.compile(r"^(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")


@dataclass(frozen=True)
class Duplicate:
    first: Item
    second: Item
    ratio: float  # 1.0: the same words


@dataclass(frozen=True)
class ConflictBlock:
    line: int  # 1-based line of the start marker
    ours: tuple[str, ...]
    theirs: tuple[str, ...]


@dataclass(frozen=True)
class Findings:
    stale: tuple[StaleItem, ...] = ()
    duplicates: tuple[Duplicate, ...] = ()
    conflicts: tuple[ConflictBlock, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.stale or self.duplicates or self.conflicts)

    def counts(self) -> str:
        return (
            f"{len(self.stale)} stale item(s), {len(self.duplicates)} duplicate pair(s), "
            f"{len(self.conflicts)} conflict block(s)"
        )


def near_duplicates(items: list[Item], threshold: float = SIMILAR) -> list[Duplicate]:
    """Pairs of items whose words (bullets and case aside) are at least ``threshold`` alike."""
    keys = [_comparable(item.text) for item in items]
    found = []
    for i, first in enumerate(items):
        matcher = difflib.SequenceMatcher(None, b=keys[i], autojunk=False)
        for j in range(i + 1, len(items)):
            matcher.set_seq1(keys[j])
            if matcher.real_quick_ratio() < threshold or matcher.quick_ratio() < threshold:
                continue
            ratio = matcher.ratio()
            if ratio >= threshold:
                found.append(Duplicate(first, items[j], round(ratio, 2)))
    return found


def conflict_blocks(memory: str) -> list[ConflictBlock]:
    """The conflict blocks merges wrote (``memory.merge``), each with its two versions."""
    blocks: list[ConflictBlock] = []
    ours: list[str] = []
    theirs: list[str] = []
    start, side = 0, ""
    for number, line in enumerate(memory.splitlines(), start=1):
        if line.startswith(CONFLICT_START):
            start, ours, theirs, side = number, [], [], "ours"
        elif line == CONFLICT_MIDDLE and side == "ours":
            side = "theirs"
        elif line.startswith(CONFLICT_END) and side == "theirs":
            blocks.append(ConflictBlock(start, tuple(ours), tuple(theirs)))
            side = ""
        elif side:
            (ours if side == "ours" else theirs).append(line)
    return blocks


def brief(findings: Findings) -> str:
    """The list for the model's task: each finding with its lines and why."""
    parts = []
    if findings.stale:
        lines = [
            f"- line {s.item.line}: {_quote(s.item.text)} — {'; '.join(s.reasons)}"
            for s in findings.stale[:MAX_LISTED]
        ]
        parts.append(
            "Items whose citations the default branch no longer backs (checked against its "
            "files): remove each, or reword it to what the code holds now if you can tell:\n"
            + "\n".join(lines)
        )
    if findings.duplicates:
        lines = [
            f"- lines {d.first.line} and {d.second.line} ({d.ratio:.0%} alike): "
            f"{_quote(d.first.text)} / {_quote(d.second.text)}"
            for d in findings.duplicates[:MAX_LISTED]
        ]
        parts.append("Items that say nearly the same thing: merge each pair:\n" + "\n".join(lines))
    if findings.conflicts:
        lines = [
            f"- line {c.line}: one version {_quote(' / '.join(c.ours))}, the other "
            f"{_quote(' / '.join(c.theirs))}"
            for c in findings.conflicts[:MAX_LISTED]
        ]
        parts.append(
            "Conflict blocks (two runs changed the same lines): keep the right version or "
            "combine both, and delete the markers:\n" + "\n".join(lines)
        )
    return "\n\n".join(parts)


def notes(findings: Findings) -> list[str]:
    """One line per finding, for the job summary: what maintenance was asked to change."""
    lines = [f"stale: {_quote(s.item.text)} ({'; '.join(s.reasons)})" for s in findings.stale]
    lines += [
        f"duplicate ({d.ratio:.0%}): {_quote(d.first.text)} / {_quote(d.second.text)}"
        for d in findings.duplicates
    ]
    lines += [f"conflict block at line {c.line}" for c in findings.conflicts]
    return lines[:MAX_LISTED]


def _comparable(text: str) -> str:
    return " ".join(_BULLET.sub("", text).lower().split())


def _quote(text: str, limit: int = 160) -> str:
    cut = text if len(text) <= limit else text[: limit - 1] + "…"
    return f'"{cut}"'
