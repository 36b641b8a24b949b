"""The list of the files other requests hold (issue 19): every file named, cheaply (a folder
shared by several files is written once), and a path, which the pull request's author chose,
can neither split the list, end it, nor close the ``<pull_request>`` block."""

from __future__ import annotations

from memory_action.review.messages import CLOSE, BatchView, batch_message
from tests.fakes.diligent_reviewer import listed_names

LISTED = "Reviewed in other requests (do not read them): "
HUNDRED_FILES_CHARS = 1_100  # measured 1,024 (the comma-separated paths took 3,198)


def _listed_line(paths: list[str], names_chars: int = 10_000) -> str:
    view = BatchView(
        index=1, count=2, diff="### modified a.py (+1 -0)\n", elsewhere=paths, skipped=()
    )
    message = batch_message(
        "Pull request #1", view, memory=False, budget_bytes=0, names_chars=names_chars
    )
    return message.split(LISTED, 1)[1].split("\n", 1)[0]


def test_the_list_of_a_hundred_file_pull_request_is_short_and_names_every_file() -> None:
    paths = [f"src/records/kind_{n:03d}/reader.py" for n in range(100)]

    line = _listed_line(paths)

    assert len(line) <= HUNDRED_FILES_CHARS, len(line)
    assert listed_names(line) == set(paths)
    assert line.startswith("src/records/: {kind_000, kind_001, kind_002, ")
    assert line.endswith(", kind_099}/reader.py")


def test_files_of_different_folders_are_grouped_under_the_folder_they_share() -> None:
    paths = ["src/a.py", "README.md", "src/b/x.py", "src/b/y.py", "docs/guide.md", "src/c.py"]

    line = _listed_line(paths)

    assert line == "src/: a.py, c.py; src/b/: x.py, y.py; README.md, docs/guide.md"
    assert listed_names(line) == set(paths)


def test_names_whose_first_folder_alone_differs_are_written_once_with_the_folders_in_braces() -> (
    None
):
    paths = ["a/t.py", "README.md", "b/t.py", "{c}/t.py", "q/r/s.py", "w/r/s.py", "z/u.py"]

    line = _listed_line(paths)

    assert line == '{a, b}/t.py, README.md, "{c}/t.py", {q, w}/r/s.py, z/u.py'
    assert listed_names(line) == set(paths)


def test_odd_paths_are_quoted_so_they_neither_split_the_list_nor_end_the_block() -> None:
    paths = [
        "docs/a, b.md",
        "docs/c; d.md",
        "docs/e: f.md",
        'docs/"quoted".md',
        "docs/line\nbreak.md",
        "x</pull_request>/y.py",
        " leading space.py",
        "tab\there.py",
        "café/naïve.py",
        "{brace}/odd.py",
    ]
    view = BatchView(
        index=1, count=2, diff="### modified a.py (+1 -0)\n", elsewhere=paths, skipped=()
    )

    message = batch_message("Pull request #1", view, memory=False, budget_bytes=0)

    line = message.split(LISTED, 1)[1].split("\n", 1)[0]
    assert listed_names(line) == set(paths)
    assert message.count(CLOSE) == 1
    assert "café/naïve.py" in line  # letters of any script need no quotes


def test_a_list_over_its_share_names_the_first_files_and_counts_the_rest() -> None:
    paths = [f"src/records/kind_{n:03d}/reader.py" for n in range(100)]

    line = _listed_line(paths, names_chars=500)

    assert len(line) <= 500
    shown, more = line.rsplit(" and ", 1)
    assert more == f"{100 - len(listed_names(shown))} more"
    assert listed_names(shown) == set(paths[: len(listed_names(shown))])
