"""Which memory items may be near-duplicates, found in near-linear time; ``upkeep`` then
computes the exact ``difflib`` ratio of these candidates only (all pairs took 377 s of CPU for
a 1 MiB memory).

An item's words count by their first ``STEM`` letters, case aside, so "methods" meets "method".
Two items are candidates when

- their lengths let the ratio reach the threshold (``difflib``'s ``real_quick_ratio``: exact);
- they share a run of two words (or the whole text, or a word when an item has fewer than
  ``FEW_WORDS``) that at most ``COMMON`` items have; an item whose runs are all that common
  looks up its ``ALWAYS_LOOKED_UP`` rarest ones anyway, so none goes unlooked;
- they share at least ``SHARED_WORDS`` of the words of the one with more.

The last two are where a pair could be missed that the ratio would call alike: one sharing only
runs of words most items have, or fewer words than that. Tests compare this with the old
all-pairs search on generated memory (``tests/fakes/memory_items.py``: swapped, dropped, added,
mistyped words, plurals, case, bullets), where it misses none; on real prose (sentences of the
standard library's docstrings) the fewest words a pair the ratio found alike shared was 38%.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

STEM = 4  # letters of a word that count
FEW_WORDS = 4  # items with fewer words are also looked up by each word
COMMON = 50  # a run of words in more items than this pairs items up only as a last resort
ALWAYS_LOOKED_UP = 2  # runs looked up even when common, the rarest first
SHARED_WORDS = 1 / 3
LOOKED_AT = 200  # others an item is compared with by words at most, rarest runs first
MOST_ALIKE = 6  # of those, the ones sharing the most words become candidates
CHECK_EVERY = 256  # items between looks at the deadline
_EPSILON = 1e-9  # float slack, always on the side of one candidate too many
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, kw_only=True)
class Candidates:
    pairs: list[tuple[int, int]]  # (i, j), i < j, sorted
    complete: bool  # False: the deadline came first; later items were not looked up
    capped: int = 0  # items with more look-alikes than LOOKED_AT or MOST_ALIKE: some not compared


def candidate_pairs(
    keys: Sequence[str], threshold: float, expired: Callable[[], bool]
) -> Candidates:
    """The index pairs of ``keys`` (normalised texts) that may be ``threshold`` alike."""
    stems = [[word[:STEM] for word in _WORD.findall(key)] for key in keys]
    runs = [_runs(key, words) for key, words in zip(keys, stems, strict=True)]
    words = [frozenset(found) for found in stems]
    frequency = Counter(run for found in runs for run in found)
    order = sorted(range(len(keys)), key=lambda n: len(keys[n]))
    index: dict[str, list[int]] = {}  # run → items, shortest first
    for number in order:
        for run in runs[number]:
            index.setdefault(run, []).append(number)
    lengths = {run: [len(keys[n]) for n in listed] for run, listed in index.items()}
    pairs: set[tuple[int, int]] = set()
    complete, capped = True, 0
    for number, key in enumerate(keys):
        if number % CHECK_EVERY == 0 and number and expired():
            complete = False
            break
        # Only items of lengths from ``lowest`` to ``highest`` can reach the threshold with it.
        lowest = threshold * len(key) / (2 - threshold) - _EPSILON
        highest = len(key) * (2 - threshold) / threshold + _EPSILON
        own, seen = words[number], {number}
        alike: list[tuple[int, int]] = []  # (-shared words, other)
        cut = False
        for run in _looked_up(runs[number], frequency):
            listed = lengths[run]
            start, end = bisect.bisect_left(listed, lowest), bisect.bisect_right(listed, highest)
            for other in index[run][start:end]:
                if other in seen:
                    continue
                if len(seen) > LOOKED_AT:
                    cut = True
                    break
                seen.add(other)
                theirs = words[other]
                shared = len(own & theirs)
                if shared >= SHARED_WORDS * max(len(own), len(theirs)) - _EPSILON:
                    alike.append((-shared, other))
        if len(alike) > MOST_ALIKE:
            alike.sort()
            del alike[MOST_ALIKE:]
            cut = True
        capped += cut
        pairs.update((min(number, other), max(number, other)) for _, other in alike)
    return Candidates(pairs=sorted(pairs), complete=complete, capped=capped)


def _runs(key: str, words: list[str]) -> frozenset[str]:
    """What an item is looked up by: its runs of two words, its whole text, and its words when
    it has few (a run needs two)."""
    found = {f"{first} {second}" for first, second in itertools.pairwise(words)}
    found.add("=" + key)  # the same text always pairs up, however common its words
    if not words:
        found.add("")  # items without a word (a rule of dashes) pair up with each other
    if len(words) < FEW_WORDS:
        found.update(words)
    return frozenset(found)


def _looked_up(runs: frozenset[str], frequency: Counter[str]) -> list[str]:
    rarest = sorted(runs, key=lambda run: (frequency[run], run))
    return [run for n, run in enumerate(rarest) if n < ALWAYS_LOOKED_UP or frequency[run] <= COMMON]
