"""Lossless three-way merges of memory texts, and folding several unmerged heads into one."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from memory_action.memory.merge import (
    CONFLICT_END,
    CONFLICT_MIDDLE,
    CONFLICT_START,
    DELETED_NOTE,
    Head,
    MergeResult,
    conflict_count,
    has_conflicts,
    merge_heads,
    merge_text,
)

BASE = "# Memory\n\n## Tests\n- use pytest\n\n## Style\n- ruff formats\n"
MARKER_START = (
    "<<<<<<< memory conflict: two runs changed these lines; keep the right version, delete the rest"
)


def added_lines(base: str, side: str) -> Counter[str]:
    return Counter(line for line in side.splitlines() if line.strip()) - Counter(base.splitlines())


def assert_lossless(base: str, ours: str, theirs: str, merged: str) -> None:
    """Every non-blank line either side added is in the result."""
    result = set(merged.splitlines())
    missing = set(added_lines(base, ours) | added_lines(base, theirs)) - result
    assert not missing, f"lines dropped by the merge: {sorted(missing)}"


CLEAN_CASES = [
    pytest.param(
        BASE,
        BASE + "- ours at end\n",
        BASE + "- theirs at end\n",
        BASE + "- ours at end\n- theirs at end\n",
        id="both-append-at-end",
    ),
    pytest.param(
        BASE,
        BASE.replace("- use pytest\n", "- use pytest\n- ours fact\n"),
        BASE.replace("- use pytest\n", "- use pytest\n- theirs fact\n"),
        BASE.replace("- use pytest\n", "- use pytest\n- ours fact\n- theirs fact\n"),
        id="both-add-at-the-same-spot-in-the-middle",
    ),
    pytest.param(
        BASE,
        BASE.replace("- use pytest\n", "- use pytest\n- ours fact\n"),
        BASE + "- theirs fact\n",
        BASE.replace("- use pytest\n", "- use pytest\n- ours fact\n") + "- theirs fact\n",
        id="disjoint-additions-middle-and-end",
    ),
    pytest.param(
        BASE,
        BASE + "- same fact\n",
        BASE + "- same fact\n",
        BASE + "- same fact\n",
        id="identical-additions",
    ),
    pytest.param(
        BASE,
        BASE + "- shared\n- ours only\n",
        BASE + "- shared\n- theirs only\n",
        BASE + "- shared\n- ours only\n- theirs only\n",
        id="overlapping-additions-dedupe-identical-lines",
    ),
    pytest.param(
        BASE,
        BASE.replace("- use pytest\n", "- use pytest\n- same fact\n"),
        BASE + "- same fact\n",
        BASE.replace("- use pytest\n", "- use pytest\n- same fact\n"),
        id="same-fact-added-at-different-places-kept-once",
    ),
    pytest.param(
        BASE,
        BASE + "\n## Ours\n- o\n",
        BASE + "\n## Theirs\n- t\n",
        BASE + "\n## Ours\n- o\n\n## Theirs\n- t\n",
        id="new-sections-keep-their-blank-lines",
    ),
    pytest.param(
        BASE,
        BASE.replace("- ruff formats\n", ""),
        BASE + "- theirs fact\n",
        BASE.replace("- ruff formats\n", "") + "- theirs fact\n",
        id="one-side-deletion-applies",
    ),
    pytest.param(
        BASE,
        BASE,
        BASE.replace("- use pytest\n", ""),
        BASE.replace("- use pytest\n", ""),
        id="deletion-and-no-change",
    ),
    pytest.param(
        BASE,
        BASE.replace("- use pytest\n", ""),
        BASE.replace("- use pytest\n", ""),
        BASE.replace("- use pytest\n", ""),
        id="both-delete-the-same-line",
    ),
    pytest.param(
        "- a\n- b\n",
        "- A\n- b\n",
        "- a\n- B\n",
        "- A\n- B\n",
        id="edits-of-adjacent-lines",
    ),
    pytest.param(
        "- a\n",
        "- A\n",
        "- a\n- x\n",
        "- A\n- x\n",
        id="edit-and-an-addition-next-to-it",
    ),
    pytest.param(
        "- a\n",
        "- A\n",
        "- x\n- a\n",
        "- x\n- A\n",
        id="addition-before-an-edited-line",
    ),
    pytest.param(
        "- a\n",
        "- A\n",
        "- A\n- more\n",
        "- A\n- more\n",
        id="same-edit-one-side-extended",
    ),
    pytest.param(
        "",
        "- ours\n",
        "- theirs\n",
        "- ours\n- theirs\n",
        id="empty-base",
    ),
    pytest.param(
        BASE,
        "",
        BASE,
        "",
        id="ours-emptied-theirs-unchanged",
    ),
    pytest.param(
        "",
        "",
        "- theirs\n",
        "- theirs\n",
        id="empty-base-and-ours",
    ),
    pytest.param(
        "- a",
        "- a\n- ours",
        "- a\n- theirs",
        "- a\n- ours\n- theirs\n",
        id="no-trailing-newlines",
    ),
    pytest.param(
        "- a\n",
        "- a\r\n- ours\r\n",
        "- a\n- theirs",
        "- a\n- ours\n- theirs\n",
        id="crlf-and-missing-newline-mixed",
    ),
]


@pytest.mark.parametrize(("base", "ours", "theirs", "expected"), CLEAN_CASES)
def test_clean_merges(base: str, ours: str, theirs: str, expected: str) -> None:
    result = merge_text(base, ours, theirs)

    assert result == MergeResult(text=expected, conflicts=0)
    assert not has_conflicts(result.text)
    assert_lossless(base, ours, theirs, result.text)


def test_unchanged_side_returns_the_other_exactly() -> None:
    no_newline = BASE + "- x"

    assert merge_text(BASE, no_newline, BASE).text == no_newline
    assert merge_text(BASE, BASE, no_newline).text == no_newline
    assert merge_text(BASE, no_newline, no_newline).text == no_newline


def test_edit_vs_edit_is_a_conflict_with_the_exact_marker() -> None:
    ours = BASE.replace("- use pytest\n", "- use pytest fixtures, not setUp\n")
    theirs = BASE.replace("- use pytest\n", "- use pytest with -x\n")

    result = merge_text(BASE, ours, theirs)

    assert result.conflicts == 1
    assert result.text == BASE.replace(
        "- use pytest\n",
        "<<<<<<< memory conflict: two runs changed these lines; keep the right version, "
        "delete the rest\n"
        "- use pytest fixtures, not setUp\n"
        "=======\n"
        "- use pytest with -x\n"
        ">>>>>>> end of memory conflict\n",
    )
    assert conflict_count(result.text) == 1
    assert_lossless(BASE, ours, theirs, result.text)


def test_marker_constants_are_the_documented_text() -> None:
    assert CONFLICT_START == MARKER_START
    assert CONFLICT_MIDDLE == "======="
    assert CONFLICT_END == ">>>>>>> end of memory conflict"


@pytest.mark.parametrize(
    ("ours", "theirs", "ours_half", "theirs_half"),
    [
        pytest.param(
            "- edited\n", "", ["- edited"], [DELETED_NOTE], id="ours-edits-theirs-deletes"
        ),
        pytest.param(
            "", "- edited\n", [DELETED_NOTE], ["- edited"], id="ours-deletes-theirs-edits"
        ),
    ],
)
def test_edit_vs_delete_keeps_the_edit_and_notes_the_deletion(
    ours: str, theirs: str, ours_half: list[str], theirs_half: list[str]
) -> None:
    base = "# M\n- original\n- kept\n"

    result = merge_text(base, "# M\n" + ours + "- kept\n", "# M\n" + theirs + "- kept\n")

    assert result.conflicts == 1
    assert result.text.splitlines() == [
        "# M",
        CONFLICT_START,
        *ours_half,
        CONFLICT_MIDDLE,
        *theirs_half,
        CONFLICT_END,
        "- kept",
    ]


def test_conflict_and_clean_changes_in_one_merge() -> None:
    ours = BASE.replace("- use pytest\n", "- ours edit\n") + "- ours new\n"
    theirs = BASE.replace("- use pytest\n", "- theirs edit\n") + "- theirs new\n"

    result = merge_text(BASE, ours, theirs)

    assert result.conflicts == 1
    assert result.text.endswith("- ruff formats\n- ours new\n- theirs new\n")
    assert_lossless(BASE, ours, theirs, result.text)


def test_merging_into_an_existing_conflict_does_not_nest_it() -> None:
    ours = BASE.replace("- use pytest\n", "- ours edit\n")
    theirs = BASE.replace("- use pytest\n", "- theirs edit\n")
    first = merge_text(BASE, ours, theirs).text

    assert merge_text(BASE, first, theirs) == MergeResult(text=first, conflicts=0)
    assert merge_text(BASE, first, ours) == MergeResult(text=first, conflicts=0)


def test_merging_a_deletion_into_its_conflict_again_does_not_nest_it() -> None:
    deleted = BASE.replace("- use pytest\n", "")
    first = merge_text(BASE, BASE.replace("- use pytest\n", "- edited\n"), deleted).text

    assert merge_text(BASE, first, deleted) == MergeResult(text=first, conflicts=0)


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("", 0),
        ("- a\n<<<<<<< not ours\n", 0),
        (f"{MARKER_START}\n- a\n=======\n- b\n>>>>>>> end of memory conflict\n", 1),
        (f"{MARKER_START}\n=======\n>>>>>>> end of memory conflict\n" * 3, 3),
    ],
)
def test_conflict_count(text: str, count: int) -> None:
    assert conflict_count(text) == count
    assert has_conflicts(text) is (count > 0)


# --- heads -------------------------------------------------------------------------------------


def fact_heads(count: int, created: list[float] | None = None) -> list[Head]:
    """``count`` heads from BASE, each adding one distinct fact, alternating between sections."""
    times = created or [float(index) for index in range(count)]
    heads = []
    for index in range(count):
        section = "- use pytest\n" if index % 2 else "- ruff formats\n"
        text = BASE.replace(section, f"{section}- fact {index}\n")
        heads.append(Head(text=text, base=BASE, key=f"memory/{index}", created=times[index]))
    return heads


def test_twenty_heads_each_fact_present_exactly_once() -> None:
    result = merge_heads(fact_heads(20))

    lines = Counter(result.text.splitlines())
    assert result.conflicts == 0
    assert all(lines[f"- fact {index}"] == 1 for index in range(20))
    assert lines["- use pytest"] == lines["- ruff formats"] == 1
    assert len(result.text.splitlines()) == len(BASE.splitlines()) + 20


def test_heads_fold_from_the_newest_so_its_additions_come_first() -> None:
    result = merge_heads(fact_heads(3, created=[10.0, 30.0, 20.0]))

    # facts 0 and 2 sit under the same heading: the newer head's (2, created 20) comes first.
    assert "- ruff formats\n- fact 2\n- fact 0\n" in result.text


def test_merging_a_head_twice_is_idempotent() -> None:
    heads = fact_heads(5)
    once = merge_heads(heads)

    assert merge_heads([*heads, heads[2]]) == once
    for head in heads:
        assert merge_text(head.base, once.text, head.text) == MergeResult(
            text=once.text, conflicts=0
        )


def test_head_already_contained_in_a_newer_head_adds_nothing() -> None:
    older = Head(text=BASE + "- a\n", base=BASE, key="k1", created=1.0)
    newer = Head(text=BASE + "- a\n- b\n", base=BASE + "- a\n", key="k2", created=2.0)

    assert merge_heads([older, newer]) == MergeResult(text=BASE + "- a\n- b\n", conflicts=0)


@pytest.mark.parametrize("order", list(itertools.permutations(range(4))))
def test_head_order_changes_no_content(order: tuple[int, ...]) -> None:
    reference = merge_heads(fact_heads(4))
    shuffled = merge_heads(fact_heads(4, created=[float(position) for position in order]))

    assert sorted(shuffled.text.splitlines()) == sorted(reference.text.splitlines())


def test_input_order_of_heads_does_not_matter() -> None:
    heads = fact_heads(6)

    assert merge_heads(heads) == merge_heads(list(reversed(heads)))


def test_heads_with_equal_times_are_ordered_by_key() -> None:
    heads = fact_heads(4, created=[5.0] * 4)

    assert merge_heads(heads) == merge_heads(list(reversed(heads)))


def test_conflicting_heads_count_their_conflicts() -> None:
    heads = [
        Head(
            text=BASE.replace("- use pytest\n", f"- edit {index}\n"),
            base=BASE,
            key=f"k{index}",
            created=float(index),
        )
        for index in range(2)
    ]

    result = merge_heads(heads)

    assert result.conflicts == 1
    assert "- edit 0" in result.text
    assert "- edit 1" in result.text


@pytest.mark.parametrize(
    ("heads", "expected"),
    [
        pytest.param([], MergeResult(text="", conflicts=0), id="none"),
        pytest.param(
            [Head(text="- a", base="", key="k", created=1.0)],
            MergeResult(text="- a", conflicts=0),
            id="one-is-returned-as-is",
        ),
    ],
)
def test_trivial_head_lists(heads: list[Head], expected: MergeResult) -> None:
    assert merge_heads(heads) == expected


def test_heads_with_different_bases() -> None:
    # The newest started from later memory: an older head's addition still lands once.
    later_base = BASE + "- committed since\n"
    newest = Head(text=later_base + "- newest fact\n", base=later_base, key="k2", created=2.0)
    older = Head(text=BASE + "- older fact\n", base=BASE, key="k1", created=1.0)

    result = merge_heads([older, newest])

    assert result == MergeResult(text=later_base + "- newest fact\n- older fact\n", conflicts=0)


# --- seeded random edits -----------------------------------------------------------------------


def random_side(rnd: random.Random, base: list[str], tag: str, deletions: bool) -> list[str]:
    """``base`` with a few random additions, edits, blank lines and (optionally) deletions."""
    lines = list(base)
    for _ in range(rnd.randint(0, 4)):
        roll = rnd.random()
        if roll < 0.4 or not lines:
            lines.insert(rnd.randint(0, len(lines)), f"- {tag} added {rnd.randint(0, 99)}")
        elif roll < 0.7 or not deletions:
            lines[rnd.randrange(len(lines))] = f"- {tag} edited {rnd.randint(0, 99)}"
        else:
            del lines[rnd.randrange(len(lines))]
        if rnd.random() < 0.2:
            lines.insert(rnd.randint(0, len(lines)), "")
    return lines


def joined(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


def random_case(seed: int, deletions: bool) -> tuple[str, str, str]:
    rnd = random.Random(seed)  # noqa: S311 - reproducible test data, not a secret
    base = [f"- base {index}" for index in range(rnd.randint(0, 8))]
    ours = random_side(rnd, base, "ours", deletions)
    theirs = random_side(rnd, base, "theirs", deletions)
    return joined(base), joined(ours), joined(theirs)


@pytest.mark.parametrize("seed", range(300))
def test_random_merges_drop_nothing(seed: int) -> None:
    base, ours, theirs = random_case(seed, deletions=True)

    result = merge_text(base, ours, theirs)

    assert_lossless(base, ours, theirs, result.text)
    assert conflict_count(result.text) == result.conflicts


@pytest.mark.parametrize("seed", range(300))
def test_random_merges_without_deletions_are_idempotent(seed: int) -> None:
    base, ours, theirs = random_case(seed, deletions=False)
    merged = merge_text(base, ours, theirs).text

    assert merge_text(base, merged, theirs) == MergeResult(text=merged, conflicts=0)
