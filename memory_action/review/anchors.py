"""Where a finding can be posted as an inline review comment, decided before anything is sent.

GitHub rejects a whole review (HTTP 422, without saying which comment) when one comment's anchor
is not part of the diff. So every anchor is checked here against the hunks of the file's
``patch``, and a finding that fails becomes ``None`` (its text goes to the review body instead):

- ``line`` must be a line of one hunk on the finding's side: RIGHT for an added or unchanged
  line (the new file's numbering), LEFT for a deleted one (the old file's numbering);
- a range's ``start_line`` must come before ``line``, on the same side, in the same hunk;
- a suggestion replaces lines of the new file, so it only goes on RIGHT;
- the path must be a changed file that has a patch (none for a binary or a too large file).

Pure: no I/O. ``anchor`` renders the comment's body too, with the model's text made safe to post,
and passes it through the outgoing gate (``outgoing.gate``): the body is a ``SafeText``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from memory_action.github.pull_request import ChangedFile, Side
from memory_action.github.reviews import InlineComment
from memory_action.review.findings import Finding
from memory_action.review.patch import Hunk, parse_patch
from memory_action.safety.outgoing import gate
from memory_action.safety.untrusted_markdown import (
    break_markers,
    fence,
    normalise_line_ends,
    safe_markdown,
)


@dataclass(frozen=True, kw_only=True)
class DiffLine:
    """One line of a hunk on one side: its number in that side's file and its text."""

    hunk: int  # the hunk's index in the patch
    number: int
    text: str


def anchor(
    finding: Finding, files: Sequence[ChangedFile], *, masked: Iterable[str]
) -> InlineComment | None:
    """The inline comment for ``finding``, or None where GitHub would reject it (see above);
    ``masked``: the values the run masked, redacted from the body."""
    placed = _placed(finding, files)
    if placed is None:
        return None
    (start_line,) = placed
    return InlineComment(
        path=finding.path,
        line=finding.line,
        side=finding.side,
        start_line=start_line,
        start_side=finding.side if start_line is not None else None,
        body=gate(comment_body(finding), masked),
    )


def anchorable(finding: Finding, files: Sequence[ChangedFile]) -> bool:
    """Whether GitHub would take ``finding`` as an inline comment (no body is rendered)."""
    return _placed(finding, files) is not None


def _placed(finding: Finding, files: Sequence[ChangedFile]) -> tuple[int | None] | None:
    """The anchor's ``start_line`` (None for one line), or None where GitHub would reject it."""
    lines = _lines_at(finding, files)
    if lines is None:
        return None
    last = lines.get(finding.line)
    if last is None or (finding.suggestion is not None and finding.side != "RIGHT"):
        return None
    start_line = finding.start_line if finding.start_line != finding.line else None
    if start_line is not None:
        first = lines.get(start_line)
        if first is None or first.hunk != last.hunk or start_line > finding.line:
            return None
    return (start_line,)


def code_at(finding: Finding, files: Sequence[ChangedFile]) -> str:
    """The text of the lines the finding points at on its side ("" where none are in the diff).

    Lines between the range's ends that are not on the finding's side are left out.
    """
    lines = _lines_at(finding, files)
    if lines is None:
        return ""
    first = finding.start_line or finding.line
    return "\n".join(lines[n].text for n in range(first, finding.line + 1) if n in lines)


def comment_body(finding: Finding) -> str:
    """The title, the body and a ``suggestion`` block, the model's prose made safe to post."""
    parts = [f"**{safe_markdown(finding.title)}** ({finding.severity})"]
    if finding.body.strip():
        parts.append(safe_markdown(finding.body))
    if finding.suggestion is not None:
        parts.append(suggestion_block(finding.suggestion))
    return "\n\n".join(parts)


def suggestion_block(replacement: str) -> str:
    """A ```` ```suggestion ```` block whose fence is longer than any backtick run inside it."""
    # A lone CR would end the line (and the list item it is quoted in) where GitHub reads it.
    text = break_markers(normalise_line_ends(replacement).removesuffix("\n"))
    # No line at all (not one empty line): the suggestion deletes the lines.
    return fence(text, "suggestion") if text else "```suggestion\n```"


def side_lines(hunks: Sequence[Hunk], side: Side) -> dict[int, DiffLine]:
    """The lines of the hunks a comment may anchor to on ``side``, by their line number."""
    return {line.number: line for line in _walk(hunks, side)}


@functools.lru_cache(maxsize=64)  # files; each entry holds one side of one patch
def patch_lines(patch: str, side: Side) -> Mapping[int, DiffLine] | None:
    """``side_lines`` of a file's patch; None for a patch GitHub would not have made (nothing
    in it can be trusted). Cached: a run asks for the same file once per finding, and again
    for its fingerprint, its anchor and the ledger."""
    try:
        hunks = parse_patch(patch)
    except ValueError:
        return None
    return MappingProxyType(side_lines(hunks, side))


def _lines_at(finding: Finding, files: Sequence[ChangedFile]) -> Mapping[int, DiffLine] | None:
    changed = next((f for f in files if f.path == finding.path), None)
    if changed is None or changed.patch is None:
        return None
    return patch_lines(changed.patch, finding.side)


def _walk(hunks: Sequence[Hunk], side: Side) -> Iterator[DiffLine]:
    for index, hunk in enumerate(hunks):
        for line, old, new in hunk.numbered():
            kind, text = line[:1], line[1:]
            if kind == "-" and side == "LEFT":
                yield DiffLine(hunk=index, number=old, text=text)
            elif kind in (" ", "+") and side == "RIGHT":
                yield DiffLine(hunk=index, number=new, text=text)
