"""Untrusted JSON read through pydantic: its first problem, and where it is, for people."""

from __future__ import annotations

from pydantic import ValidationError
from pydantic_core import ErrorDetails


def first_error(exc: ValidationError) -> ErrorDetails:
    """The first problem pydantic found (a ``ValidationError`` names at least one)."""
    return exc.errors()[0]


def location(error: ErrorDetails, whole: str) -> str:
    """Where ``error`` is, as a dotted path (``items.0.id``); ``whole`` when it is the whole
    document."""
    return ".".join(str(part) for part in error["loc"]) or whole
