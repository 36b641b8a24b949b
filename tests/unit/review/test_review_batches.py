"""Packing compressed diffs into requests that each fit a token capacity, within a call budget.

Most tests count one token per line (``lines``), so sizes can be read off the patches: a file
of k added lines is its header line, one hunk header and k lines, k + 2 tokens.
"""

from __future__ import annotations

import pytest

from memory_action.github.pull_request import ChangedFile
from memory_action.review.batches import (
    Batch,
    FilePart,
    ReviewPlan,
    plan_batches,
    render_file,
)
from memory_action.review.patch import compress_hunks, parse_patch
from memory_action.review.selection import Category, ReviewFile, Skipped
from tests.unit.review.patching import FIXTURES, apply_hunks, reverse

REAL_PATCH = (FIXTURES / "unicodefun.patch").read_text()
REAL_NEW = (FIXTURES / "unicodefun.head.txt").read_text().split("\n")
REAL_OLD = apply_hunks(REAL_NEW, reverse(parse_patch(REAL_PATCH)))


def lines(text: str) -> int:
    return text.count("\n")


def characters(text: str) -> int:
    return len(text)


def review_file(
    path: str,
    patch: str | None,
    *,
    status: str = "modified",
    additions: int | None = None,
    deletions: int | None = None,
    previous_path: str | None = None,
) -> ReviewFile:
    body = (patch or "").split("\n")
    file = ChangedFile(
        path=path,
        status=status,
        additions=sum(line.startswith("+") for line in body) if additions is None else additions,
        deletions=sum(line.startswith("-") for line in body) if deletions is None else deletions,
        patch=patch,
        previous_path=previous_path,
    )
    return ReviewFile(file=file, category=Category.SOURCE)


def added(path: str, count: int) -> ReviewFile:
    """A new file of ``count`` lines: ``count + 2`` tokens counted by ``lines``."""
    patch = f"@@ -0,0 +1,{count} @@\n" + "\n".join(f"+{path} {n}" for n in range(1, count + 1))
    return review_file(path, patch, status="added")


def one_change_in_context(path: str) -> ReviewFile:
    """One changed line with 7 unchanged lines either side: 17, 9, 5 or 3 tokens at 7, 3, 1, 0."""
    before = "\n".join(f" before {n}" for n in range(7))
    after = "\n".join(f" after {n}" for n in range(7))
    return review_file(
        path, f"@@ -1,15 +1,15 @@\n{before}\n-old\n+new\n{after}".replace("-old\n", "")
    )


def far_apart_hunks(path: str, count: int) -> ReviewFile:
    """``count`` hunks of 3 added lines each, 100 lines apart."""
    hunks = [
        f"@@ -{100 * n},0 +{100 * n + 3 * n - 2},3 @@\n+{n}a\n+{n}b\n+{n}c"
        for n in range(1, count + 1)
    ]
    return review_file(path, "\n".join(hunks))


def hunks_of(part: FilePart) -> list[str]:
    return [hunk.render() for hunk in parse_patch(part.text)]


# --- rendering one file -------------------------------------------------------------------------


def test_a_changed_file_is_its_header_and_its_hunks() -> None:
    rf = review_file("src/a.py", "@@ -1 +1 @@ top\n-a\n+b")
    assert render_file(rf, context=3) == "### modified src/a.py (+1 -1)\n@@ -1 +1 @@ top\n-a\n+b\n"


