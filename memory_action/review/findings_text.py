"""Findings as Markdown, where they cannot be inline comments: a review's body (anchors GitHub
would refuse) and the job summary (a fork's token may not post a review)."""

from __future__ import annotations

from collections.abc import Sequence

from memory_action.review.anchors import comment_body
from memory_action.review.findings import Finding
from memory_action.untrusted_markdown import code_span, normalise_line_ends

MAX_LISTED = 50  # findings written out in one text; the rest are counted


def where(finding: Finding) -> str:
    lines = (
        f"{finding.start_line}-{finding.line}"
        if finding.start_line and finding.start_line != finding.line
        else str(finding.line)
    )
    side = " (deleted lines)" if finding.side == "LEFT" else ""
    return f"{code_span(finding.path)} line {lines}{side}"  # one line: a path can hold "\n"


def findings_markdown(findings: Sequence[Finding]) -> str:
    """Each finding: where it is, then its comment as an inline comment would show it."""
    parts = [f"- {where(f)}: {_indented(comment_body(f))}" for f in findings[:MAX_LISTED]]
    if len(findings) > MAX_LISTED:
        parts.append(f"- and {len(findings) - MAX_LISTED} more findings")
    return "\n".join(parts)


def _indented(text: str) -> str:
    """The comment as the content of a list item (continuation lines indented, whatever ends
    them: a lone CR would end the item)."""
    return normalise_line_ends(text).replace("\n", "\n  ")
