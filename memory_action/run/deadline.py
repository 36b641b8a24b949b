"""When a run must be done: ``timeout_minutes`` after it started, read on an injected clock (so
tests move time instead of waiting for it). Each phase asks it before and during long work."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Deadline:
    at: float  # on ``clock``
    clock: Callable[[], float] = time.monotonic

    @classmethod
    def after(cls, seconds: float, clock: Callable[[], float] = time.monotonic) -> Deadline:
        return cls(at=clock() + seconds, clock=clock)

    @classmethod
    def none(cls) -> Deadline:
        """No limit: for work that is bounded by other means (a comment command)."""
        return cls(at=math.inf)

    def remaining(self) -> float:
        """Seconds left (0 when passed)."""
        return max(0.0, self.at - self.clock())

    def expired(self) -> bool:
        return self.clock() >= self.at

    def share(self, part: float) -> Deadline:
        """A deadline ``part`` of the time left from now: what one phase may use, so the phases
        after it keep the rest."""
        now = self.clock()
        return Deadline(at=now + max(0.0, self.at - now) * part, clock=self.clock)
