"""The Actions cache's rules for keys (``@actions/cache`` checkKey), kept by every store, so that
a key one store takes every store takes, and scope builds only keys they all take."""

from __future__ import annotations

from collections.abc import Sequence

MAX_KEY_LENGTH = 512
MAX_KEYS = 10  # the primary key plus restore keys


def key_problem(key: str) -> str | None:
    """Why the Actions cache would refuse ``key``, or None."""
    if not key:
        return "a cache key must not be empty"
    if len(key) > MAX_KEY_LENGTH:
        return f"key {key[:40]!r}… has {len(key)} characters; the limit is {MAX_KEY_LENGTH}"
    if "," in key:
        return f"key {key!r} contains a comma, which the Actions cache refuses"
    return None


def keys_problem(keys: Sequence[str]) -> str | None:
    """Why the Actions cache would refuse these keys (primary first), or None."""
    if len(keys) > MAX_KEYS:
        return f"{len(keys)} keys given; the primary key plus restore keys are at most {MAX_KEYS}"
    return next((problem for key in keys if (problem := key_problem(key))), None)
