"""The findings ledger of a pull request, as its overlay entry stores it (``state.json``).

Each finding the bot posted, by a fingerprint that survives line moves (its path, its concern,
the code it points at), with the comment that holds it and what became of it. A later run never
posts a finding the ledger holds, and tells the model which are still open. Restored entries are
untrusted: the ledger is parsed with pydantic, and one that does not validate is dropped (the run
then starts without one; nothing else of the entry is lost).
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

import pydantic

LedgerState = Literal["open", "fixed", "outdated", "dismissed"]
LEDGER_STATES: tuple[LedgerState, ...] = get_args(LedgerState)
MAX_ENTRIES = 1_000  # findings of one pull request: far more than any review posts
MAX_TITLE = 300
MAX_PATH = 1_024
MAX_SYMBOL = 100  # characters of a name in the code
MAX_SHAPE = 8  # names of the code a finding points at, kept to recognise it later
_HEX = r"^[0-9a-f]+$"
_NAME = r"^[A-Za-z_$][\w$]*$"
Name = Annotated[str, pydantic.Field(pattern=_NAME, max_length=MAX_SYMBOL)]


class LedgerEntry(pydantic.BaseModel, frozen=True, extra="forbid"):
    fingerprint: str = pydantic.Field(pattern=_HEX, min_length=16, max_length=64)
    path: str = pydantic.Field(min_length=1, max_length=MAX_PATH)
    title: str = pydantic.Field(max_length=MAX_TITLE)
    line: int = pydantic.Field(ge=1)
    side: Literal["RIGHT", "LEFT"] = "RIGHT"
    # The digest of the lines it points at and how many they are ("" / 0: not in the diff).
    code: str = pydantic.Field(default="", pattern=r"^[0-9a-f]*$", max_length=64)
    lines: int = pydantic.Field(default=0, ge=0, le=10_000)
    # The definition it is in and the names on its lines ("" / (): none seen), for the
    # signature a dismissal's memory line carries (``review.dismissals``).
    symbol: Name | Literal[""] = ""
    shape: tuple[Name, ...] = pydantic.Field(default=(), max_length=MAX_SHAPE)
    comment_id: int | None = pydantic.Field(default=None, ge=1)
    state: LedgerState = "open"
    proposed: bool = False  # its feedback already became a memory proposal

    @property
    def id(self) -> str:
        """The short id the model is shown and answers with."""
        return self.fingerprint[:8]


class ReviewLedger(pydantic.BaseModel, frozen=True, extra="forbid"):
    head: str = pydantic.Field(default="", pattern=r"^([0-9a-f]{40}|[0-9a-f]{64})?$")
    entries: tuple[LedgerEntry, ...] = pydantic.Field(default=(), max_length=MAX_ENTRIES)

    def holds(self, fingerprint: str) -> bool:
        return any(entry.fingerprint == fingerprint for entry in self.entries)

    def open(self) -> tuple[LedgerEntry, ...]:
        return tuple(entry for entry in self.entries if entry.state == "open")


def parse_ledger(raw: object) -> ReviewLedger | None:
    """The stored ledger, or None when it is absent or does not validate."""
    if raw is None:
        return None
    try:
        return ReviewLedger.model_validate(raw)
    except pydantic.ValidationError:
        return None
