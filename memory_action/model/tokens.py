"""How many tokens a request costs: exactly where the model's tokenizer ships with the package
(OpenAI's o200k and cl100k, ``tokenizer``), else estimated.

Exact: each message's text is counted by the model's encoding, plus the chat format's framing as
OpenAI counts it (``TOKENS_PER_MESSAGE`` a message, ``TOKENS_PER_REQUEST`` for the reply), the
tools' JSON schemas counted as JSON (more than the provider's own rendering of them), and
``EXACT_MARGIN`` of the whole for what joining texts counted apart can add. The provider's
``usage`` can only raise such a count (it may frame requests more heavily than documented),
never lower it below the tokenizer's.

Estimated, for every other model: 3 characters a token (the densest real diffs are
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
from memory_action.model.tokenizer import Tokenizer, shared

TOKENS_PER_MESSAGE = 4  # role and separators of the chat format
TOKENS_PER_REQUEST = 3  # the reply's priming
MIN_FACTOR = 0.72  # a calibrated estimate assumes at most ~4.2 characters a token
MAX_FACTOR = 3.0
SAFETY = 1.02  # calibration keeps 2% above what the provider last reported (a 413 is retried)
EXACT_MARGIN = 1.01  # an exact request count's room for joins and framing (bench/review_fit.py)


def text_tokens(text: str) -> int:
    """The uncalibrated estimate of ``text``: the rule every budget in the project uses."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def wire_tokens(text: str) -> int:
    """``text`` as it travels in a request's JSON body, where a line break, a quote or a
    backslash takes two characters and a non-ASCII one six: a provider that counts the body
    (GitHub Models' limit is on the request) counts those too. Requests are estimated so."""
    return math.ceil((len(json.dumps(text)) - 2) / CHARS_PER_TOKEN)


class TokenEstimator:
    """A conservative token count, calibrated from the provider's ``usage`` (thread-safe); with
    a ``tokenizer``, the exact count, which calibration can only raise."""

    def __init__(self, factor: float = 1.0, *, tokenizer: Tokenizer | None = None) -> None:
        self._factor = factor
        self._lock = threading.Lock()
        self.tokenizer = tokenizer
        self._floor = 1.0 if tokenizer is not None else MIN_FACTOR

    @classmethod
    def for_encoding(cls, encoding: str) -> TokenEstimator:
        """Exact counts with the shipped ``encoding`` (a profile's), the estimate for ``""``."""
        return cls(tokenizer=shared(encoding)) if encoding else cls()

    @property
    def exact(self) -> bool:
        return self.tokenizer is not None

    @property
    def factor(self) -> float:
        with self._lock:
            return self._factor

    def count(self, text: str) -> int:
        return math.ceil(self._raw(text) * self.factor)

    def _raw(self, text: str) -> int:
        return self.tokenizer.count(text) if self.tokenizer is not None else wire_tokens(text)

    def count_request(
        self, system: str, messages: Iterable[str], tools: Sequence[dict[str, Any]] = ()
    ) -> int:
        """A whole request: system prompt, each message's text, and the tools' JSON schemas."""
        texts = [system, *messages]
        raw = sum(self._raw(t) + TOKENS_PER_MESSAGE for t in texts) + TOKENS_PER_REQUEST
        if tools:
            schemas = json.dumps(list(tools))
            raw += self.tokenizer.count(schemas) if self.tokenizer else text_tokens(schemas)
        margin = EXACT_MARGIN if self.tokenizer is not None else 1.0
        return math.ceil(raw * self.factor * margin)

    def prefix(self, text: str, tokens: int) -> str:
        """The longest start of ``text`` that ``count`` puts at ``tokens`` or fewer."""
        if self.tokenizer is not None:
            return self.tokenizer.prefix(text, math.floor(tokens / self.factor))
        return text[: self.chars_for(tokens)]

    def chars_for(self, tokens: int) -> int:
        """How many characters of text fit in ``tokens`` (the inverse of the estimate: text
        measured afterwards, as every request is, may still count more exactly)."""
        return max(0, math.floor(math.floor(tokens / self.factor) * CHARS_PER_TOKEN))

    def calibrate(self, estimated: int, actual: int) -> None:
        """The provider counted ``actual`` tokens for a request we estimated at ``estimated``."""
        if estimated <= 0 or actual <= 0:
            return
        with self._lock:
            raw = estimated / self._factor
            wanted = actual / raw * SAFETY
            self._factor = min(MAX_FACTOR, max(self._floor, wanted))

    def at_least(self, estimated: int, limit: int) -> None:
        """The provider refused a request we estimated at ``estimated`` as over ``limit``: it
        holds more than ``limit`` tokens, so grow the factor to say so (with room to spare)."""
        if estimated <= 0:
            return
        with self._lock:
            raw = estimated / self._factor
            wanted = (limit + 1) / raw * SAFETY * 1.1
            self._factor = min(MAX_FACTOR, max(self._factor, wanted))