@pytest.mark.parametrize(
    ("rf", "text"),
    [
        (
            review_file("new.py", "@@ -1 +1 @@\n-a\n+b", status="renamed", previous_path="old.py"),
            "### renamed new.py (+1 -1) (renamed from old.py)\n@@ -1 +1 @@\n-a\n+b\n",
        ),
        (
            review_file("new.py", None, status="renamed", previous_path="old.py"),
            "### renamed new.py (+0 -0) (renamed from old.py)\nrenamed, content unchanged\n",
        ),
        (
            review_file("gone.py", None, status="removed", deletions=120),
            "### removed gone.py (+0 -120)\ndeleted: 120 lines\n",
        ),
        (
            review_file("run.sh", None),
            "### modified run.sh (+0 -0)\nno text changes (binary, empty or mode-only change)\n",
        ),
        (
            review_file("big.json", None, additions=5000),
            "### modified big.json (+5000 -0)\nno diff from GitHub (binary or too large)\n",
        ),
        (
            review_file("odd.txt", "@@ -1 +1 @@\n-a\n?b"),  # not a diff GitHub writes: shown as is
            "### modified odd.txt (+0 -1)\n@@ -1 +1 @@\n-a\n?b\n",
        ),
    ],
)
def test_files_without_hunks_to_show_are_one_line(rf: ReviewFile, text: str) -> None:
    assert render_file(rf, context=3) == text


def test_less_context_is_less_text_with_the_same_changes() -> None:
    rf = review_file("src/click/_unicodefun.py", REAL_PATCH)
    sizes = [len(render_file(rf, context=context)) for context in (3, 1, 0)]
    assert sizes == sorted(sizes, reverse=True)
    assert len(set(sizes)) == 3
    for context in (3, 1, 0):
        shown = parse_patch(render_file(rf, context=context))
        assert shown == compress_hunks(parse_patch(REAL_PATCH), context=context)


# --- packing whole files ------------------------------------------------------------------------


def test_small_files_share_one_batch_in_order() -> None:
    files = [added("a.py", 1), added("b.py", 2), added("c.py", 3)]
    plan = plan_batches(files, capacity=100, count=lines, max_batches=3)
    (batch,) = plan.batches
    assert batch.paths == ("a.py", "b.py", "c.py")
    assert batch.tokens == 3 + 4 + 5 == sum(part.tokens for part in batch.parts)
    assert [part.text for part in batch.parts] == [render_file(rf, context=3) for rf in files]
    assert plan.not_reviewed == ()
    assert plan.reviewed_paths == ("a.py", "b.py", "c.py")


def test_first_fit_fills_an_earlier_batch_with_room() -> None:
    files = [added("a.py", 4), added("b.py", 4), added("c.py", 2)]  # 6, 6 and 4 tokens
    plan = plan_batches(files, capacity=10, count=lines, max_batches=5)
    assert [batch.paths for batch in plan.batches] == [("a.py", "c.py"), ("b.py",)]
    assert [batch.tokens for batch in plan.batches] == [10, 6]
    assert plan.reviewed_paths == ("a.py", "c.py", "b.py")


def test_a_file_takes_less_context_when_the_larger_does_not_fit() -> None:
    rf = one_change_in_context("a.py")
    plan = plan_batches([rf], capacity=6, count=lines, max_batches=1)
    (part,) = plan.batches[0].parts
    assert part.text == render_file(rf, context=1)
    assert part.tokens == 5


def test_the_plan_trades_context_for_files_when_the_budget_is_short() -> None:
    files = [one_change_in_context("a.py"), one_change_in_context("b.py")]
    roomy = plan_batches(files, capacity=10, count=lines, max_batches=2)
    assert [part.tokens for batch in roomy.batches for part in batch.parts] == [9, 9]  # context 3
    short = plan_batches(files, capacity=10, count=lines, max_batches=1)
    assert [part.tokens for part in short.batches[0].parts] == [5, 5]  # context 1, both reviewed
    assert short.not_reviewed == ()


def test_files_over_the_call_budget_are_listed() -> None:
    files = [added("a.py", 6), added("b.py", 6), added("c.py", 1)]  # 8, 8 and 3 tokens
    plan = plan_batches(files, capacity=10, count=lines, max_batches=1)
    assert plan.reviewed_paths == ("a.py",)
    assert plan.not_reviewed == (
        Skipped(path="b.py", reason="over max_model_calls (1)"),
        Skipped(path="c.py", reason="over max_model_calls (1)"),
    )
    nothing = plan_batches(files, capacity=10, count=lines, max_batches=0)
    assert nothing.batches == ()
    assert [skipped.path for skipped in nothing.not_reviewed] == ["a.py", "b.py", "c.py"]


