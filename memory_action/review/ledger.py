"""Findings across batches and across runs: fingerprints, merging, and keeping the ledger.

A finding's fingerprint is its path, its concern (the title, normalised) and the code it points
at (the text of its lines in the diff): it survives the code moving to other lines, and changes
when the code it is about changes. Pure: no I/O.

- ``merge_findings``: the batches' findings as one list, without repeats, in a fixed order.
- ``unposted``: the findings the ledger does not hold (a later run never posts one again).
- ``mark_outdated``: open findings whose code is no longer in the pull request's diff.
- ``recorded``: the ledger after this run posted its findings.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from memory_action.github.pull_request import ChangedFile, Side
from memory_action.memory.review_ledger import (
    MAX_ENTRIES,
    MAX_TITLE,
    LedgerEntry,
    LedgerState,
    ReviewLedger,
)
from memory_action.review.anchors import code_at, patch_lines
from memory_action.review.code_shape import enclosing_symbol, identifiers
from memory_action.review.findings import Finding

SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2}
SHOWN_OPEN = 20  # open findings listed in a request; the rest are counted
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True, kw_only=True)
class Print:
    """What identifies a finding: its fingerprint, and the code's digest and line count."""

    fingerprint: str
    code: str
    lines: int


def normalised(title: str) -> str:
    """Lower case words only: "Unchecked `None`!" and "unchecked none" are one concern."""
    return " ".join(_WORD.findall(title.lower()))


def code_digest(lines: Sequence[str]) -> str:
    """The digest of lines of code, blind to indentation and trailing spaces."""
    text = "\n".join(line.strip() for line in lines)
    return hashlib.sha256(text.encode()).hexdigest()[:32] if lines else ""


def fingerprint(finding: Finding, files: Sequence[ChangedFile]) -> Print:
    code = code_at(finding, files)
    lines = code.split("\n") if code else []
    digest = code_digest(lines)
    key = "\0".join((finding.path, normalised(finding.title), digest))
    return Print(
        fingerprint=hashlib.sha256(key.encode()).hexdigest()[:32], code=digest, lines=len(lines)
    )


def merge_findings(
    groups: Iterable[Sequence[Finding]], files: Sequence[ChangedFile]
) -> tuple[Finding, ...]:
    """Every group's findings once (the first of a fingerprint wins), most severe first, then
    by path and line: the same answers always give the same review."""
    seen: dict[str, Finding] = {}
    for group in groups:
        for finding in group:
            seen.setdefault(fingerprint(finding, files).fingerprint, finding)
    return tuple(sorted(seen.values(), key=_order))


def _order(finding: Finding) -> tuple[int, str, int, int, str]:
    start = finding.start_line or finding.line
    return (SEVERITY_ORDER[finding.severity], finding.path, start, finding.line, finding.title)


def unposted(
    ledger: ReviewLedger, findings: Sequence[Finding], files: Sequence[ChangedFile]
) -> list[Finding]:
    """The findings the ledger does not hold, whatever state it holds them in."""
    return [f for f in findings if not ledger.holds(fingerprint(f, files).fingerprint)]


def mark_outdated(ledger: ReviewLedger, files: Sequence[ChangedFile]) -> ReviewLedger:
    """Open findings whose code is no longer in the pull request's diff become outdated (a
    finding that never pointed at code in the diff stays as it is)."""
    windows = _windows(ledger.open(), files)
    entries = tuple(
        _with_state(entry, "outdated")
        if entry.state == "open" and entry.code and entry.code not in windows.get(_where(entry), ())
        else entry
        for entry in ledger.entries
    )
    return ledger.model_copy(update={"entries": entries})


def with_states(ledger: ReviewLedger, changes: Mapping[str, LedgerState]) -> ReviewLedger:
    """The ledger with the entries named by id (``LedgerEntry.id``) in a new state; only open
    entries change (a finding fixed, dismissed or outdated stays so)."""
    entries = tuple(
        _with_state(entry, changes[entry.id])
        if entry.state == "open" and entry.id in changes
        else entry
        for entry in ledger.entries
    )
    return ledger.model_copy(update={"entries": entries})


def recorded(
    ledger: ReviewLedger,
    posted: Sequence[tuple[Finding, int | None]],
    files: Sequence[ChangedFile],
    head: str,
) -> ReviewLedger:
    """The ledger with this run's posted findings (open) and the head it reviewed; the oldest
    closed entries make room when it is full."""
    new = [_entry(finding, comment_id, files) for finding, comment_id in posted]
    entries = [*ledger.entries, *(e for e in new if not ledger.holds(e.fingerprint))]
    while len(entries) > MAX_ENTRIES:
        closed = next((i for i, e in enumerate(entries) if e.state != "open"), 0)
        entries.pop(closed)
    return ReviewLedger(head=head, entries=tuple(entries))


def open_findings_note(ledger: ReviewLedger) -> str:
    """What a request tells the model of the open findings of earlier reviews ("" for none)."""
    found = ledger.open()
    if not found:
        return ""
    shown = [f"- {e.id}: {e.path}:{e.line}: {e.title}" for e in found[:SHOWN_OPEN]]
    more = [f"- and {len(found) - SHOWN_OPEN} more"] if len(found) > SHOWN_OPEN else []
    return "\n".join(
        [
            "Open findings of earlier reviews (already posted: do not report them again; put "
            "the id of each one this change fixes in `fixed`):",
            *shown,
            *more,
        ]
    )


def _entry(finding: Finding, comment_id: int | None, files: Sequence[ChangedFile]) -> LedgerEntry:
    found = fingerprint(finding, files)
    return LedgerEntry(
        fingerprint=found.fingerprint,
        path=finding.path,
        title=_shortened(finding.title),
        line=finding.line,
        side=finding.side,
        code=found.code,
        lines=found.lines,
        symbol=enclosing_symbol(finding, files),
        shape=identifiers(finding, files),
        comment_id=comment_id,
    )


def _shortened(title: str) -> str:
    """``title`` cut to ``MAX_TITLE`` after its last whole word: a secret cut in half is a piece
    the outgoing gate no longer knows, yet a reader sees most of it."""
    if len(title) <= MAX_TITLE:
        return title
    head = title[: MAX_TITLE + 1]
    cut = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
    return title[:cut].rstrip() if cut > 0 else title[:MAX_TITLE]


def _with_state(entry: LedgerEntry, state: LedgerState) -> LedgerEntry:
    return entry.model_copy(update={"state": state})


def _where(entry: LedgerEntry) -> tuple[str, Side, int]:
    return entry.path, entry.side, entry.lines


def _windows(
    entries: Iterable[LedgerEntry], files: Sequence[ChangedFile]
) -> dict[tuple[str, Side, int], set[str]]:
    """For each (path, side, line count) the open entries need: the digests of every run of
    that many consecutive lines of one hunk on that side."""
    patches = {f.path: f.patch for f in files}
    windows: dict[tuple[str, Side, int], set[str]] = {}
    for where in {_where(e) for e in entries if e.code}:
        path, side, count = where
        patch = patches.get(path)
        digests: set[str] = set()
        if patch is not None and count > 0:
            lines = patch_lines(patch, side) or {}
            by_hunk: dict[int, list[str]] = {}
            for number in sorted(lines):
                by_hunk.setdefault(lines[number].hunk, []).append(lines[number].text)
            for texts in by_hunk.values():
                digests |= {
                    code_digest(texts[i : i + count]) for i in range(len(texts) - count + 1)
                }
        windows[where] = digests
    return windows
