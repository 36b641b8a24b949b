"""The events ``memory-agent eval replay`` reads: one review finding a line, with what people
made of it (docs/evaluation.md, "Replaying your own history").

The file is untrusted input: each line goes through ``safety.untrusted_json`` and a strict
pydantic model; the first bad line stops the replay with one line naming its number and field.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from memory_action.errors import MemoryActionError
from memory_action.memory.review_ledger import MAX_PATH, MAX_TITLE
from memory_action.safety import untrusted_json

MAX_TEXT = 65_536  # characters of a body, a reply or the code: more is no review comment
MAX_ITEMS = 1_000  # reactions or replies on one comment
_REPOSITORY = r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$"
_LOGIN = r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$|^[A-Za-z0-9-]+\[bot\]$"
_MODEL = ConfigDict(strict=True, frozen=True, extra="forbid")


class BadEventsError(MemoryActionError):
    """A line of the events file is not an event; the message is the one line people read."""


class Reaction(BaseModel):
    model_config = _MODEL

    login: str = Field(pattern=_LOGIN)
    content: Literal["+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"]
    writer: bool  # whether the person could write to the repository


class Reply(BaseModel):
    model_config = _MODEL

    login: str = Field(pattern=_LOGIN)
    body: str = Field(max_length=MAX_TEXT)
    writer: bool


class ReviewEvent(BaseModel):
    """One inline finding of a review, and what happened to it."""

    model_config = _MODEL

    repository: str = Field(pattern=_REPOSITORY, max_length=200)  # OWNER/NAME
    pull_request: int = Field(ge=1)
    path: str = Field(min_length=1, max_length=MAX_PATH)
    line: int = Field(ge=1)  # the line it points at (a range's last line), in the new file
    title: str = Field(min_length=1, max_length=MAX_TITLE)
    body: str = Field(default="", max_length=MAX_TEXT)
    code: str = Field(min_length=1, max_length=MAX_TEXT)  # its lines, the last one at ``line``
    context: str = Field(default="", max_length=MAX_TEXT)  # the lines right above ``code``
    reactions: list[Reaction] = Field(default=[], max_length=MAX_ITEMS)
    replies: list[Reply] = Field(default=[], max_length=MAX_ITEMS)  # oldest first
    resolved: bool = False  # the thread was resolved
    changed_after: bool = False  # the code it points at was changed afterwards

    @field_validator("title")
    @classmethod
    def _one_line(cls, title: str) -> str:
        if not title.strip() or len(title.strip().splitlines()) != 1:
            raise ValueError("a title is one line of text")
        return title.strip()

    @field_validator("code")
    @classmethod
    def _fits_above_line(cls, code: str, info: ValidationInfo) -> str:
        line = info.data.get("line")
        if line is not None and len(lines_of(code)) > line:
            raise ValueError(f"{len(lines_of(code))} lines of code cannot end at line {line}")
        return code

    @field_validator("context")
    @classmethod
    def _fits_above_code(cls, context: str, info: ValidationInfo) -> str:
        line, code = info.data.get("line"), info.data.get("code")
        if line is not None and code is not None:
            room = line - len(lines_of(code))
            if (count := len(lines_of(context))) > room:
                raise ValueError(f"{count} lines of context and the code cannot end at line {line}")
        return context

    @property
    def start_line(self) -> int:
        return self.line - len(lines_of(self.code)) + 1


def lines_of(text: str) -> list[str]:
    """The lines of ``text`` (one trailing line end ignored)."""
    return text.removesuffix("\n").split("\n") if text else []


def read_events(path: Path) -> Iterator[tuple[int, ReviewEvent]]:
    """(line number, event) for each non-blank line of ``path``; ``BadEventsError`` at the first
    line that is not an event."""
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise BadEventsError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    with handle:
        try:
            for number, text in enumerate(handle, start=1):
                if text.strip():
                    yield number, parse_event(text, where=f"{path} line {number}")
        except UnicodeDecodeError:
            raise BadEventsError(f"{path}: not UTF-8 text") from None


def parse_event(text: str, *, where: str) -> ReviewEvent:
    try:
        document = untrusted_json.loads(text)
    except ValueError as exc:
        raise BadEventsError(f"{where}: not JSON ({exc}); write one JSON object a line") from None
    try:
        return ReviewEvent.model_validate(document)
    except ValidationError as exc:
        error = untrusted_json.first_error(exc)
        field = untrusted_json.location(error, "")
        named = f"field {field!r}" if field else "the line"
        message = error["msg"].removeprefix("Value error, ")
        raise BadEventsError(f"{where}: {named}: {message}") from None
