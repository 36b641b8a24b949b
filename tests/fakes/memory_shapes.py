"""Memory of other shapes than ``memory_items``' lessons, for benchmarks and tests of the checks
that must stay fast on any memory (issue 26 §4), with the checkout the items cite.

- ``lessons``: ``memory_items.memory_of`` (a Zipf vocabulary, 3% near-copies, some citations
  stale).
- ``low_vocabulary``: short rules drawn uniformly from a small vocabulary, so that most items
  share many runs of two words with hundreds of others, each citing what the checkout lacks.
- ``all_stale``: lessons whose every item cites a path, a symbol or a symbol in a file that
  the checkout does not hold, most citations distinct.

``CHECKOUT_FILES`` are the files the checkout holds (``checkout_files``); none holds a cited
name of the last two shapes. Seeded: the same arguments give the same text.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from tests.fakes.memory_items import BULLETS, PATHS, SYMBOLS, WORDS, memory_of

SMALL_VOCABULARY = 60  # words of ``WORDS`` the low-vocabulary rules are drawn from
RULE_WORDS = (6, 14)  # words of one low-vocabulary rule
CHECKOUT_FILES = 400  # files of the checkout besides ``memory_items.PATHS``
HEADING_EVERY = 40
# "key is `x_y()`" reads as a secret to the detector: memory holding one would not be saved.
_SECRET_WORDS = frozenset({"key", "keys", "token", "tokens", "secret", "secrets", "password"})


def checkout_files() -> dict[str, str]:
    """The checkout: ``memory_items.PATHS`` (but the last two) defining ``SYMBOLS``' names, and
    ``CHECKOUT_FILES`` modules of their own."""
    names = [symbol.removesuffix("()").rsplit(".", 1)[-1] for symbol in SYMBOLS]
    files: dict[str, str] = {}
    for path in PATHS[:-2]:
        body = "".join(f"def {name}():\n    return None\n\n" for name in names)
        files[path] = body if path.endswith(".py") else f"{' '.join(names)}\n"
    for number in range(CHECKOUT_FILES):
        files[f"pkg/part_{number // 40}/module_{number}.py"] = "".join(
            f"def kept_{number}_{n}(value):\n    return value + {n}\n\n" for n in range(20)
        )
    return files


def lessons(size_bytes: int, seed: int) -> str:
    return memory_of(size_bytes, seed=seed)


def low_vocabulary(size_bytes: int, seed: int) -> str:
    """Short rules over ``SMALL_VOCABULARY`` words, each citing a stale path, symbol or both."""
    rng = random.Random(seed)  # noqa: S311 - test data
    words = [word for word in WORDS if word not in _SECRET_WORDS][:SMALL_VOCABULARY]

    def rule(number: int) -> str:
        text = rng.choices(words, k=rng.randint(*RULE_WORDS))
        text[0] = text[0].capitalize()
        text.insert(rng.randrange(1, len(text) + 1), f"`{_stale_citation(number, rng)}`")
        return " ".join(text) + "."

    return _memory(size_bytes, rule, rng)


def all_stale(size_bytes: int, seed: int) -> str:
    """``memory_items``' lessons, each with its citation replaced by a stale one (or given
    one)."""
    rng = random.Random(seed)  # noqa: S311 - test data
    source = [line for line in lessons(size_bytes, seed).splitlines() if not line.startswith("#")]
    cited = (*PATHS, *SYMBOLS)

    def rule(number: int) -> str:
        text = source[number % len(source)]
        citation = f"`{_stale_citation(number, rng)}`"
        for name in cited:
            if f"`{name}`" in text:
                return text.replace(f"`{name}`", citation)
        return f"{text} (see {citation})"

    return _memory(size_bytes, rule, rng, bullet=False)


def _stale_citation(number: int, rng: random.Random) -> str:
    """A citation the checkout does not back; most are distinct (``number``), some repeat."""
    if rng.random() < 0.2:
        number = rng.randrange(50)  # some citations are shared by many items
    kind = number % 3
    if kind == 0:
        return f"src/gone/module_{number}.py"
    if kind == 1:
        return f"removed_helper_{number}()"
    return f"pkg/part_{number % 10}/module_{number % 400}.py:gone_{number}"


def _memory(
    size_bytes: int, rule: Callable[[int], str], rng: random.Random, *, bullet: bool = True
) -> str:
    """Items from ``rule`` (with a bullet of ``BULLETS`` unless they have their own) under a
    heading every ``HEADING_EVERY``, up to ``size_bytes``."""
    lines, size, number = ["# Memory"], len("# Memory\n"), 0
    while True:
        heading = [f"## Part {number // HEADING_EVERY + 1}"] if number % HEADING_EVERY == 39 else []
        text = rule(number)
        added = [*heading, (rng.choice(BULLETS) if bullet else "") + text]
        more = sum(len(line.encode()) + 1 for line in added)
        if size + more > size_bytes:
            return "\n".join(lines) + "\n"
        lines += added
        size += more
        number += 1
