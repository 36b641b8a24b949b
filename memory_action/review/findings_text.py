"""Findings as Markdown, where they cannot be inline comments: a review's body (anchors GitHub
would refuse) and the job summary (a fork's token may not post a review)."""

from __future__ import annotations

from collections.abc import Sequence

from memory_action.report import safe_markdown
from memory_action.review.anchors import comment_body
from memory_action.review.findings import Finding

MAX_LISTED = 50  # findings written out in one text; the rest are counted


def where(finding: Finding) -> str:
    lines = (
        f"{finding.start_line}-{finding.line}"
        if finding.start_line and finding.start_line != finding.line
        else str(finding.line)
    )
    side = " (deleted lines)" if finding.side == "LEFT" else ""
    return f"`{safe_markdown(finding.path).replace('`', '')}` line {lines}{side}"


def findings_markdown(findings: Sequence[Finding]) -> str:
    """Each finding: where it is, then its comment as an inline comment would show it."""
    parts = [f"- {where(f)}: {_indented(comment_body(f))}" for f in findings[:MAX_LISTED]]
    if len(findings) > MAX_LISTED:
        parts.append(f"- and {len(findings) - MAX_LISTED} more findings")
    return "\n".join(parts)


def _indented(text: str) -> str:
    """The comment as the content of a list item (continuation lines indented)."""
    return text.replace("\n", "\n  ")
