"""Near-duplicates: the candidates ``similar`` finds lose none of the pairs the all-pairs
``difflib`` search flagged, on generated memory with near-copies of every kind."""

from __future__ import annotations

import difflib
import random
from collections.abc import Callable

import pytest

from memory_action.memory import upkeep
from memory_action.memory.citations import Item, parse_items
from memory_action.memory.similar import MOST_ALIKE, candidate_pairs
from memory_action.memory.upkeep import SIMILAR, comparable, near_duplicates, never
from tests.fakes.memory_items import BULLETS, lessons, memory_of, variant, variants
from tests.fakes.memory_shapes import all_stale, low_vocabulary


def all_pairs(items: list[Item], threshold: float = SIMILAR) -> list[tuple[int, int, float]]:
    """The search maintenance made before candidates: every pair of items (the reference)."""
    keys = [upkeep.comparable(item.text) for item in items]
    found = []
    for i in range(len(items)):
        matcher = difflib.SequenceMatcher(None, b=keys[i], autojunk=False)
        for j in range(i + 1, len(items)):
            matcher.set_seq1(keys[j])
            if matcher.real_quick_ratio() < threshold or matcher.quick_ratio() < threshold:
                continue
            ratio = matcher.ratio()
            if ratio >= threshold:
                found.append((items[i].line, items[j].line, round(ratio, 2)))
    return found


def found(items: list[Item]) -> list[tuple[int, int, float]]:
    search = near_duplicates(items)
    assert search.complete
    return [(d.first.line, d.second.line, d.ratio) for d in search.pairs]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_pair_all_pairs_flags_is_found_on_generated_memory(seed: int) -> None:
    texts = lessons(260, seed)
    texts += variants(texts, 0.6, seed)  # many near-copies, and copies of copies
    rng = random.Random(seed)  # noqa: S311 - test data
    rng.shuffle(texts)
    items = parse_items("\n".join(rng.choice(BULLETS) + text for text in texts))
    expected = all_pairs(items)
    assert len(expected) > 100  # the set holds many pairs to find
    assert found(items) == expected  # the same pairs, ratios and order


def test_near_copies_edited_hard_are_found_too() -> None:
    """Up to a quarter of the words edited, several times over, in short and long items."""
    rng = random.Random(7)  # noqa: S311 - test data
    texts = lessons(120, 7)
    copies = [variant(text, rng, edits) for text in texts for edits in (1, 2, 3)]
    items = parse_items("\n".join(f"- {text}" for text in [*texts, *copies]))
    expected = all_pairs(items)
    assert len(expected) > 200
    assert found(items) == expected


def test_memory_as_the_benchmark_writes_it() -> None:
    items = parse_items(memory_of(48 * 1024, seed=5, share=0.2))
    assert found(items) == all_pairs(items)


@pytest.mark.parametrize("shape", [low_vocabulary, all_stale])
def test_memory_of_the_other_shapes_the_benchmark_times(shape: Callable[[int, int], str]) -> None:
    items = parse_items(shape(24 * 1024, 3))
    assert found(items) == all_pairs(items)


def test_items_alike_letter_by_letter_but_not_word_by_word_are_found() -> None:
    """Compounds written apart and together share a run of two words but few whole words."""
    apart = "- Monorepo builds: pre-fetch, re-index sub-trees with dry-run, fail-fast."
    together = "- Monorepo builds: prefetch, reindex subtrees with dryrun, failfast."
    items = parse_items(f"{apart}\n{together}\n")
    assert found(items) == all_pairs(items) == [(1, 2, 0.96)]


def test_items_that_share_only_runs_most_items_have_are_paired_too() -> None:
    """Each rule's own words ("rule 7") find no other item; the common ones are looked up."""
    items = parse_items("".join(f"- Rule {n}: keep caches small.\n" for n in range(60)))
    search = near_duplicates(items)
    paired = {d.first.line for d in search.pairs} | {d.second.line for d in search.pairs}
    assert paired == {item.line for item in items}
    assert search.capped == len(items)  # 59 look-alikes each, the 6 most alike paired


def test_items_without_words_and_the_same_text_pair_up() -> None:
    memory = "- ----\n- -----\n- Keep it.\n- keep it\n" + "".join(
        f"- the cache of the run {n}\n" for n in range(3)
    )
    items = parse_items(memory)
    assert found(items) == all_pairs(items)
    assert (1, 2, 0.89) in found(items)


def test_a_search_out_of_time_says_it_is_not_complete() -> None:
    items = parse_items(memory_of(64 * 1024, seed=3, share=0.2))
    search = near_duplicates(items, expired=lambda: True)
    assert not search.complete
    assert near_duplicates(items).complete


def test_items_with_hundreds_of_look_alikes_are_capped_and_say_so() -> None:
    rng = random.Random(7)  # noqa: S311 - test data
    vocabulary = [f"word{n}" for n in range(30)]
    rules = [f"- {' '.join(rng.choices(vocabulary, k=10))}" for _ in range(3_000)]
    twin = "- run test file merge cache save the one pair that must be found"
    items = parse_items("\n".join([*rules, twin, twin.replace("found", "found!")]) + "\n")

    search = near_duplicates(items)

    assert search.capped > 0  # stopped early for some items, and says how many
    assert search.complete
    assert any(
        d.first.text.startswith("- run test file merge cache save the") for d in search.pairs
    )
    compared = len(candidate_pairs([comparable(i.text) for i in items], 0.85, never).pairs)
    assert compared <= len(items) * MOST_ALIKE
