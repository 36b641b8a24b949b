from __future__ import annotations

from collections.abc import Sequence

import pytest

from memory_action.memory.citations import Citation, CitationChecker, parse_citation, parse_items
from memory_action.memory.merge import CONFLICT_END, CONFLICT_MIDDLE, CONFLICT_START
from memory_action.memory.upkeep import Findings, brief, conflict_blocks, near_duplicates


class Code:
    def __init__(self, files: dict[str, str]) -> None:
        self.files = files
        self.reads: list[str] = []
        self.batches = 0  # read_many calls

    def paths(self) -> frozenset[str]:
        return frozenset(self.files)

    def read_many(self, paths: Sequence[str]) -> dict[str, str | None]:
        self.reads.extend(paths)
        self.batches += 1
        return {path: self.files.get(path) for path in paths}


CODE = Code({"src/app.py": "def fetch_retry(url):\n    pass\n", "README.md": "# Demo\n"})


@pytest.mark.parametrize(
    ("span", "expected"),
    [
        ("src/app.py", Citation(path="src/app.py")),
        ("README.md", Citation(path="README.md")),
        ("src/", Citation(path="src")),
        ("fetch_retry", Citation(symbol="fetch_retry")),
        ("fetchRetry", Citation(symbol="fetchRetry")),
        ("Client.fetch", Citation(symbol="fetch")),
        ("run()", Citation(symbol="run")),
        ("src/app.py:fetch_retry", Citation(path="src/app.py", symbol="fetch_retry")),
        ("pytest", None),  # a plain word
        ("API", None),
        ("ruff check .", None),  # a command
        ("../etc/passwd", None),
    ],
)
def test_what_a_code_span_cites(span: str, expected: Citation | None) -> None:
    assert parse_citation(span) == expected


def test_items_skip_headings_and_conflict_markers() -> None:
    memory = f"# Memory\n\n- Use `fetch_retry`.\n{CONFLICT_START}\n- a\n{CONFLICT_MIDDLE}\n"
    items = parse_items(memory)
    assert [(i.line, i.text) for i in items] == [(3, "- Use `fetch_retry`."), (5, "- a")]
    assert items[0].citations == (Citation(symbol="fetch_retry"),)


def test_stale_citations_name_their_reason() -> None:
    memory = (
        "- Retry with `src/app.py:fetch_retry`.\n"
        "- Config lives in `src/config.py`.\n"
        "- Use `src/app.py:fetch_once`.\n"
        "- Call `load_all_things` at start.\n"
        "- The readme is `README.md`; run `ruff check .`.\n"
    )
    stale = CitationChecker(CODE).stale(parse_items(memory))
    assert [(s.item.line, s.reasons) for s in stale] == [
        (2, ("`src/config.py` is not in the default branch",)),
        (3, ("`fetch_once` is no longer in `src/app.py`",)),
        (4, ("`load_all_things` is in no file of the default branch",)),
    ]


def test_a_symbol_is_a_whole_word() -> None:
    code = Code({"a.py": "def fetch_retry_later(): ...\n"})
    stale = CitationChecker(code).stale(parse_items("- `fetch_retry` retries.\n"))
    assert len(stale) == 1


def test_the_digest_follows_memory_and_the_cited_files_only() -> None:
    memory = "- Retry with `src/app.py:fetch_retry`.\n"
    items = parse_items(memory)
    before = CitationChecker(CODE).digest(memory, items)
    other = Code({**CODE.files, "docs/x.md": "unrelated\n"})
    assert CitationChecker(other).digest(memory, items) == before
    edited = Code({**CODE.files, "src/app.py": "def fetch_retry(url, n):\n    pass\n"})
    assert CitationChecker(edited).digest(memory, items) != before
    assert CitationChecker(CODE).digest(memory + "- more\n", items) != before


def test_near_duplicates_and_conflict_blocks_reach_the_brief() -> None:
    memory = (
        "- Use pytest fixtures rather than setUp methods.\n"
        "- use pytest fixtures rather than setUp method\n"
        "- Releases are cut on Fridays.\n"
        f"{CONFLICT_START}\n- keep A\n{CONFLICT_MIDDLE}\n- keep B\n{CONFLICT_END}\n"
    )
    items = parse_items(memory)
    duplicates = near_duplicates(items).pairs
    assert [(d.first.line, d.second.line) for d in duplicates] == [(1, 2)]
    conflicts = conflict_blocks(memory)
    assert [(c.line, c.ours, c.theirs) for c in conflicts] == [(4, ("- keep A",), ("- keep B",))]
    text = brief(Findings(duplicates=tuple(duplicates), conflicts=tuple(conflicts)))
    assert "lines 1 and 2" in text and '"- keep A"' in text and '"- keep B"' in text
    assert brief(Findings()) == ""
