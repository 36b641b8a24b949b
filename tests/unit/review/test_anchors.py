"""``anchor`` and ``code_at``: which findings GitHub would take as inline comments, on
hand-written patches whose every line is known (the random corpus check is in
tests/integration/test_review_anchors.py)."""

from __future__ import annotations

from typing import Any

import pytest

from memory_action.github.pull_request import ChangedFile
from memory_action.review.anchors import anchor, code_at, comment_body, suggestion_block
from memory_action.review.findings import Finding

# Two hunks. Old file: 1 def fetch(url): 2 return get(url) ... 10 x = 1, 11 y = 2, 12 z = 3
# New file: 1 def fetch(url): 2 (added) 3 return get(url) ... 11 x = 1, 12 (added) y = 20, 13 z = 3
PATCH = (
    "@@ -1,2 +1,3 @@ imports\n"
    " def fetch(url):\n"
    "+    for attempt in range(3):\n"
    "     return get(url)\n"
    "@@ -10,3 +11,3 @@ def other():\n"
    " x = 1\n"
    "-y = 2\n"
    "+y = 20\n"
    " z = 3\n"
)
FILES = [
    ChangedFile(path="src/fetch.py", status="modified", additions=2, deletions=1, patch=PATCH),
    ChangedFile(path="logo.png", status="added", additions=0, deletions=0, patch=None),
    ChangedFile(
        path="docs/removed.md",
        status="removed",
        additions=0,
        deletions=2,
        patch="@@ -1,2 +0,0 @@\n-# Old\n-text\n",
    ),
    ChangedFile(
        path="new.txt",
        status="added",
        additions=1,
        deletions=0,
        patch="@@ -0,0 +1 @@\n+hello\n\\ No newline at end of file",
    ),
]


def finding(**fields: Any) -> Finding:
    values: dict[str, Any] = {"path": "src/fetch.py", "line": 2, "title": "Retry", "body": "b"}
    return Finding(**{**values, **fields})


VALID = [
    pytest.param({"line": 2}, id="added-line-right"),
    pytest.param({"line": 1}, id="context-line-right"),
    pytest.param({"line": 3}, id="context-after-added"),
    pytest.param({"line": 12}, id="added-in-second-hunk"),
    pytest.param({"line": 11, "side": "LEFT"}, id="deleted-line-left"),
    pytest.param({"start_line": 1, "line": 3}, id="range-in-one-hunk"),
    pytest.param({"start_line": 11, "line": 13}, id="range-across-a-deleted-line"),
    pytest.param({"line": 2, "suggestion": "    for attempt in range(5):"}, id="suggestion"),
    pytest.param({"path": "docs/removed.md", "line": 2, "side": "LEFT"}, id="removed-file-left"),
    pytest.param({"path": "new.txt", "line": 1}, id="no-newline-marker"),
]


@pytest.mark.parametrize("fields", VALID)
def test_valid_anchors_become_inline_comments(fields: dict[str, Any]) -> None:
    found = finding(**fields)
    comment = anchor(found, FILES, masked=())
    assert comment is not None
    assert (comment.path, comment.line, comment.side) == (found.path, found.line, found.side)
    assert comment.start_line == found.start_line
    assert comment.start_side == (found.side if found.start_line else None)


INVALID = [
    pytest.param({"line": 5}, id="between-hunks"),
    pytest.param({"line": 40}, id="after-the-last-hunk"),
    pytest.param({"line": 1, "side": "LEFT"}, id="context-line-on-left"),
    pytest.param({"line": 2, "side": "LEFT"}, id="left-number-of-no-deleted-line"),
    pytest.param({"line": 12, "side": "LEFT"}, id="left-past-the-deletions"),
    pytest.param({"start_line": 2, "line": 12}, id="range-across-hunks"),
    pytest.param({"start_line": 3, "line": 2}, id="range-backwards"),
    pytest.param({"start_line": 5, "line": 12}, id="range-start-outside-hunks"),
    pytest.param({"line": 11, "side": "LEFT", "suggestion": "y = 3"}, id="suggestion-on-left"),
    pytest.param({"path": "src/other.py"}, id="unknown-path"),
    pytest.param({"path": "logo.png", "line": 1}, id="file-without-patch"),
    pytest.param({"path": "docs/removed.md", "line": 1}, id="removed-file-right"),
    pytest.param({"path": "src/Fetch.py"}, id="path-case-differs"),
]


@pytest.mark.parametrize("fields", INVALID)
def test_invalid_anchors_are_refused(fields: dict[str, Any]) -> None:
    assert anchor(finding(**fields), FILES, masked=()) is None


def test_a_range_of_one_line_is_a_single_line_comment() -> None:
    comment = anchor(finding(start_line=2, line=2), FILES, masked=())
    assert comment is not None
    assert (comment.start_line, comment.start_side) == (None, None)


def test_a_patch_that_is_no_diff_anchors_nothing() -> None:
    broken = [
        ChangedFile(
            path="src/fetch.py",
            status="modified",
            additions=1,
            deletions=0,
            patch="@@ -1 +1 @@\n?what\n",
        )
    ]
    assert anchor(finding(line=1), broken, masked=()) is None
    assert code_at(finding(line=1), broken) == ""


def test_code_at_reads_the_lines_of_its_side() -> None:
    assert code_at(finding(start_line=1, line=3), FILES) == (
        "def fetch(url):\n    for attempt in range(3):\n    return get(url)"
    )
    assert code_at(finding(line=11, side="LEFT"), FILES) == "y = 2"
    # The deleted line between the range's ends is not on RIGHT.
    assert code_at(finding(start_line=11, line=13), FILES) == "x = 1\ny = 20\nz = 3"
    assert code_at(finding(line=7), FILES) == ""


def test_the_body_has_title_severity_text_and_suggestion() -> None:
    body = comment_body(finding(title="Bounded retry", severity="high", suggestion="x\n"))
    assert body == "**Bounded retry** (high)\n\nb\n\n```suggestion\nx\n```"


def test_the_body_defuses_mentions_and_html() -> None:
    body = comment_body(finding(title="Ask @octocat", body="<details>hidden"))
    assert "`@octocat`" in body
    assert "<details>" not in body


@pytest.mark.parametrize(
    ("text", "fence"),
    [
        pytest.param("x = 1", "```", id="plain"),
        pytest.param("s = '```'", "````", id="a-fence-inside"),
        pytest.param("`````", "``````", id="five-backticks"),
    ],
)
def test_the_suggestion_fence_is_longer_than_any_run_inside(text: str, fence: str) -> None:
    block = suggestion_block(text)
    assert block == f"{fence}suggestion\n{text}\n{fence}"


def test_an_empty_suggestion_deletes_the_lines() -> None:
    assert suggestion_block("") == "```suggestion\n```"


# -- the Finding model: untrusted model output -------------------------------------------------


def test_a_finding_keeps_the_first_line_of_its_title() -> None:
    assert finding(title="  Retry is unbounded\nmore text").title == "Retry is unbounded"


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param({"title": "  \n "}, id="blank-title"),
        pytest.param({"line": 0}, id="line-0"),
        pytest.param({"side": "BOTH"}, id="unknown-side"),
        pytest.param({"severity": "critical"}, id="unknown-severity"),
        pytest.param({"confidence": 0.9}, id="unknown-field"),
    ],
)
def test_a_malformed_finding_is_refused(fields: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="validation error"):
        finding(**fields)
