"""Memory as a list of items, for comment commands: add one, find the one to forget.

An item is a line of AGENTS.md that holds something (not blank, not a heading). Finding the
item to forget is deterministic (``difflib``): the item numbered so (as the ``memory`` reply
lists them), else the one whose text is the same (case, bullets and spacing aside), else the
only one that contains the words, else the closest one when it is clearly the closest; otherwise
the few closest are candidates and nothing is removed.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from memory_action.safety.numbers import ascii_int
from memory_action.safety.untrusted_markdown import LIST_MARKER

MAX_ITEM_CHARS = 1_000  # one remembered item: a rule, not a document
CLEAR_RATIO = 0.75  # the closest item is the one meant when it is this similar ...
CLEAR_LEAD = 0.1  # ... and this much closer than the next one
CANDIDATE_RATIO = 0.4  # less similar than this is no candidate at all
MAX_CANDIDATES = 3

_BULLET = re.compile(rf"{LIST_MARKER.pattern}[ \t]+")


@dataclass(frozen=True, kw_only=True)
class Item:
    index: int  # of the line in the text
    text: str  # the line, stripped


@dataclass(frozen=True, kw_only=True)
class Found:
    """What ``forget`` found: one item (``item``), or candidates to choose from, or nothing."""

    item: Item | None
    candidates: tuple[Item, ...] = ()


def items(text: str) -> list[Item]:
    return [
        Item(index=number, text=line.strip())
        for number, line in enumerate(text.split("\n"))
        if line.strip() and not line.lstrip().startswith("#")
    ]


def normalised(text: str) -> str:
    """An item's words: no bullet, one space between words, any case."""
    text = " ".join(text.split())
    return _BULLET.sub("", text, count=1).casefold() if _BULLET.match(text) else text.casefold()


def as_item_line(text: str) -> str:
    """The line ``remember`` adds: the text on one line, as a list item."""
    line = " ".join(text.split())
    return line if _BULLET.match(line) else f"- {line}"


def find(text: str, wanted: str) -> Found:
    """The item of ``text`` that ``wanted`` (words, or an item's number) names, if clear."""
    listed = items(text)
    number = ascii_int(wanted)
    if number is not None:
        return Found(item=listed[number - 1] if 1 <= number <= len(listed) else None)
    words = normalised(wanted)
    same = [item for item in listed if normalised(item.text) == words]
    if same:
        return Found(item=same[0])
    containing = [item for item in listed if words in normalised(item.text)]
    if len(containing) == 1:
        return Found(item=containing[0])
    ranked = sorted(
        ((_ratio(words, normalised(item.text)), item) for item in listed),
        key=lambda pair: -pair[0],
    )
    if ranked and ranked[0][0] >= CLEAR_RATIO:
        runner_up = ranked[1][0] if len(ranked) > 1 else 0.0
        if ranked[0][0] - runner_up >= CLEAR_LEAD and not containing:
            return Found(item=ranked[0][1])
    pool = containing or [item for ratio, item in ranked if ratio >= CANDIDATE_RATIO]
    if containing:
        pool = sorted(pool, key=lambda item: -_ratio(words, normalised(item.text)))
    return Found(item=None, candidates=tuple(pool[:MAX_CANDIDATES]))


def without(text: str, item: Item) -> str:
    lines = text.split("\n")
    del lines[item.index]
    return "\n".join(lines)


def with_item(text: str, line: str) -> str:
    """``text`` with ``line`` added at the end."""
    separator = "" if not text or text.endswith("\n") else "\n"
    return f"{text}{separator}{line}\n"


def holds(text: str, line: str) -> bool:
    words = normalised(line)
    return any(normalised(item.text) == words for item in items(text))


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
