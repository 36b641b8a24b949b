"""Findings as Markdown, where they cannot be inline comments: a review's body (anchors GitHub
would refuse), the job summary (a fork's token may not post a review) and a local review's
output. Where the findings are written instead of posted (``files`` given), each says when it
is not on a changed line: outside the diff (the action puts it in the review's body), or on
unchanged lines the diff shows only as context."""

from __future__ import annotations

from collections.abc import Sequence

from memory_action.github.pull_request import ChangedFile
from memory_action.review.anchors import anchorable, comment_body
from memory_action.review.findings import Finding
from memory_action.review.patch import parse_patch
from memory_action.safety.untrusted_markdown import code_span, normalise_line_ends

OUTSIDE = "not a line of the diff"
CONTEXT = "an unchanged line the diff shows as context"

MAX_LISTED = 50  # findings written out in one text; the rest are counted


def where(finding: Finding, files: Sequence[ChangedFile] | None = None) -> str:
    """Where the finding points; with ``files``, and whether that is off the changed lines."""
    shown = _lines_shown(finding)
    off = placement(finding, files) if files is not None else ""
    return f"{shown} ({off})" if off else shown


def placement(finding: Finding, files: Sequence[ChangedFile]) -> str:
    """ "" for a finding on changed lines; else where it is: outside the diff, or on context."""
    if not anchorable(finding, files):
        return OUTSIDE
    changed = next(f for f in files if f.path == finding.path)  # anchor found it
    assert changed.patch is not None  # noqa: S101 - anchor found its lines
    marks = "+" if finding.side == "RIGHT" else "-"
    first = finding.start_line or finding.line
    wanted = set(range(first, finding.line + 1))
    for hunk in parse_patch(changed.patch):
        for line, old, new in hunk.numbered():
            number = new if finding.side == "RIGHT" else old
            if line[:1] == marks and number in wanted:
                return ""
    return CONTEXT


def _lines_shown(finding: Finding) -> str:
    lines = (
        f"{finding.start_line}-{finding.line}"
        if finding.start_line and finding.start_line != finding.line
        else str(finding.line)
    )
    side = " (deleted lines)" if finding.side == "LEFT" else ""
    return f"{code_span(finding.path)} line {lines}{side}"  # one line: a path can hold "\n"


def findings_markdown(
    findings: Sequence[Finding], files: Sequence[ChangedFile] | None = None
) -> str:
    """Each finding: where it is, then its comment as an inline comment would show it; with
    ``files``, each off the changed lines says so."""
    parts = [f"- {where(f, files)}: {_indented(comment_body(f))}" for f in findings[:MAX_LISTED]]
    if len(findings) > MAX_LISTED:
        parts.append(f"- and {len(findings) - MAX_LISTED} more findings")
    return "\n".join(parts)


def _indented(text: str) -> str:
    """The comment as the content of a list item (continuation lines indented, whatever ends
    them: a lone CR would end the item)."""
    return normalise_line_ends(text).replace("\n", "\n  ")
