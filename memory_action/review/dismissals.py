r"""A finding people dismissed stays dismissed, whatever the model: the dismissal's memory line
carries the finding's signature, and a later finding that matches one is held back.

A dismissal's line reads (``lesson``)::

    - Review: do not flag "Unchecked None" in src/app.py, because callers check it. (@mona) \
    `dismissed: unchecked none | in load | on data get | at src/app.py`

(one line; cut here to fit.)
The code span at its end is the signature: the kind of finding (its title, normalised: lower
case words), the definition it is in (``in``), the names on its lines (``on``) and its path
(``at``, last: a path may hold anything but a backtick or a line end). It is inline code, so
Markdown renders it as typed and no part of it is a link, HTML or a mention; nothing else in the
line can hold a backtick (``plain``), so it cannot be forged or cut by the reason.

``hold_back`` (pure) filters a review's findings with the memory the run loaded: a finding of
the same kind in the same file is held back when it is in the same definition (both name one),
else when it is on the same names; the same title in another definition, on other code, or in
another file, is not. Only lines that are in memory count: a
line people vetoed (unticked) never reached it, and holds nothing back. A line without a
signature (or one the strict parser refuses) holds nothing back: the same words alone are not
the same finding.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memory_action.github.pull_request import ChangedFile
from memory_action.memory.review_ledger import LedgerEntry
from memory_action.review.code_shape import enclosing_symbol, identifiers
from memory_action.review.findings import Finding
from memory_action.review.ledger import normalised

PREFIX = "- Review: do not flag "
MARKER = "dismissed: "
_UNSAFE = re.compile(r"[`<>\[\]\r\n\t]+")
_LINE = re.compile(
    rf'^{re.escape(PREFIX)}"(?P<title>[^`]+)" in (?P<path>[^`]+?), because [^`]* '
    rf"`{MARKER}(?P<signature>[^`]+)`$"
)
_KIND = re.compile(r"[^\W_]+(?: [^\W_]+)*")
_NAME = r"[A-Za-z_$][\w$]*"
_SYMBOL = re.compile(rf"in (?P<name>{_NAME})")
_SHAPE = re.compile(rf"on (?P<names>{_NAME}(?: {_NAME})*)")
_AT = " | at "


@dataclass(frozen=True, kw_only=True)
class Signature:
    """What makes two findings the same one: kind and path, and the symbol or the shape."""

    kind: str  # the title, ``normalised``
    path: str  # as the line writes it (``plain``)
    symbol: str = ""  # the definition the finding is in ("": none seen)
    shape: tuple[str, ...] = ()  # the names on its lines

    @property
    def recognisable(self) -> bool:
        """Whether it says more than words: without code to point at, it matches nothing."""
        return bool(self.kind and self.path and (self.symbol or self.shape))

    def matches(self, other: Signature) -> bool:
        if not (self.recognisable and other.recognisable):
            return False
        if (self.kind, self.path) != (other.kind, other.path):
            return False
        if self.symbol and other.symbol:  # the same definition, wherever in it the model points
            return self.symbol == other.symbol
        return bool(self.shape) and set(self.shape) == set(other.shape)


@dataclass(frozen=True, kw_only=True)
class Dismissal:
    line: str  # the memory line, stripped
    signature: Signature


@dataclass(frozen=True, kw_only=True)
class HeldBack:
    finding: Finding
    line: str  # the memory line that held it back


@dataclass(frozen=True, kw_only=True)
class Filtered:
    kept: tuple[Finding, ...]
    held: tuple[HeldBack, ...]


def plain(text: str) -> str:
    """One line without Markdown that could break out of a list item or a code span."""
    return " ".join(_UNSAFE.sub(" ", text).split())


def signature_of(finding: Finding, files: Sequence[ChangedFile]) -> Signature:
    """The finding's signature, from the pull request's diff."""
    return Signature(
        kind=normalised(finding.title),
        path=plain(finding.path),
        symbol=enclosing_symbol(finding, files),
        shape=identifiers(finding, files),
    )


def entry_signature(entry: LedgerEntry) -> Signature:
    """The signature of a posted finding, as the ledger recorded it when it was posted."""
    return Signature(
        kind=normalised(entry.title), path=plain(entry.path), symbol=entry.symbol, shape=entry.shape
    )


def lesson(entry: LedgerEntry, reason: str) -> str:
    """The memory line a dismissed finding proposes; with its signature when it has one."""
    line = f'{PREFIX}"{plain(entry.title)}" in {plain(entry.path)}, because {plain(reason)}'
    found = entry_signature(entry)
    return f"{line} {marker(found)}" if found.recognisable else line


def marker(signature: Signature) -> str:
    """The signature as the code span at the end of a dismissal's line."""
    parts = [signature.kind]
    parts += [f"in {signature.symbol}"] if signature.symbol else []
    parts += [f"on {' '.join(signature.shape)}"] if signature.shape else []
    return f"`{MARKER}{' | '.join(parts)}{_AT}{signature.path}`"


def parse_dismissal(line: str) -> Dismissal | None:
    """The dismissal a memory line states, or None: only a line ``lesson`` could have written,
    whose signature agrees with its words (the title's kind, the path)."""
    text = line.strip()
    found = _LINE.fullmatch(text)
    if found is None:
        return None
    head, _, path = found.group("signature").partition(_AT)
    kind, *rest = head.split(" | ")
    if not _KIND.fullmatch(kind) or path != found.group("path"):
        return None
    if kind != normalised(found.group("title")):
        return None
    symbol = _SYMBOL.fullmatch(rest.pop(0)) if rest and rest[0].startswith("in ") else None
    shape = _SHAPE.fullmatch(rest.pop(0)) if rest and rest[0].startswith("on ") else None
    if rest or (symbol is None and shape is None):
        return None
    signature = Signature(
        kind=kind,
        path=path,
        symbol=symbol.group("name") if symbol else "",
        shape=tuple(shape.group("names").split()) if shape else (),
    )
    return Dismissal(line=text, signature=signature)


def dismissals(memory: str) -> tuple[Dismissal, ...]:
    """Every dismissal the memory text states, in its order."""
    found = (parse_dismissal(line) for line in memory.splitlines())
    return tuple(d for d in found if d is not None)


def held_by(signature: Signature, known: Sequence[Dismissal]) -> Dismissal | None:
    """The first dismissal that matches ``signature`` (None: the finding may be posted)."""
    return next((d for d in known if d.signature.matches(signature)), None)


def hold_back(findings: Sequence[Finding], files: Sequence[ChangedFile], memory: str) -> Filtered:
    """The findings to post, and those a dismissal in ``memory`` holds back (with its line)."""
    known = dismissals(memory)
    kept: list[Finding] = []
    held: list[HeldBack] = []
    for finding in findings:
        by = held_by(signature_of(finding, files), known) if known else None
        if by is None:
            kept.append(finding)
        else:
            held.append(HeldBack(finding=finding, line=by.line))
    return Filtered(kept=tuple(kept), held=tuple(held))
