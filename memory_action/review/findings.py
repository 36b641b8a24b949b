"""A finding of a review as data: where it points (path, line range, side) and what it says.

The model returns findings in this shape; untrusted, so it is parsed with pydantic. Whether a
finding can become an inline comment is decided by ``anchors.anchor`` against the diff's hunks.
"""

from __future__ import annotations

from typing import Literal

import pydantic

from memory_action.github.pull_request import Side

Severity = Literal["high", "medium", "low"]


class Finding(pydantic.BaseModel, frozen=True, extra="forbid"):
    path: str = pydantic.Field(min_length=1)
    line: int = pydantic.Field(ge=1)  # 1-based, in the side's file
    # The start of a range: same side, same hunk, before ``line``.
    start_line: int | None = pydantic.Field(default=None, ge=1)
    # RIGHT: the new file (added or context lines); LEFT: the old file (deleted lines).
    side: Side = "RIGHT"
    severity: Severity = "medium"
    title: str = pydantic.Field(min_length=1)  # one line
    body: str  # Markdown
    suggestion: str | None = None  # replacement text for the lines (RIGHT only)

    @pydantic.field_validator("title")
    @classmethod
    def _one_line(cls, title: str) -> str:
        first = title.strip().splitlines()[0].strip() if title.strip() else ""
        if not first:
            raise ValueError("a finding's title must not be blank")
        return first
