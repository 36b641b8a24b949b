"""What maintenance must look at, found without the model: stale items, near-duplicates and
conflict blocks. The model gets them as a list with both versions and the reasons; what it
changes is an ordinary memory edit."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass

from memory_action.memory.citations import Item, StaleItem
from memory_action.memory.merge import CONFLICT_END, CONFLICT_MIDDLE, CONFLICT_START
from memory_action.memory.similar import LOOKED_AT, MOST_ALIKE, candidate_pairs
from memory_action.safety.untrusted_markdown import LIST_MARKER

SIMILAR = 0.85  # difflib ratio from which two items say the same thing
_CHECK_EVERY = 256  # candidates between looks at the deadline
MAX_LISTED = 40  # of each kind, so the list stays short next to memory itself
_BULLET = re.compile(rf"^{LIST_MARKER.pattern}\s+(?:\[[ xX]\]\s+)?")  # and a task's box


@dataclass(frozen=True, kw_only=True)
class Duplicate:
    first: Item
    second: Item
    ratio: float  # 1.0: the same words


@dataclass(frozen=True, kw_only=True)
class DuplicateSearch:
    pairs: tuple[Duplicate, ...]
    complete: bool  # False: the deadline came first; later candidates were not compared
    capped: int = 0  # items with so many look-alikes that only the most alike were compared


@dataclass(frozen=True, kw_only=True)
class ConflictBlock:
    line: int  # 1-based line of the start marker
    ours: tuple[str, ...]
    theirs: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Findings:
    stale: tuple[StaleItem, ...] = ()
    duplicates: tuple[Duplicate, ...] = ()
    conflicts: tuple[ConflictBlock, ...] = ()
    unchecked: tuple[str, ...] = ()  # what the checks did not get to (time ran out), and why
    capped: int = 0  # items with more look-alikes than the near-duplicate search compares

    def __bool__(self) -> bool:
        return bool(self.stale or self.duplicates or self.conflicts)

    def counts(self) -> str:
        return (
            f"{len(self.stale)} stale item(s), {len(self.duplicates)} duplicate pair(s), "
            f"{len(self.conflicts)} conflict block(s)"
        )


def never() -> bool:
    """A deadline that never comes."""
    return False


def near_duplicates(
    items: list[Item], threshold: float = SIMILAR, *, expired: Callable[[], bool] = never
) -> DuplicateSearch:
    """Pairs of items whose words (bullets and case aside) are at least ``threshold`` alike, in
    the order of the items; the search stops once ``expired()`` (then it is not ``complete``).
    The exact ``difflib`` ratio is computed only for the candidates ``similar`` finds."""
    keys = [comparable(item.text) for item in items]
    candidates = candidate_pairs(keys, threshold, expired)
    found: list[Duplicate] = []
    matcher = difflib.SequenceMatcher(None, "", "", autojunk=False)
    for number, (i, j) in enumerate(candidates.pairs, start=1):
        if number % _CHECK_EVERY == 0 and expired():
            return DuplicateSearch(pairs=tuple(found), complete=False, capped=candidates.capped)
        matcher.set_seq2(keys[i])  # pairs are sorted: the same i in a row keeps its index
        ratio = _ratio(matcher, keys[j], threshold)
        if ratio is not None:
            found.append(Duplicate(first=items[i], second=items[j], ratio=round(ratio, 2)))
    return DuplicateSearch(
        pairs=tuple(found), complete=candidates.complete, capped=candidates.capped
    )


def _ratio(matcher: difflib.SequenceMatcher[str], a: str, threshold: float) -> float | None:
    """``difflib``'s ratio of ``a`` to the matcher's second text when it reaches ``threshold``
    (the cheap upper bounds first), else None."""
    matcher.set_seq1(a)
    if matcher.real_quick_ratio() < threshold or matcher.quick_ratio() < threshold:
        return None
    ratio = matcher.ratio()
    return ratio if ratio >= threshold else None


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
            blocks.append(ConflictBlock(line=start, ours=tuple(ours), theirs=tuple(theirs)))
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


def capped_note(capped: int) -> str:
    """What the near-duplicate search's cap on comparisons left out, when it was hit."""
    return (
        f"{capped} item(s) with more look-alikes than are compared: each was compared with at "
        f"most {LOOKED_AT} others and paired with its {MOST_ALIKE} most alike"
    )


def comparable(text: str) -> str:
    return " ".join(_BULLET.sub("", text).lower().split())


def _quote(text: str, limit: int = 160) -> str:
    cut = text if len(text) <= limit else text[: limit - 1] + "…"
    return f'"{cut}"'