# --- splitting large files ----------------------------------------------------------------------


def test_a_file_too_large_for_one_request_is_split_between_hunks() -> None:
    rf = far_apart_hunks("big.py", 4)  # 4 hunks of 4 lines: 17 tokens in all
    plan = plan_batches([rf, added("small.py", 1)], capacity=12, count=lines, max_batches=3)
    first, second = plan.batches
    assert [(p.path, p.part, p.parts, p.tokens) for p in first.parts] == [
        ("big.py", 1, 2, 9),
        ("small.py", 1, 1, 3),  # first fit: the room left in batch 1
    ]
    assert [(p.path, p.part, p.parts, p.tokens) for p in second.parts] == [("big.py", 2, 2, 9)]
    assert first.parts[0].text.startswith("### modified big.py (+12 -0) (part 1 of 2)\n@@")
    assert second.parts[0].text.startswith("### modified big.py (+12 -0) (part 2 of 2)\n@@")
    shown = hunks_of(first.parts[0]) + hunks_of(second.parts[0])
    assert shown == [hunk.render() for hunk in parse_patch(rf.file.patch or "")]
    assert all(batch.tokens <= 12 for batch in plan.batches)
    assert plan.not_reviewed == ()


def test_a_hunk_too_large_for_one_request_is_split_between_lines_with_exact_headers() -> None:
    rf = added("new.py", 25)
    plan = plan_batches([rf], capacity=10, count=lines, max_batches=9)
    parts = [part for batch in plan.batches for part in batch.parts]
    assert [(part.part, part.parts, part.tokens) for part in parts] == [
        (1, 4, 10),
        (2, 4, 10),
        (3, 4, 10),
        (4, 4, 3),
    ]
    hunks = [hunk for part in parts for hunk in parse_patch(part.text)]
    assert [hunk.header() for hunk in hunks] == [
        "@@ -0,0 +1,8 @@",
        "@@ -0,0 +9,8 @@",
        "@@ -0,0 +17,8 @@",
        "@@ -0,0 +25 @@",
    ]
    assert apply_hunks([], hunks) == [f"new.py {n}" for n in range(1, 26)]
    assert all(part.cut == "" for part in parts)


@pytest.mark.parametrize("capacity", range(280, 1600, 40))
def test_every_split_of_a_real_patch_fits_and_applies_exactly(capacity: int) -> None:
    rf = review_file("src/click/_unicodefun.py", REAL_PATCH)
    plan = plan_batches([rf], capacity=capacity, count=characters, max_batches=100)
    assert all(batch.tokens <= capacity for batch in plan.batches)
    parts = sorted((part for batch in plan.batches for part in batch.parts), key=lambda p: p.part)
    assert [part.part for part in parts] == list(range(1, len(parts) + 1))
    assert plan.not_reviewed == ()
    # Each part may use its own context, but together they apply exactly.
    hunks = [hunk for part in parts for hunk in parse_patch(part.text)]
    assert apply_hunks(REAL_OLD, hunks) == REAL_NEW


def test_a_line_longer_than_a_request_is_cut_with_a_note() -> None:
    rf = review_file("static/app.js", "@@ -0,0 +1,2 @@\n+" + "x" * 500 + "\n+end", status="added")
    plan = plan_batches([rf], capacity=200, count=characters, max_batches=5)
    parts = [part for batch in plan.batches for part in batch.parts]
    # 200 characters hold the header (with room for a part number), the hunk header, the
    # line's "+", " [cut]" and 126 of its 500 characters.
    assert [part.cut for part in parts] == ["new line 1 cut to 126 of 500 characters", ""]
    assert [part.text for part in parts] == [
        "### added static/app.js (+2 -0) (part 1 of 2)\n@@ -0,0 +1 @@\n+" + "x" * 126 + " [cut]\n",
        "### added static/app.js (+2 -0) (part 2 of 2)\n@@ -0,0 +2 @@\n+end\n",
    ]
    assert all(part.tokens <= 200 for part in parts)
    assert plan.reviewed_paths == ("static/app.js",)
    # The reason says what was not shown; the comment says the file was reviewed in part.
    assert plan.not_reviewed == (
        Skipped(path="static/app.js", reason="new line 1 cut to 126 of 500 characters"),
    )
    assert plan.complete  # a cut line is cut in any plan: nothing waits for another request


