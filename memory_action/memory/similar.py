"""Which memory items may be near-duplicates, found in near-linear time; ``upkeep`` then
computes the exact ``difflib`` ratio of these candidates only (all pairs took 377 s of CPU for
a 1 MiB memory).

Blocking: an item's words count by their first ``STEM`` letters, case aside, so "methods"
meets "method". An item is looked at with the others whose lengths let the ratio reach the
threshold (``difflib``'s ``real_quick_ratio``: exact) and that share with it a run of two words
(or the whole text, or a word when an item has fewer than ``FEW_WORDS``) that at most ``COMMON``
items have; an item whose runs are all that common looks up its ``ALWAYS_LOOKED_UP`` rarest ones
that another item has anyway, so none goes unlooked.

Scoring: ``rapidfuzz`` compares the item with at most ``LOOKED_AT`` of those (rarest runs first)
in C++ by the Indel ratio, twice the longest common subsequence over both lengths. It is never
below ``difflib``'s ratio (whose matching blocks are one common subsequence), so a pair under the
threshold there is under it in ``difflib`` too: this filter loses no pair. Of those at or above
it, the ``MOST_ALIKE`` highest become candidates.

A pair the ratio would call alike is missed only when the two share no run of two words but
ones most items have, or when one of them has more look-alikes than ``LOOKED_AT`` or
``MOST_ALIKE`` (``capped`` counts those items: a hard cap on comparisons, ``LOOKED_AT`` per
item). Tests compare this with the all-pairs search on generated memory
(``tests/fakes/memory_items.py``: swapped, dropped, added, mistyped words, plurals, case,
bullets) and on ``tests/fakes/memory_shapes.py``, where it misses none.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz, process

STEM = 4  # letters of a word that count
FEW_WORDS = 4  # items with fewer words are also looked up by each word
COMMON = 50  # a run of words in more items than this pairs items up only as a last resort
ALWAYS_LOOKED_UP = 2  # runs other items have, looked up even when common, the rarest first
LOOKED_AT = 200  # others an item is compared with at most, rarest runs first
MOST_ALIKE = 6  # of those reaching the threshold, the most alike become candidates
CHECK_EVERY = 256  # items between looks at the deadline
_EPSILON = 1e-9  # float slack, always on the side of one candidate too many
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, kw_only=True)
class Candidates:
    pairs: list[tuple[int, int]]  # (i, j), i < j, sorted
    complete: bool  # False: the deadline came first; later items were not looked up
    capped: int = 0  # items with more look-alikes than LOOKED_AT or MOST_ALIKE: some not compared
    compared: int = 0  # pairs scored by rapidfuzz (at most LOOKED_AT per item)


def candidate_pairs(
    keys: Sequence[str], threshold: float, expired: Callable[[], bool]
) -> Candidates:
    """The index pairs of ``keys`` (normalised texts) that may be ``threshold`` alike."""
    runs = [_runs(key) for key in keys]
    frequency = Counter(run for found in runs for run in found)
    order = sorted(range(len(keys)), key=lambda n: len(keys[n]))
    index: dict[str, list[int]] = {}  # run → items, shortest first
    for number in order:
        for run in runs[number]:
            index.setdefault(run, []).append(number)
    lengths = {run: [len(keys[n]) for n in listed] for run, listed in index.items()}
    cutoff = threshold * 100 - _EPSILON  # rapidfuzz scores in percent
    pairs: set[tuple[int, int]] = set()
    complete, capped, compared = True, 0, 0
    for number, key in enumerate(keys):
        if number % CHECK_EVERY == 0 and expired():  # at 0 too: the time may be out already
            complete = False
            break
        # Only items of lengths from ``lowest`` to ``highest`` can reach the threshold with it.
        lowest = threshold * len(key) / (2 - threshold) - _EPSILON
        highest = len(key) * (2 - threshold) / threshold + _EPSILON
        looked: list[int] = []
        for run in _looked_up(runs[number], frequency):
            listed = lengths[run]
            start, end = bisect.bisect_left(listed, lowest), bisect.bisect_right(listed, highest)
            looked += index[run][start:end]
        others = [other for other in dict.fromkeys(looked) if other != number]
        cut = len(others) > LOOKED_AT
        del others[LOOKED_AT:]
        compared += len(others)
        alike = process.extract(
            key,
            [keys[other] for other in others],
            scorer=fuzz.ratio,
            processor=None,
            score_cutoff=cutoff,
            limit=None,
        )
        if len(alike) > MOST_ALIKE:
            alike.sort(key=lambda found: (-found[1], others[found[2]]))
            del alike[MOST_ALIKE:]
            cut = True
        capped += cut
        for _, _, position in alike:
            other = others[position]
            pairs.add((min(number, other), max(number, other)))
    return Candidates(pairs=sorted(pairs), complete=complete, capped=capped, compared=compared)


def _runs(key: str) -> frozenset[str]:
    """What an item is looked up by: its runs of two words, its whole text, and its words when
    it has few (a run needs two)."""
    words = [word[:STEM] for word in _WORD.findall(key)]
    found = {f"{first} {second}" for first, second in itertools.pairwise(words)}
    found.add("=" + key)  # the same text always pairs up, however common its words
    if not words:
        found.add("")  # items without a word (a rule of dashes) pair up with each other
    if len(words) < FEW_WORDS:
        found.update(words)
    return frozenset(found)


def _looked_up(runs: frozenset[str], frequency: Counter[str]) -> list[str]:
    """The runs at most ``COMMON`` items have, and at least ``ALWAYS_LOOKED_UP`` that another
    item has, the rarest first (a run of its own finds no other item)."""
    looked, shared = [], 0
    for run in sorted(runs, key=lambda run: (frequency[run], run)):
        if frequency[run] > COMMON and shared >= ALWAYS_LOOKED_UP:
            break
        looked.append(run)
        shared += frequency[run] > 1
    return looked
