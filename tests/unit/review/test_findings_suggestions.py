"""Which suggestions are code for the lines they replace (``findings_suggestions``)."""

from __future__ import annotations

import pytest

from memory_action.github.pull_request import ChangedFile
from memory_action.review.findings import Finding
from memory_action.review.findings_suggestions import IDENTICAL, PROSE, vetted, why_not

CODE = ChangedFile(
    path="src/app.py",
    status="modified",
    additions=2,
    deletions=1,
    patch='@@ -1,2 +1,3 @@\n def f():\n-    return 1\n+    """Return one."""\n+    return 1 + 0\n',
)
DOCS = ChangedFile(
    path="docs/guide.md",
    status="modified",
    additions=1,
    deletions=1,
    patch="@@ -1 +1 @@\n-Old text here.\n+New text here.\n",
)


def finding(path: str, line: int, suggestion: str | None) -> Finding:
    return Finding(path=path, line=line, title="t", body="b", suggestion=suggestion)


@pytest.mark.parametrize(
    ("path", "line", "suggestion", "why"),
    [
        ("src/app.py", 3, "No further action required.", PROSE),
        ("src/app.py", 3, "This is fine as it is.\nNothing to change here.", PROSE),
        ("src/app.py", 3, "    return 1 + 0\n", IDENTICAL),
        ("src/app.py", 3, "    return 1", None),
        ("src/app.py", 3, "", None),
        ("src/app.py", 3, None, None),
        ("src/app.py", 2, '    """Return the number one."""', None),
        ("src/app.py", 2, "    Return the number one.", PROSE),  # the quotes are code
        ("docs/guide.md", 1, "Newer text here, with a reason.", None),
        ("src/app.py", 9, "Outside the diff, and prose.", PROSE),
    ],
)
def test_why_a_suggestion_is_not_posted(
    path: str, line: int, suggestion: str | None, why: str | None
) -> None:
    assert why_not(finding(path, line, suggestion), [CODE, DOCS]) == why


def test_vetting_keeps_the_finding_and_drops_only_the_suggestion() -> None:
    [kept] = vetted([finding("src/app.py", 3, "No further action required.")], [CODE])
    assert (kept.title, kept.suggestion) == ("t", None)
