"""What a run produced: ``Outcome`` feeds the comment and the summary, ``RunResult`` is the
action's outputs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory_action.lifecycle.layers import StartingMemory
from memory_action.memory.provenance import Provenance, Stamp
from memory_action.memory.sources import MemorySource
from memory_action.store.base import SaveResult

if TYPE_CHECKING:
    from memory_action.review.engine import ReviewResult


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """What happened: the inputs of the comment, the summary and the outputs."""

    start: StartingMemory
    sources: list[MemorySource]
    answer: str
    final: str  # AGENTS.md after the run (secrets redacted)
    memory_diff: str
    saved: SaveResult
    stamp: Stamp
    provenance: Provenance
    notes: tuple[str, ...] = ()
    review: ReviewResult | None = None  # what the review cost and covered

    @property
    def save_note(self) -> str:
        if self.saved.saved:
            return f"Saved as `{self.saved.key}`."
        return f"Not saved: {self.saved.reason}."


@dataclass(frozen=True, kw_only=True)
class RunResult:
    memory_hit: bool
    memory_key: str
    saved_key: str
    memory_changed: bool
    comment_url: str
    response: str
    memory_diff: str = ""  # for people (the CLI prints it); not an output
    review: ReviewResult | None = None

    @classmethod
    def untouched(cls) -> RunResult:
        """No memory read, none saved, nothing posted (yet)."""
        return cls(
            memory_hit=False,
            memory_key="",
            saved_key="",
            memory_changed=False,
            comment_url="",
            response="",
        )

    def outputs(self) -> dict[str, str]:
        outputs = {
            "memory_hit": str(self.memory_hit).lower(),
            "memory_key": self.memory_key,
            "saved_key": self.saved_key,
            "memory_changed": str(self.memory_changed).lower(),
            "comment_url": self.comment_url,
            "response": self.response,
        }
        if self.review is not None:
            cost = self.review.cost
            outputs |= {
                "outcome": self.review.outcome,
                "model_calls": str(cost.model_calls),
                "tokens_in": str(cost.tokens_in),
                "tokens_out": str(cost.tokens_out),
                "files_reviewed": str(self.review.files_reviewed),
                "files_skipped": str(self.review.files_skipped),
            }
        return outputs