def test_a_file_whose_header_alone_is_too_large_is_listed() -> None:
    plan = plan_batches([added("a.py", 1)], capacity=2, count=lines, max_batches=5)
    assert plan == ReviewPlan(
        batches=(),
        not_reviewed=(
            Skipped(
                path="a.py",
                reason="too large for one request to this model (room for 2 tokens of diff)",
            ),
        ),
        complete=False,
    )


def test_a_file_with_any_part_sent_counts_as_reviewed() -> None:
    plan = plan_batches(
        [added("new.py", 25), added("later.py", 1)], capacity=10, count=lines, max_batches=2
    )
    assert plan.reviewed_paths == ("new.py",)
    assert plan.not_reviewed == (
        Skipped(path="new.py", reason="parts 3-4 of 4 over max_model_calls (2)"),
        Skipped(path="later.py", reason="over max_model_calls (2)"),
    )
    assert not plan.complete


def test_what_is_over_the_budget_quotes_the_setting_not_the_batches_it_left() -> None:
    # max_model_calls: 3 keeps a call for the last request: two batches, and the reasons say 3.
    plan = plan_batches(
        [added("new.py", 25), added("later.py", 1)],
        capacity=10,
        count=lines,
        max_batches=2,
        max_model_calls=3,
    )
    assert {s.reason for s in plan.not_reviewed} == {
        "parts 3-4 of 4 over max_model_calls (3)",
        "over max_model_calls (3)",
    }


def test_the_last_part_of_a_file_fills_room_in_an_earlier_batch() -> None:
    files = [added("a.py", 2), added("new.py", 17)]  # 4 tokens; parts of 10, 10 and 3 tokens
    plan = plan_batches(files, capacity=10, count=lines, max_batches=3)
    assert [[(p.path, p.part) for p in batch.parts] for batch in plan.batches] == [
        [("a.py", 1), ("new.py", 3)],
        [("new.py", 1)],
        [("new.py", 2)],
    ]
    assert plan.not_reviewed == ()


def test_a_no_newline_marker_stays_with_its_line_when_a_hunk_is_split() -> None:
    marker = "\\ No newline at end of file"
    patch = "@@ -0,0 +1,8 @@\n" + "\n".join(f"+{n}" for n in range(1, 9)) + f"\n{marker}"
    plan = plan_batches([review_file("a.txt", patch)], capacity=10, count=lines, max_batches=3)
    parts = [part for batch in plan.batches for part in batch.parts]
    assert (
        parts[-1].text == f"### modified a.txt (+8 -0) (part 2 of 2)\n@@ -0,0 +8 @@\n+8\n{marker}\n"
    )
    assert [part.tokens for part in parts] == [9, 4]


@pytest.mark.parametrize(
    "arguments",
    [
        {"capacity": 0, "max_batches": 1},
        {"capacity": 10, "max_batches": -1},
        {"capacity": 10, "max_batches": 1, "contexts": ()},
        {"capacity": 10, "max_batches": 1, "contexts": (3, -1)},
    ],
)
def test_impossible_arguments_are_refused(arguments: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="cannot plan batches"):
        plan_batches([added("a.py", 1)], count=lines, **arguments)  # type: ignore[arg-type]


def test_a_batch_lists_each_path_once() -> None:
    part = FilePart(path="a.py", text="x", tokens=1)
    batch = Batch(
        parts=(
            part,
            FilePart(path="b.py", text="y", tokens=1),
            FilePart(path="a.py", text="z", tokens=1, part=2, parts=2),
        ),
        tokens=3,
    )
    assert batch.paths == ("a.py", "b.py")
