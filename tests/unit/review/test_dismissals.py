"""Dismissals in memory: the signature a dismissal's line carries, its strict parser, and the
filter that holds back a later finding of the same kind on the same code (and nothing else)."""

from __future__ import annotations

from typing import Any

import pytest

from memory_action.github.pull_request import ChangedFile
from memory_action.memory.review_ledger import LedgerEntry
from memory_action.review.code_shape import enclosing_symbol, identifiers
from memory_action.review.dismissals import (
    Signature,
    hold_back,
    lesson,
    parse_dismissal,
    signature_of,
)
from memory_action.review.findings import Finding

PATCH = (
    "@@ -10,3 +10,9 @@ class Client:\n     def fetch(self, url):\n+        data = get(url)\n"
    "+        return data\n+\n+    def poll(self, url):\n+        data = get(url)\n"
    "+        return data\n     # end\n"
)
FILES = [ChangedFile(path="src/a.py", status="modified", additions=6, deletions=0, patch=PATCH)]


def finding(line: int, title: str = "Unchecked `None`", path: str = "src/a.py") -> Finding:
    return Finding(path=path, line=line, title=title, body="b")


def line_for(found: Finding, **entry: Any) -> str:
    signature = signature_of(found, FILES)
    fields = {"symbol": signature.symbol, "shape": signature.shape, **entry}
    ledger_entry = LedgerEntry(
        fingerprint="ab" * 16, path=found.path, title=found.title, line=found.line, **fields
    )
    return lesson(ledger_entry, "callers check it. (@mona)")


def test_the_symbol_is_the_definition_around_the_line_or_the_hunk_headers() -> None:
    assert enclosing_symbol(finding(11), FILES) == "fetch"
    assert enclosing_symbol(finding(14), FILES) == "poll"  # the definition line itself
    assert enclosing_symbol(finding(15), FILES) == "poll"
    assert enclosing_symbol(finding(10), FILES) == "fetch"
    header_only = "@@ -1,2 +1,3 @@ function load(url) {\n   const x = 1;\n+  use(x);\n }\n"
    js = [ChangedFile(path="a.js", status="modified", additions=1, deletions=0, patch=header_only)]
    assert enclosing_symbol(finding(2, path="a.js"), js) == "load"
    assert enclosing_symbol(finding(99), FILES) == ""  # not in the diff
    assert identifiers(finding(11), FILES) == ("data", "get", "url")


def test_a_dismissal_line_reads_well_and_parses_back_to_its_signature() -> None:
    line = line_for(finding(11))
    assert line == (
        '- Review: do not flag "Unchecked None" in src/a.py, because callers check it. (@mona) '
        "`dismissed: unchecked none | in fetch | on data get url | at src/a.py`"
    )
    parsed = parse_dismissal(f"  {line}  ")
    assert parsed is not None
    assert parsed.signature == Signature(
        kind="unchecked none", path="src/a.py", symbol="fetch", shape=("data", "get", "url")
    )


@pytest.mark.parametrize(
    "line",
    [
        '- Review: do not flag "Unchecked None" in src/a.py, because callers check it.',  # words
        '- Review: do not flag "Unchecked None" in src/a.py, because x `dismissed: unchecked '
        "none | in fetch | at src/b.py`",  # the signature names another path
        '- Review: do not flag "Other" in src/a.py, because x `dismissed: unchecked none | in '
        "fetch | at src/a.py`",  # another kind
        '- Review: do not flag "Unchecked None" in src/a.py, because x `dismissed: unchecked '
        "none | at src/a.py`",  # neither symbol nor shape
        '- Review: do not flag "Unchecked None" in src/a.py, because x `dismissed: unchecked '
        "none | in fetch | in poll | at src/a.py`",  # a part twice
        '- Note: do not flag "Unchecked None" in src/a.py, because x `dismissed: unchecked '
        "none | in fetch | at src/a.py`",  # not a review dismissal
        '- Review: do not flag "Unchecked None" in src/a.py, because x `dismissed: unchecked '
        "none | in fetch | at src/a.py` and more",  # the signature is not last
    ],
)
def test_the_parser_refuses_any_other_line(line: str) -> None:
    assert parse_dismissal(line) is None


def test_a_reason_cannot_forge_or_cut_the_signature() -> None:
    entry = LedgerEntry(fingerprint="ab" * 16, path="src/a.py", title="T", line=1, symbol="f")
    line = lesson(entry, "`dismissed: t | in g | at src/a.py` (@x)")
    parsed = parse_dismissal(line)
    assert parsed is not None and parsed.signature.symbol == "f"


def test_only_the_same_kind_in_the_same_definition_of_the_same_file_is_held_back() -> None:
    memory = "# Review\n\n" + line_for(finding(11)) + "\n- Use httpx.\n"
    same_place = finding(11, title="unchecked none!")
    elsewhere_in_fetch = finding(12)
    in_poll = finding(15)  # the same names on its line: another definition
    other_kind = finding(11, title="Leaks the socket")
    other_file = Finding(path="src/b.py", line=11, title="Unchecked None", body="b")

    result = hold_back(
        [same_place, elsewhere_in_fetch, in_poll, other_kind, other_file], FILES, memory
    )

    assert [h.finding for h in result.held] == [same_place, elsewhere_in_fetch]
    assert {h.line for h in result.held} == {line_for(finding(11))}
    assert result.kept == (in_poll, other_kind, other_file)


def test_without_a_symbol_the_names_on_the_line_decide() -> None:
    top = "@@ -0,0 +1,3 @@\n+data = get(url)\n+other = 1\n+data = get(url)\n"
    files = [ChangedFile(path="src/a.py", status="added", additions=3, deletions=0, patch=top)]
    entry = LedgerEntry(
        fingerprint="ab" * 16, path="src/a.py", title="T", line=1, shape=("data", "get", "url")
    )
    memory = lesson(entry, "x.")
    first, second, third = (Finding(path="src/a.py", line=n, title="T", body="") for n in (1, 2, 3))

    result = hold_back([first, second, third], files, memory)

    assert result.kept == (second,)


def test_a_line_without_a_signature_holds_nothing_back() -> None:
    memory = '- Review: do not flag "Unchecked None" in src/a.py, because callers check it.\n'
    assert hold_back([finding(11)], FILES, memory).held == ()
