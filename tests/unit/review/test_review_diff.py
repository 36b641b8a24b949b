"""Patch parsing, context trimming with exact hunk headers, and compact rendering.

Exactness is proved by applying: the compressed hunks, applied strictly (no fuzz, at the line
numbers their headers give) to the old file, must give the new file. The real patch is one file
of pallets/click (BSD-3-Clause), commit 90c9c74 "manual cleanup".
"""

from __future__ import annotations

import difflib
import random
from dataclasses import replace

import pytest

from memory_action.review.patch import Hunk, compress_hunks, parse_patch, render_hunks
from tests.unit.review.patching import FIXTURES, apply_hunks, reverse

REAL_PATCH = (FIXTURES / "unicodefun.patch").read_text()
REAL_NEW = (FIXTURES / "unicodefun.head.txt").read_text().split("\n")
REAL_OLD = apply_hunks(REAL_NEW, reverse(parse_patch(REAL_PATCH)))


def github_patch(old: list[str], new: list[str], *, context: int) -> str:
    """The patch GitHub would give: a unified diff without the ---/+++ lines."""
    lines = list(difflib.unified_diff(old, new, lineterm="", n=context))
    return "\n".join(lines[2:])


def edited(lines: list[str], seed: int) -> list[str]:
    """A copy of ``lines`` with scattered insertions, deletions and replacements."""
    rng = random.Random(seed)  # noqa: S311 - reproducible test data, not secrets
    out = list(lines)
    for _ in range(12):
        at = rng.randrange(len(out))
        action = rng.choice(("insert", "delete", "replace"))
        if action == "insert":
            out[at:at] = [f"inserted {seed}-{at}-{n}" for n in range(rng.randint(1, 3))]
        elif action == "delete":
            del out[at : at + rng.randint(1, 4)]
        else:
            out[at] = f"replaced {seed}-{at}"
    return out


# --- parsing -------------------------------------------------------------------------------------


def test_parses_counts_section_and_lines() -> None:
    patch = "@@ -10,4 +10,5 @@ def main():\n a\n-b\n+B\n+C\n c\n d"
    assert parse_patch(patch) == [
        Hunk(
            old_start=10,
            old_count=4,
            new_start=10,
            new_count=5,
            section="def main():",
            lines=(" a", "-b", "+B", "+C", " c", " d"),
        )
    ]


def test_a_missing_count_means_one_line() -> None:
    (hunk,) = parse_patch("@@ -1 +1 @@\n-old\n+new")
    assert (hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count) == (1, 1, 1, 1)
    assert hunk.section == ""
    assert hunk.render() == "@@ -1 +1 @@\n-old\n+new\n"


def test_a_new_file_starts_at_zero() -> None:
    (hunk,) = parse_patch("@@ -0,0 +1,2 @@\n+one\n+two\n")
    assert (hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count) == (0, 0, 1, 2)


def test_no_newline_markers_are_kept_as_lines() -> None:
    patch = (
        "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n\\ No newline at end of file"
    )
    (hunk,) = parse_patch(patch)
    assert hunk.lines == (
        " a",
        "-b",
        "\\ No newline at end of file",
        "+b",
        "\\ No newline at end of file",
    )
    assert hunk.render() == patch + "\n"


def test_several_hunks_and_a_trailing_newline_or_not() -> None:
    patch = "@@ -1,2 +1,2 @@ one\n-a\n+b\n c\n@@ -20 +20,2 @@ two\n x\n+y"
    hunks = parse_patch(patch)
    assert [h.section for h in hunks] == ["one", "two"]
    assert [h.lines for h in hunks] == [("-a", "+b", " c"), (" x", "+y")]
    assert parse_patch(patch + "\n") == hunks


def test_empty_lines_are_context_and_carriage_returns_stay() -> None:
    (hunk,) = parse_patch("@@ -1,3 +1,3 @@\n a\r\n\n-b\r\n+c\r")
    assert hunk.lines == (" a\r", " ", "-b\r", "+c\r")


def test_file_headers_of_a_full_git_diff_are_skipped() -> None:
    patch = "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b"
    assert parse_patch(patch) == [
        Hunk(old_start=1, old_count=1, new_start=1, new_count=1, section="", lines=("-a", "+b"))
    ]


def test_a_line_that_is_not_a_diff_line_is_named() -> None:
    with pytest.raises(ValueError, match=r"line 3 of the patch .*'oops'"):
        parse_patch("@@ -1,2 +1,2 @@\n a\noops\n")


def test_the_real_patch_renders_back_byte_for_byte() -> None:
    assert render_hunks(parse_patch(REAL_PATCH), summarise_deletions_over=10**6) == REAL_PATCH


# --- compression keeps headers exact ------------------------------------------------------------


