"""What the review engine tells a progress display: each model request as it is sent and as it
is answered. Plain data, without LangChain, so the run's plan can name the hook cheaply."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

Stage = Literal["sent", "answered"]
SENT: Stage = "sent"
ANSWERED: Stage = "answered"


@dataclass(frozen=True, kw_only=True)
class RequestProgress:
    stage: Stage
    request: int  # this run's model request, from 1
    planned: int  # requests the plan expects (tool rounds and retries of a plan add more)
    part: str  # what the request is for: "batch 1 of 3", "the review's summary"…
    files: int  # changed files the request holds
    estimated_tokens: int  # our estimate of the request's size
    tokens_in: int  # the run's input tokens so far, as the provider counted them
    tokens_out: int


ProgressHook = Callable[[RequestProgress], None]
