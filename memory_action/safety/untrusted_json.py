"""Untrusted JSON: parsed only when shallow enough, then read through pydantic; its first
problem, and where it is, for people.

``json.loads`` recurses once per level of nesting, so a document 20,000 levels deep (a few dozen
KB of brackets) raises ``RecursionError`` instead of a parse error. ``loads`` scans the text once
first, counting bracket depth outside strings, and refuses anything deeper than ``MAX_DEPTH``
with ``UntrustedJsonError``: a ``ValueError``, as every parse error is, so each caller's one
line for "not valid JSON" covers it too.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

MAX_DEPTH = 200  # no answer, entry or event we read comes near; json.loads recurses per level
# What moves the depth, outside strings: a bracket, or a string (skipped whole, escapes and all).
_DEPTH_TOKENS = re.compile(rb'[\[{]|[\]}]|"(?:[^"\\]|\\.)*"?', re.S)
_OPENING = frozenset(b"[{")


class UntrustedJsonError(ValueError):
    """Untrusted JSON refused before it was parsed (nested too deep)."""


def loads(data: str | bytes | bytearray, **options: Any) -> Any:
    """``json.loads(data, **options)`` for untrusted ``data``: an error (``ValueError``) for
    text that is not JSON or is nested deeper than ``MAX_DEPTH``, never ``RecursionError``."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    depth = nesting_depth(raw)
    if depth > MAX_DEPTH:
        raise UntrustedJsonError(f"JSON nested deeper than {MAX_DEPTH} levels is refused")
    return json.loads(data, **options)


def nesting_depth(raw: bytes) -> int:
    """The deepest bracket nesting of ``raw`` outside strings (linear, no recursion)."""
    depth = deepest = 0
    for token in _DEPTH_TOKENS.finditer(raw):
        first = token.group()[0]
        if first in _OPENING:
            depth += 1
            deepest = max(deepest, depth)
        elif first != 0x22:  # a closing bracket; a string changes nothing
            depth = max(0, depth - 1)
    return deepest


def first_error(exc: ValidationError) -> ErrorDetails:
    """The first problem pydantic found (a ``ValidationError`` names at least one)."""
    return exc.errors()[0]


def location(error: ErrorDetails, whole: str) -> str:
    """Where ``error`` is, as a dotted path (``items.0.id``); ``whole`` when it is the whole
    document."""
    return ".".join(str(part) for part in error["loc"]) or whole
