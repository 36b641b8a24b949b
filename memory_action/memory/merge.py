"""Lossless merging of memory texts: two runs' edits, or several unmerged cache entries.

Cache entries are immutable and runs race, so two runs can each save memory that started from the
same text. Memory is a list of facts, not code: two runs appending different bullets under the
same heading is the common case and is not a conflict (both are kept, ours first, each line once).
Only two different edits of the same existing lines conflict, and then both versions are kept
under a plain-text marker that the model sees and the next maintenance run resolves. Nothing a
side added is ever dropped, except a line that is already in the result.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from merge3 import Merge3

from memory_action.memory.sources import normalise_text

CONFLICT_START = (
    "<<<<<<< memory conflict: two runs changed these lines; keep the right version, delete the rest"
)
CONFLICT_MIDDLE = "======="
CONFLICT_END = ">>>>>>> end of memory conflict"
# Stands for a side that deleted the lines: an empty half would be easy to misread.
DELETED_NOTE = "(deleted: to accept the deletion, keep nothing from this conflict)"

Side = Literal["ours", "theirs"]


@dataclass(frozen=True, kw_only=True)
class MergeResult:
    text: str
    conflicts: int  # conflict blocks this merge wrote (has_conflicts also sees older ones)


@dataclass(frozen=True, kw_only=True)
class Head:
    """One unmerged cache entry: its memory text and the text it started from."""

    text: str
    base: str
    key: str
    created: float  # seconds since the epoch; orders heads, newest first


@dataclass(frozen=True, kw_only=True)
class _Change:
    """One side's replacement of ``base[start:end]`` (an insertion when start == end)."""

    side: Side
    start: int
    end: int
    lines: tuple[str, ...]


def merge_text(base: str, ours: str, theirs: str) -> MergeResult:
    """Apply both sides' changes (relative to ``base``) by lines; see the module docstring.

    Line ends are normalised to LF; a merged text ends with a newline. When one side made no
    change, the other side is returned exactly as it is.
    """
    if theirs in (ours, base):
        return MergeResult(text=ours, conflicts=0)
    if ours == base:
        return MergeResult(text=theirs, conflicts=0)
    merger = _Merger(_lines(base), _lines(ours), _lines(theirs))
    lines = list(merger.merge())
    return MergeResult(text=_join(lines), conflicts=merger.conflicts)


def merge_heads(heads: Sequence[Head]) -> MergeResult:
    """Fold several heads into one text, starting from the newest.

    Each older head's own changes (its ``text`` against its ``base``) are merged onto the result,
    so a head whose changes are already there adds nothing. Ties in ``created`` are broken by key,
    so the result does not depend on the order of ``heads``.
    """
    ordered = _newest_first(heads)
    if not ordered:
        return MergeResult(text="", conflicts=0)
    text, conflicts = ordered[0].text, 0
    for head in ordered[1:]:
        merged = merge_text(head.base, text, head.text)
        text, conflicts = merged.text, conflicts + merged.conflicts
    return MergeResult(text=text, conflicts=conflicts)


def _newest_first(heads: Sequence[Head]) -> list[Head]:
    """Heads by (created, key), newest first; a key listed twice names one entry, kept once."""
    seen: set[str] = set()
    ordered: list[Head] = []
    for head in sorted(heads, key=lambda head: (head.created, head.key), reverse=True):
        if head.key not in seen:
            seen.add(head.key)
            ordered.append(head)
    return ordered


def conflict_count(text: str) -> int:
    """How many conflict blocks ``text`` holds (written by any earlier merge)."""
    return sum(1 for line in _lines(text) if line.startswith(CONFLICT_START))


def has_conflicts(text: str) -> bool:
    return conflict_count(text) > 0


