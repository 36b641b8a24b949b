"""A finding's ``suggestion`` is kept only when it is code for the lines it replaces.

On GitHub a ```suggestion block is a one-click commit that replaces the finding's lines with its
text. Small models fill it with sentences ("No further action required.") or with the lines as
they already are. Such a suggestion is dropped; the finding stays. Prose is told from code by
its lines: a suggestion whose every line is a sentence (a capital, words, sentence punctuation,
none of the symbols code is made of) is prose, unless the file is prose itself (Markdown, text)
or the lines it replaces are sentences too (a docstring, a comment in prose).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from memory_action.github.pull_request import ChangedFile
from memory_action.review.anchors import code_at
from memory_action.review.findings import Finding

PROSE_FILES = frozenset({".md", ".markdown", ".rst", ".txt", ".adoc", ".asciidoc", ""})
# A sentence: a capital then a small letter, words of letters and sentence punctuation only,
# ending in . ! or ? (or long enough to be one without).
_SENTENCE = re.compile(r"[A-Z][a-z][\w'\u2019-]*(?:[ ,;:]+[\w'\u2019()-]+){2,}[.!?]?")
_LONG_WITHOUT_STOP = 6  # words: a line this long of plain words is a sentence even unstopped
IDENTICAL = "it repeats the lines it would replace"
PROSE = "it is prose, not code for the lines it would replace"


def vetted(findings: Sequence[Finding], files: Sequence[ChangedFile]) -> tuple[Finding, ...]:
    """The findings, each without a suggestion that is not code for its lines."""
    return tuple(
        finding
        if why_not(finding, files) is None
        else finding.model_copy(update={"suggestion": None})
        for finding in findings
    )


def why_not(finding: Finding, files: Sequence[ChangedFile]) -> str | None:
    """Why the finding's suggestion may not be posted; None when it may (or it has none)."""
    suggestion = finding.suggestion
    if suggestion is None or not suggestion.strip():
        return None  # none, or an empty one: it deletes the lines, which is code
    replaced = code_at(finding, files)
    if replaced and _lines(replaced) == _lines(suggestion):
        return IDENTICAL
    if _is_prose(suggestion) and not _prose_allowed(finding.path, replaced):
        return PROSE
    return None


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]


def _is_prose(text: str) -> bool:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return bool(lines) and all(_is_sentence(line) for line in lines)


def _is_sentence(line: str) -> bool:
    if "_" in line or not _SENTENCE.fullmatch(line):
        return False
    return line.endswith((".", "!", "?")) or len(line.split()) >= _LONG_WITHOUT_STOP


def _prose_allowed(path: str, replaced: str) -> bool:
    """Prose may replace prose: in a documentation file, or where the lines are sentences."""
    return PurePosixPath(path).suffix.lower() in PROSE_FILES or (
        bool(replaced.strip()) and _is_prose(replaced)
    )
