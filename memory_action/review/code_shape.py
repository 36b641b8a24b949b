"""What code a finding points at, in words that survive the code moving: the symbol around it
and the identifiers of its lines.

- ``enclosing_symbol``: the name of the definition (function, class, method, …) the finding's
  first line sits in: the nearest definition above it in its hunk that is indented less (or the
  line itself when it is one), else the one git names in the hunk's header. "" when none is seen.
- ``identifiers``: the names on the finding's lines, in order, each once, at most ``MAX_SHAPE``.

Pure: no I/O. A dismissal (``review.dismissals``) records both, so a later finding of the same
kind on the same symbol or the same code shape is recognised, and one elsewhere is not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memory_action.github.pull_request import ChangedFile
from memory_action.memory.review_ledger import MAX_SHAPE, MAX_SYMBOL
from memory_action.review.anchors import code_at
from memory_action.review.findings import Finding
from memory_action.review.patch import Hunk, parse_patch

_NAME = r"[A-Za-z_$][\w$]*"
# A line that defines something, in the common languages: `def f`, `class C`, `function f`,
# `func (r *T) f`, `fn f`, `pub struct S`, `export async function f`, `const f = (…) =>`.
_DEFINITION = re.compile(
    r"^\s*(?:(?:export|default|pub(?:\([^)]*\))?|public|private|protected|static|async|"
    r"abstract|final|override|inline|unsafe|extern)\s+)*"
    rf"(?:(?:def|class|function\*?|func|fn|sub|interface|struct|enum|trait|impl|module|"
    rf"object|record|type)\s+(?:\([^)]*\)\s*)?(?P<name>{_NAME})"
    rf"|(?:const|let|var)\s+(?P<bound>{_NAME})\s*=\s*(?:async\s*)?(?:function\b|\())"
)
_IDENTIFIER = re.compile(_NAME)


def enclosing_symbol(finding: Finding, files: Sequence[ChangedFile]) -> str:
    """The definition the finding's first line is in ("" when none is seen)."""
    changed = next((f for f in files if f.path == finding.path), None)
    if changed is None or changed.patch is None:
        return ""
    try:
        hunks = parse_patch(changed.patch)
    except ValueError:
        return ""
    first = finding.start_line or finding.line
    for hunk in hunks:
        above = _lines_up_to(hunk, finding.side, first)
        if above is not None:
            return _symbol_in(above) or _definition(hunk.section)
    return ""


def identifiers(finding: Finding, files: Sequence[ChangedFile]) -> tuple[str, ...]:
    """The names on the lines the finding points at, in order, each once (none off the diff)."""
    names = _IDENTIFIER.findall(code_at(finding, files))
    return tuple(n for n in dict.fromkeys(names) if len(n) <= MAX_SYMBOL)[:MAX_SHAPE]


def _lines_up_to(hunk: Hunk, side: str, number: int) -> list[str] | None:
    """The hunk's lines on ``side`` from its first to line ``number`` (None: not in it)."""
    shown = "+" if side == "RIGHT" else "-"
    lines: list[str] = []
    for line, old, new in hunk.numbered():
        kind, text = line[:1], line[1:]
        if kind not in (" ", shown):
            continue
        lines.append(text)
        if (new if side == "RIGHT" else old) == number:
            return lines
    return None


def _symbol_in(lines: Sequence[str]) -> str:
    """The nearest definition above the last line that holds it (indented less), or the last
    line itself when it is one."""
    last = lines[-1]
    if name := _definition(last):
        return name
    inside = _indent(last) if last.strip() else None  # None: any indentation holds a blank
    for text in reversed(lines[:-1]):
        if not text.strip():
            continue
        if inside is None or _indent(text) < inside:
            if name := _definition(text):
                return name
            inside = _indent(text)
    return ""


def _definition(text: str) -> str:
    found = _DEFINITION.match(text)
    if found is None:
        return ""
    name = found.group("name") or found.group("bound") or ""
    return name if len(name) <= MAX_SYMBOL else ""


def _indent(text: str) -> int:
    return len(text.expandtabs(4)) - len(text.expandtabs(4).lstrip())