class _Merger:
    """One three-way merge: merge3 finds the regions, conflicting regions are refined by line."""

    def __init__(self, base: list[str], ours: list[str], theirs: list[str]) -> None:
        self._base, self._ours, self._theirs = base, ours, theirs
        # Lines ours added anywhere: theirs adding the same line elsewhere is the same fact.
        self._ours_added = Counter(ours) - Counter(base)
        self.conflicts = 0

    def merge(self) -> Iterator[str]:
        for group in Merge3(self._base, self._ours, self._theirs).merge_groups():
            if group[0] == "conflict":
                yield from self._refine(group[1], group[2], group[3])
            elif group[0] == "b":
                yield from self._theirs_new(group[1], ())
            else:
                yield from group[1]

    def _refine(
        self, base: Sequence[str], ours: Sequence[str], theirs: Sequence[str]
    ) -> Iterator[str]:
        """merge3 calls a whole region a conflict; only overlapping edits inside it are one."""
        changes = sorted(
            [*_changes("ours", base, ours), *_changes("theirs", base, theirs)],
            key=lambda change: (change.start, change.end),
        )
        # Where difflib splits one side's edit differently, theirs may repeat what ours wrote
        # in a neighbouring cluster of the same region.
        nearby = [line for change in changes if change.side == "ours" for line in change.lines]
        position = 0
        for cluster in _clusters(changes):
            start = cluster[0].start
            end = max(change.end for change in cluster)
            yield from base[position:start]
            yield from self._resolve(base[start:end], start, cluster, nearby)
            position = end
        yield from base[position:]

    def _resolve(
        self, base: Sequence[str], offset: int, cluster: list[_Change], nearby: list[str]
    ) -> list[str]:
        ours = _apply(base, offset, [change for change in cluster if change.side == "ours"])
        theirs = _apply(base, offset, [change for change in cluster if change.side == "theirs"])
        sides = {change.side for change in cluster}
        if sides == {"ours"}:
            return ours
        if sides == {"theirs"}:
            return self._theirs_new(theirs, nearby)
        if all(change.start == change.end for change in cluster):
            # Both sides added lines at the same place: a list of facts grows, no conflict.
            return [*ours, *self._theirs_new(theirs, ours)]
        return self._edit_vs_edit(base, ours, theirs, nearby)

    def _edit_vs_edit(
        self, base: Sequence[str], ours: list[str], theirs: list[str], nearby: list[str]
    ) -> list[str]:
        # Theirs' lines may already be in ours next to this cluster, e.g. in a conflict block
        # an earlier merge of the same head wrote: merging it again must not nest conflicts.
        if _covers([*ours, *nearby], theirs, base):
            return ours
        if _covers(theirs, ours, base):
            return theirs
        self.conflicts += 1
        return [
            CONFLICT_START,
            *(ours or [DELETED_NOTE]),
            CONFLICT_MIDDLE,
            *(theirs or [DELETED_NOTE]),
            CONFLICT_END,
        ]

    def _theirs_new(self, theirs: Iterable[str], ours: Sequence[str]) -> list[str]:
        """Theirs' lines minus facts ours already has, and minus the blank lines around them.

        ``ours`` is what ours wrote at or next to the same place (empty in a clean region).
        """
        present = set(ours)
        kept: list[str] = []
        dropped = False
        for line in theirs:
            if line.strip() and (line in present or self._ours_added[line] > 0):
                dropped = True
            elif line.strip() or not (dropped and kept and not kept[-1].strip()):
                present.add(line)
                kept.append(line)
        if _facts(kept):
            return kept
        # Only blank lines are left: they separated dropped facts, or ours already has a blank
        # line here. Keeping them would add a blank line on every re-merge.
        return [] if dropped or "" in {line.strip() for line in ours} else kept


def _covers(bigger: list[str], smaller: list[str], base: Sequence[str]) -> bool:
    """True when taking ``bigger`` loses nothing that ``smaller`` added to ``base``.

    A side that added nothing (a deletion) is covered by another side that added nothing, or by
    a conflict that is already written; otherwise an edit would silently win over the deletion.
    """
    facts = _facts(smaller) - set(base)
    if facts:
        return facts <= set(bigger)
    return not (_facts(bigger) - set(base)) or any(
        line.startswith(CONFLICT_START) for line in bigger
    )


def _facts(lines: Iterable[str]) -> set[str]:
    return {line for line in lines if line.strip()}


def _changes(side: Side, base: Sequence[str], lines: Sequence[str]) -> Iterator[_Change]:
    matcher = difflib.SequenceMatcher(None, base, lines, autojunk=False)
    for tag, start, end, first, last in matcher.get_opcodes():
        if tag != "equal":
            yield _Change(side=side, start=start, end=end, lines=tuple(lines[first:last]))


def _clusters(changes: list[_Change]) -> Iterator[list[_Change]]:
    """Group changes (sorted by start, end) whose base ranges overlap into one cluster each."""
    cluster: list[_Change] = []
    for change in changes:
        if cluster and not _overlaps(cluster, change):
            yield cluster
            cluster = []
        cluster.append(change)
    if cluster:
        yield cluster


def _overlaps(cluster: list[_Change], change: _Change) -> bool:
    start = cluster[0].start
    end = max(item.end for item in cluster)
    if change.start == change.end:  # an insertion only touches a range strictly inside it
        return change.start == start if start == end else start < change.start < end
    if start == end:  # the cluster so far only inserts, at one place
        return change.start < start < change.end
    return change.start < end and start < change.end


def _apply(base: Sequence[str], offset: int, changes: list[_Change]) -> list[str]:
    """``base`` (the lines from ``offset`` on) with one side's changes applied."""
    result: list[str] = []
    position = 0
    for change in changes:
        result.extend(base[position : change.start - offset])
        result.extend(change.lines)
        position = change.end - offset
    result.extend(base[position:])
    return result


def _lines(text: str) -> list[str]:
    # Split on "\n" only: str.splitlines also splits on form feeds and Unicode separators.
    lines = normalise_text(text).split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def _join(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines)