@pytest.mark.parametrize("context", [0, 1, 2, 3, 4])
def test_compressed_real_hunks_apply_to_the_old_file(context: int) -> None:
    hunks = compress_hunks(parse_patch(REAL_PATCH), context=context)
    assert apply_hunks(REAL_OLD, hunks) == REAL_NEW
    for hunk in hunks:
        changes = [i for i, line in enumerate(hunk.lines) if line[0] in "+-"]
        assert changes[0] <= context  # leading context trimmed
        assert len(hunk.lines) - 1 - changes[-1] <= context  # trailing context trimmed


def test_compressing_equals_diffing_with_less_context() -> None:
    # difflib groups changes exactly like git (a gap longer than 2 * context splits a hunk).
    old = [f"line {n}" for n in range(1, 400)]
    for seed in range(20):
        new = edited(old, seed)
        wide = parse_patch(github_patch(old, new, context=6))
        for context in (0, 1, 3):
            expected = parse_patch(github_patch(old, new, context=context))
            compressed = compress_hunks(wide, context=context)
            # difflib writes no section text; git's rule finds one ("line 71" starts with a letter)
            assert [replace(h, section="") for h in compressed] == expected, (seed, context)
            assert apply_hunks(old, compress_hunks(wide, context=context)) == new


def test_a_gap_of_exactly_twice_the_context_stays_one_hunk() -> None:
    old = [str(n) for n in range(1, 21)]
    new = [*old[:4], "X", *old[5:9], "Y", *old[10:]]  # lines 5 and 10 change, 4 lines between
    (hunk,) = parse_patch(github_patch(old, new, context=3))
    assert len(compress_hunks([hunk], context=2)) == 1
    assert len(compress_hunks([hunk], context=1)) == 2


def test_a_no_newline_marker_stays_with_its_line() -> None:
    (hunk,) = parse_patch(
        "@@ -1,5 +1,5 @@\n a\n b\n c\n-d\n\\ No newline at end of file\n+d\n+e"
        "\n\\ No newline at end of file"
    )
    (trimmed,) = compress_hunks([hunk], context=0)
    assert trimmed.render() == (
        "@@ -4 +4,2 @@ c\n-d\n\\ No newline at end of file\n+d\n+e\n\\ No newline at end of file\n"
    )
    (with_context,) = compress_hunks([hunk], context=1)
    assert with_context.lines[0] == " c"


def test_pure_additions_and_deletions_name_the_line_before() -> None:
    old = [str(n) for n in range(1, 21)]
    new = [*old[:5], "added", *old[5:14], *old[16:]]  # insert after 5, delete 15-16
    hunks = compress_hunks(parse_patch(github_patch(old, new, context=3)), context=0)
    assert [h.header() for h in hunks] == ["@@ -5,0 +6 @@", "@@ -15,2 +15,0 @@"]
    assert apply_hunks(old, hunks) == new


def test_a_split_hunk_takes_the_nearest_section_line_as_git_does() -> None:
    patch = (
        "@@ -1,12 +1,12 @@ top\n"
        "-import a\n+import b\n \n"
        " def first():\n     return 1\n \n \n"
        " class Second:\n     def method(self):\n         pass\n"
        "-    x = 1\n+    x = 2\n"
    )
    hunks = compress_hunks(parse_patch(patch), context=0)
    assert [h.section for h in hunks] == ["top", "class Second:"]


def test_a_hunk_without_changes_is_left_out_and_context_cannot_be_negative() -> None:
    assert (
        compress_hunks(
            [
                Hunk(
                    old_start=1,
                    old_count=2,
                    new_start=1,
                    new_count=2,
                    section="",
                    lines=(" a", " b"),
                )
            ],
            context=3,
        )
        == []
    )
    with pytest.raises(ValueError, match="context must be 0 or more"):
        compress_hunks([], context=-1)


# --- rendering ----------------------------------------------------------------------------------


def test_a_long_pure_deletion_becomes_one_line() -> None:
    old = ["", *[f"removed {n}" for n in range(1, 11)], "kept"]
    (hunk,) = parse_patch(github_patch(old, ["kept"], context=0))
    assert render_hunks([hunk]) == "@@ -1,11 +0,0 @@\n[11 lines removed, from `removed 1`]\n"


def test_short_deletions_and_deletions_with_additions_stay_whole() -> None:
    eight = Hunk(
        old_start=3,
        old_count=8,
        new_start=2,
        new_count=0,
        section="",
        lines=tuple(f"-r{n}" for n in range(8)),
    )
    replaced = Hunk(
        old_start=3,
        old_count=9,
        new_start=3,
        new_count=1,
        section="",
        lines=(*(f"-r{n}" for n in range(9)), "+new"),
    )
    assert render_hunks([eight, replaced]) == eight.render() + replaced.render()
    assert "lines removed" in render_hunks([eight], summarise_deletions_over=7)


def test_the_quoted_line_is_shortened() -> None:
    hunk = Hunk(
        old_start=1,
        old_count=9,
        new_start=0,
        new_count=0,
        section="",
        lines=tuple("-" + "x" * 200 for _ in range(9)),
    )
    (summary,) = render_hunks([hunk]).splitlines()[1:]
    assert summary == f"[9 lines removed, from `{'x' * 79}…`]"
