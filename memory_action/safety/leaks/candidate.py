"""What every detector returns: a span of text that holds a secret of some kind."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

# The kinds every layer may name; format rules name their own providers' kinds.
PRIVATE_KEY = "private key"
JWT = "JWT"
MASKED_VALUE = "masked secret"
URL_PASSWORD = "password in a URL"  # noqa: S105 - a kind, not a password
CREDENTIAL = "hard-coded credential"

# Lower wins when candidates overlap: the most specific name is the most useful to a reader.
SPECIFIC = 1  # a provider's documented format
PRIORITY = {PRIVATE_KEY: 0, JWT: 2, MASKED_VALUE: 3, URL_PASSWORD: 4, CREDENTIAL: 5}


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    start: int
    end: int
    priority: int
    kind: str


Detector = Callable[[str], Iterator[Candidate]]
