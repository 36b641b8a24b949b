"""How many tokens a request costs, without a tokenizer.

``tiktoken`` downloads its encodings on first use, which a runner without internet egress cannot
do, so the count is an estimate from the text: 3 characters a token (the densest real diffs are
2.9 to 4.3; English prose about 4), plus a few tokens a message for the chat format. It is
calibrated by the ``usage`` the provider returns: when the provider counts more than we did, later
estimates grow by that ratio; when it counts fewer, they shrink, but never below
``MIN_FACTOR`` of the text estimate (about 4.2 characters a token, the sparsest real diffs),
because the next request may be denser than the last; a request the provider still refuses as
too large is retried smaller (the engine's 413 handling).
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from memory_action.model.profile import CHARS_PER_TOKEN

TOKENS_PER_MESSAGE = 4  # role and separators of the chat format
TOKENS_PER_REQUEST = 3  # the reply's priming
MIN_FACTOR = 0.72  # a calibrated estimate assumes at most ~4.2 characters a token
MAX_FACTOR = 3.0
SAFETY = 1.02  # calibration keeps 2% above what the provider last reported (a 413 is retried)


def text_tokens(text: str) -> int:
    """The uncalibrated estimate of ``text``: the rule every budget in the project uses."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def wire_tokens(text: str) -> int:
    """``text`` as it travels in a request's JSON body, where a line break, a quote or a
    backslash takes two characters and a non-ASCII one six: a provider that counts the body
    (GitHub Models' limit is on the request) counts those too. Requests are estimated so."""
    return math.ceil((len(json.dumps(text)) - 2) / CHARS_PER_TOKEN)


class TokenEstimator:
    """A conservative token count, calibrated from the provider's ``usage`` (thread-safe)."""

    def __init__(self, factor: float = 1.0) -> None:
        self._factor = factor
        self._lock = threading.Lock()

    @property
    def factor(self) -> float:
        with self._lock:
            return self._factor

    def count(self, text: str) -> int:
        return math.ceil(wire_tokens(text) * self.factor)

    def count_request(
        self, system: str, messages: Iterable[str], tools: Sequence[dict[str, Any]] = ()
    ) -> int:
        """A whole request: system prompt, each message's text, and the tools' JSON schemas."""
        texts = [system, *messages]
        raw = sum(wire_tokens(t) + TOKENS_PER_MESSAGE for t in texts) + TOKENS_PER_REQUEST
        if tools:
            raw += text_tokens(json.dumps(list(tools)))
        return math.ceil(raw * self.factor)

    def chars_for(self, tokens: int) -> int:
        """How many characters of text fit in ``tokens`` (the inverse of ``count``)."""
        return max(0, math.floor(math.floor(tokens / self.factor) * CHARS_PER_TOKEN))

    def calibrate(self, estimated: int, actual: int) -> None:
        """The provider counted ``actual`` tokens for a request we estimated at ``estimated``."""
        if estimated <= 0 or actual <= 0:
            return
        with self._lock:
            raw = estimated / self._factor
            wanted = actual / raw * SAFETY
            self._factor = min(MAX_FACTOR, max(MIN_FACTOR, wanted))

    def at_least(self, estimated: int, limit: int) -> None:
        """The provider refused a request we estimated at ``estimated`` as over ``limit``: it
        holds more than ``limit`` tokens, so grow the factor to say so (with room to spare)."""
        if estimated <= 0:
            return
        with self._lock:
            raw = estimated / self._factor
            wanted = (limit + 1) / raw * SAFETY * 1.1
            self._factor = min(MAX_FACTOR, max(self._factor, wanted))
