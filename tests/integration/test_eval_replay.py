"""``memory-agent eval replay EVENTS.jsonl`` through the command line: the documented example
file, replayed by the product's own dismissal rules, and bad files refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_action import cli

EXAMPLE = Path(__file__).parents[1] / "fixtures" / "eval" / "review-events.jsonl"


def replayed(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], str]:
    code = cli.main(["eval", "replay", str(path)])
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err


def test_the_example_history_is_replayed_by_the_products_rules(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, lines, err = replayed(EXAMPLE, capsys)

    assert (code, err) == (0, "")
    assert lines == [
        "line 1: octo/app#1 src/app/fetch.py:12 'Broad except hides failures': posted; "
        "a writer dismissed it: learned",
        # the same kind of finding in the same definition, moved: the writer's 👎 holds it
        "line 2: octo/app#2 src/app/fetch.py:40 'Broad except hides failures': held back "
        "(dismissed on #1, line 1, by a writer)",
        # the same words on other code are another finding; a fix is no dismissal
        "line 3: octo/app#2 src/app/cache.py:8 'Broad except hides failures': posted",
        "line 4: octo/app#2 src/app/fetch.py:36 'Retry loop has no upper bound': posted; "
        "dismissed by people who cannot write: not learned",
        # a non-writer's "intended" counts for nothing, so the finding comes back
        "line 5: octo/app#3 src/app/fetch.py:52 'Retry loop has no upper bound': posted; "
        "RAISED AGAIN after a dismissal (dismissed on #2, line 4, by someone who cannot write)",
        "line 6: octo/app#3 src/app/report.py:5 'Magic number in the report width': posted; "
        "a writer dismissed it: learned",
        "line 7: octo/app#4 src/app/report.py:9 'Magic number in the report width': held back "
        "(dismissed on #3, line 6, by a writer)",
        # memory is the repository's own
        "line 8: octo/lib#1 src/app/fetch.py:12 'Broad except hides failures': posted",
        "line 9: octo/lib#1 src/app/fetch.py:12 'Broad except hides failures': already posted "
        "on this pull request (the ledger)",
        # a thread resolved with the code unchanged dismisses it there, and teaches nothing
        "line 10: octo/lib#1 src/lib/parse.py:21 'Unchecked None from find': posted; "
        "resolved with no change: not learned",
        "line 11: octo/lib#2 src/lib/parse.py:30 'Unchecked None from find': posted; "
        "RAISED AGAIN after a dismissal (dismissed on #1, line 10, resolved with no change)",
        "11 events: 8 posted, 2 held back, 1 already posted on their pull request; "
        "raised again after a dismissal: 2",
    ]


def event(**changes: object) -> dict[str, object]:
    found: dict[str, object] = json.loads(EXAMPLE.read_text().splitlines()[0])
    found.update(changes)
    return found


def write(tmp_path: Path, *documents: object, raw: str = "") -> Path:
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in documents) + raw)
    return path


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ({"line": 0}, "line 2: field 'line': Input should be greater than or equal to 1"),
        ({"reactions": [{"login": "mona", "content": "-1"}]}, "field 'reactions.0.writer'"),
        ({"reactions": [{"login": "mona", "content": "-1", "writer": "yes"}]}, "valid boolean"),
        ({"replies": [{"login": "<b>", "body": "x", "writer": True}]}, "'replies.0.login'"),
        ({"title": "two\nlines"}, "field 'title': a title is one line of text"),
        ({"line": 2}, "field 'context': 3 lines of context and the code cannot end at line 2"),
        ({"code": "a\nb", "line": 1, "context": ""}, "field 'code': 2 lines of code cannot"),
        ({"repository": "octo"}, "field 'repository'"),
        ({"pull": 3}, "field 'pull': Extra inputs are not permitted"),
    ],
)
def test_a_bad_event_is_one_line_naming_its_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: dict[str, object], said: str
) -> None:
    code, lines, err = replayed(write(tmp_path, event(), event(**bad)), capsys)

    assert (code, lines) == (2, [])  # nothing is replayed from a bad file
    [line] = err.splitlines()
    assert line.startswith("memory-agent eval replay: ")
    assert " line 2: " in line
    assert said in line


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ("{not json\n", "line 2: not JSON"),
        ("[" * 5000 + "]" * 5000 + "\n", "line 2: not JSON (JSON nested deeper than"),
        ("[1, 2]\n", "line 2: the line: Input should be a valid dictionary"),
    ],
)
def test_a_line_that_is_no_json_object_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], raw: str, said: str
) -> None:
    code, _lines, err = replayed(write(tmp_path, event(), raw=raw), capsys)

    [line] = err.splitlines()
    assert code == 2
    assert said in line


def test_a_missing_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _lines, err = replayed(tmp_path / "none.jsonl", capsys)

    [line] = err.splitlines()
    assert code == 2
    assert "none.jsonl: cannot be read" in line
