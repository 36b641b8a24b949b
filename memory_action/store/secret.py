"""A value that must never be printed: the cache's runtime token, and the run's tokens and keys
(``settings`` keeps its secrets in this type too, so the rule of hiding them is written once)."""

from __future__ import annotations


class Secret:
    """A value that must never be printed: ``repr`` and ``str`` hide it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __repr__(self) -> str:
        return "Secret('***')" if self._value else "Secret('')"

    __str__ = __repr__
