"""What a restored entry may hold: its state file (validated, never trusted), the files kept by
``sanitize_folder``, and AGENTS.md as text."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from memory_action.errors import MemoryFileError
from memory_action.memory.state import (
    MAX_PARENTS,
    MAX_STATE_BYTES,
    MEMORY_FILE,
    PROVENANCE_FILE,
    STATE_DIR,
    STATE_FILE,
    STATE_FORMAT,
    EntryState,
    load_state,
    read_memory,
    sanitize_folder,
    write_memory,
)

GOOD: dict[str, Any] = {
    "format": STATE_FORMAT,
    "layer": "committed",
    "base": "# Memory\n\n- one fact\n",
    "parents": ["memory-agent/v1/memory-agent/repo/committed/1-1"],
}


def write_state(folder: Path, content: str | bytes) -> Path:
    path = folder / STATE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def state_with(**changes: Any) -> str:
    document = {**GOOD, **changes}
    return json.dumps({k: v for k, v in document.items() if v is not _MISSING})


_MISSING = object()


# --- EntryState ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "state",
    [
        EntryState(layer="committed", base="", parents=()),
        EntryState(layer="overlay", base="# Memory\n\n- fact\n", parents=("a/1-1", "a/2-1")),
        EntryState(
            layer="committed", base='ünïcödé — “quotes” \\ "\n\tand tabs\r\n', parents=("k",)
        ),
        EntryState(
            layer="committed", base="x", parents=tuple(f"k/{n}-1" for n in range(MAX_PARENTS))
        ),
    ],
)
def test_an_entry_state_survives_a_json_round_trip(tmp_path: Path, state: EntryState) -> None:
    state.dump(tmp_path)

    assert load_state(tmp_path) == state
    document = json.loads((tmp_path / STATE_FILE).read_text(encoding="utf-8"))
    assert document == {
        "format": STATE_FORMAT,
        "layer": state.layer,
        "base": state.base,
        "parents": list(state.parents),
    }
    assert not list((tmp_path / STATE_DIR).glob("*.tmp"))  # written via a temporary file


def test_dump_replaces_an_older_state(tmp_path: Path) -> None:
    EntryState(layer="committed", base="old").dump(tmp_path)
    EntryState(layer="overlay", base="new", parents=("p",)).dump(tmp_path)

    assert load_state(tmp_path) == EntryState(layer="overlay", base="new", parents=("p",))


def test_to_json_is_stable_text() -> None:
    state = EntryState(layer="overlay", base="b\n", parents=("p1", "p2"))

    assert state.to_json() == state.to_json()
    assert state.to_json().endswith("\n")
    assert json.loads(state.to_json())["parents"] == ["p1", "p2"]


# --- load_state refuses what is not ours --------------------------------------------------------


def test_a_valid_state_file_is_loaded(tmp_path: Path) -> None:
    write_state(tmp_path, state_with())

    assert load_state(tmp_path) == EntryState(
        layer="committed", base=GOOD["base"], parents=tuple(GOOD["parents"])
    )


def test_a_missing_state_is_none(tmp_path: Path) -> None:
    assert load_state(tmp_path) is None
    assert load_state(tmp_path / "no-such-folder") is None


def test_a_symlinked_state_file_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(state_with(), encoding="utf-8")
    folder = tmp_path / "entry"
    (folder / STATE_DIR).mkdir(parents=True)
    (folder / STATE_FILE).symlink_to(elsewhere)

    assert load_state(folder) is None


def test_a_state_folder_or_fifo_instead_of_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / STATE_FILE).mkdir(parents=True)
    assert load_state(tmp_path) is None

    other = tmp_path / "fifo"
    (other / STATE_DIR).mkdir(parents=True)
    os.mkfifo(other / STATE_FILE)
    assert load_state(other) is None  # and does not block on it


def test_an_oversized_state_file_is_refused(tmp_path: Path) -> None:
    padding = MAX_STATE_BYTES  # the base alone is over the limit
    write_state(tmp_path, state_with(base="x" * padding))

    assert (tmp_path / STATE_FILE).stat().st_size > MAX_STATE_BYTES
    assert load_state(tmp_path) is None


def test_a_state_file_just_within_the_limit_is_read(tmp_path: Path) -> None:
    overhead = len(state_with(base="").encode())
    write_state(tmp_path, state_with(base="x" * (MAX_STATE_BYTES - overhead)))

    assert (tmp_path / STATE_FILE).stat().st_size == MAX_STATE_BYTES
    state = load_state(tmp_path)
    assert state is not None
    assert len(state.base) == MAX_STATE_BYTES - overhead


@pytest.mark.parametrize("value", [0, 2, -1, STATE_FORMAT + 1, "1", None, [1], {"v": 1}])
def test_a_wrong_format_number_is_refused(tmp_path: Path, value: object) -> None:
    write_state(tmp_path, state_with(format=value))

    assert load_state(tmp_path) is None


def test_a_missing_format_is_refused(tmp_path: Path) -> None:
    write_state(tmp_path, state_with(format=_MISSING))

    assert load_state(tmp_path) is None


@pytest.mark.parametrize(
    "changes",
    [
        {"layer": "main"},
        {"layer": "Committed"},
        {"layer": None},
        {"layer": 1},
        {"layer": _MISSING},
        {"base": None},
        {"base": 7},
        {"base": ["# Memory"]},
        {"base": _MISSING},
        {"parents": None},
        {"parents": "memory-agent/v1/x/1-1"},
        {"parents": {"k": 1}},
        {"parents": [1]},
        {"parents": [None]},
        {"parents": [["k"]]},
        {"parents": ["k" * 513]},
        {"parents": _MISSING},
    ],
    ids=repr,
)
def test_wrong_types_are_refused(tmp_path: Path, changes: dict[str, Any]) -> None:
    write_state(tmp_path, state_with(**changes))

    assert load_state(tmp_path) is None


@pytest.mark.parametrize(
    "changes",
    [
        {"base": "half a surrogate \ud800"},
        {"parents": ["memory-agent/v1/memory-agent/repo/committed/\udfff"]},
    ],
    ids=["base", "parent"],
)
def test_text_that_cannot_be_written_back_as_utf8_is_refused(
    tmp_path: Path, changes: dict[str, Any]
) -> None:
    """JSON escapes can spell a lone surrogate; a state holding one could never be saved again
    (``EntryState.dump`` would raise UnicodeEncodeError in the saving run)."""
    write_state(tmp_path, state_with(**changes))

    assert load_state(tmp_path) is None


def test_a_parent_of_512_characters_is_accepted(tmp_path: Path) -> None:
    write_state(tmp_path, state_with(parents=["k" * 512]))

    state = load_state(tmp_path)
    assert state is not None
    assert state.parents == ("k" * 512,)


def test_too_many_parents_are_refused(tmp_path: Path) -> None:
    write_state(tmp_path, state_with(parents=[f"k/{n}-1" for n in range(MAX_PARENTS + 1)]))
    assert load_state(tmp_path) is None

    write_state(tmp_path, state_with(parents=[f"k/{n}-1" for n in range(MAX_PARENTS)]))
    state = load_state(tmp_path)
    assert state is not None
    assert len(state.parents) == MAX_PARENTS


def test_unknown_extra_fields_are_ignored(tmp_path: Path) -> None:
    write_state(tmp_path, state_with(comment="written by a newer minor version"))

    assert load_state(tmp_path) is not None


@pytest.mark.parametrize(
    "content",
    [
        "",
        "{",
        "not json at all",
        '{"format": 1, "layer": "committed", "base": "", "parents": [],}',
        "[]",
        "null",
        "1",
        '"a string"',
        "NaN",
        "[" * 100_000 + "]" * 100_000,  # deeper than the parser's recursion limit
        '{"a":' * 50_000 + "1" + "}" * 50_000,
        b"\xff\xfe{}",  # not UTF-8
        b'{"format": 1, "layer": "committed", "base": "\xc3\x28", "parents": []}',
    ],
    ids=lambda value: repr(value[:24]),
)
def test_bad_json_is_none_and_never_raises(tmp_path: Path, content: str | bytes) -> None:
    write_state(tmp_path, content)

    assert load_state(tmp_path) is None


# --- sanitize_folder ----------------------------------------------------------------------------


def make_entry(folder: Path) -> None:
    write_memory(folder, "# Memory\n")
    (folder / PROVENANCE_FILE).write_text('{"version": 1, "entries": {}}\n', encoding="utf-8")
    EntryState(layer="committed", base="").dump(folder)


def tree(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def test_a_clean_entry_is_left_alone(tmp_path: Path) -> None:
    make_entry(tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}

    assert sanitize_folder(tmp_path) == []
    assert tree(tmp_path) == [STATE_DIR, STATE_FILE, MEMORY_FILE, PROVENANCE_FILE]
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_everything_but_the_expected_files_is_removed(tmp_path: Path) -> None:
    make_entry(tmp_path)
    (tmp_path / "notes.md").write_text("planted\n")
    (tmp_path / ".hidden").write_text("planted\n")
    (tmp_path / "agents.md").write_text("wrong case\n")
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "sub" / "AGENTS.md").write_text("not at the top\n")
    (tmp_path / "sub" / "deeper" / "state.json").write_text("{}\n")
    (tmp_path / "empty-folder").mkdir()
    (tmp_path / STATE_DIR / "other.json").write_text("{}\n")
    (tmp_path / STATE_DIR / "nested").mkdir()
    (tmp_path / STATE_DIR / "nested" / "state.json").write_text("{}\n")
    (tmp_path / "state.json").write_text("{}\n")  # at the wrong level
    os.mkfifo(tmp_path / "pipe")
    os.mkfifo(tmp_path / STATE_DIR / "pipe")

    removed = sanitize_folder(tmp_path)

    assert tree(tmp_path) == [STATE_DIR, STATE_FILE, MEMORY_FILE, PROVENANCE_FILE]
    assert sorted(removed) == sorted(
        [
            "notes.md",
            ".hidden",
            "agents.md",
            "sub/AGENTS.md",
            "sub/deeper/state.json",
            "sub/deeper/",
            "sub/",
            "empty-folder/",
            f"{STATE_DIR}/other.json",
            f"{STATE_DIR}/nested/state.json",
            f"{STATE_DIR}/nested/",
            "state.json",
            "pipe",
            f"{STATE_DIR}/pipe",
        ]
    )
    assert (tmp_path / MEMORY_FILE).read_text() == "# Memory\n"


def test_an_expected_name_that_is_a_folder_or_fifo_is_removed(tmp_path: Path) -> None:
    (tmp_path / MEMORY_FILE).mkdir()
    (tmp_path / MEMORY_FILE / "inside.md").write_text("x\n")
    os.mkfifo(tmp_path / PROVENANCE_FILE)
    (tmp_path / STATE_FILE).mkdir(parents=True)

    removed = sanitize_folder(tmp_path)

    assert tree(tmp_path) == [STATE_DIR]
    assert sorted(removed) == sorted(
        [f"{MEMORY_FILE}/inside.md", f"{MEMORY_FILE}/", PROVENANCE_FILE, f"{STATE_FILE}/"]
    )
    assert read_memory(tmp_path, "the entry") == ""
    assert load_state(tmp_path) is None


def test_links_are_removed_and_nothing_outside_the_folder_is_touched(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "dir" / "sub").mkdir(parents=True)
    (outside / "dir" / "secret.txt").write_text("outside file\n")
    (outside / "dir" / "sub" / "deep.txt").write_text("outside deep file\n")
    (outside / "dir" / "state.json").write_text("{}\n")
    (outside / "file.md").write_text("outside memory\n")
    os.mkfifo(outside / "fifo")
    before = {p: (p.is_file() and p.read_bytes()) for p in outside.rglob("*") if not p.is_fifo()}
    entry = tmp_path / "entry"
    entry.mkdir()
    make_entry(entry)
    # Links under names we keep, and under names we do not, to files, folders and nothing.
    (entry / MEMORY_FILE).unlink()
    (entry / MEMORY_FILE).symlink_to(outside / "file.md")
    (entry / PROVENANCE_FILE).unlink()
    (entry / PROVENANCE_FILE).symlink_to(tmp_path / "does-not-exist.json")
    (entry / "linked-dir").symlink_to(outside / "dir", target_is_directory=True)
    (entry / "linked-file").symlink_to(outside / "file.md")
    (entry / "relative-link").symlink_to(Path("..") / "outside" / "dir")
    (entry / "dangling").symlink_to(tmp_path / "nowhere")
    (entry / "linked-fifo").symlink_to(outside / "fifo")
    (entry / STATE_DIR / "up").symlink_to(Path("..") / "..", target_is_directory=True)
    (entry / "self").symlink_to(entry, target_is_directory=True)

    removed = sanitize_folder(entry)

    assert tree(entry) == [STATE_DIR, STATE_FILE]
    assert sorted(removed) == sorted(
        [
            MEMORY_FILE,
            PROVENANCE_FILE,
            "linked-dir",
            "linked-file",
            "relative-link",
            "dangling",
            "linked-fifo",
            f"{STATE_DIR}/up",
            "self",
        ]
    )
    after = {p: (p.is_file() and p.read_bytes()) for p in outside.rglob("*") if not p.is_fifo()}
    assert after == before
    assert (outside / "fifo").is_fifo()
    assert tree(tmp_path) == sorted(
        ["entry", *(f"entry/{p}" for p in tree(entry)), "outside", *_prefixed(outside)]
    )


def _prefixed(folder: Path) -> list[str]:
    return [f"outside/{p}" for p in tree(folder)]


def test_a_state_folder_that_is_a_link_is_removed_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_state(outside, state_with())
    (outside / "planted.txt").write_text("x\n")
    entry = tmp_path / "entry"
    entry.mkdir()
    write_memory(entry, "# Memory\n")
    (entry / STATE_DIR).symlink_to(outside / STATE_DIR, target_is_directory=True)

    assert sanitize_folder(entry) == [STATE_DIR]

    assert tree(entry) == [MEMORY_FILE]
    assert load_state(outside) is not None  # the target is untouched
    assert (outside / "planted.txt").exists()


def test_sanitizing_a_missing_folder_or_a_file_does_nothing(tmp_path: Path) -> None:
    assert sanitize_folder(tmp_path / "missing") == []
    (tmp_path / "file").write_text("x")
    assert sanitize_folder(tmp_path / "file") == []
    assert (tmp_path / "file").read_text() == "x"


# --- read_memory --------------------------------------------------------------------------------


def test_missing_memory_reads_as_empty(tmp_path: Path) -> None:
    assert read_memory(tmp_path, "the entry") == ""
    assert read_memory(tmp_path / "no-such-folder", "the entry") == ""


def test_memory_line_ends_and_a_bom_are_normalised(tmp_path: Path) -> None:
    (tmp_path / MEMORY_FILE).write_bytes(b"\xef\xbb\xbf# Memory\r\n\r\n- crlf\r\n- cr\r- lf\n")

    assert read_memory(tmp_path, "the entry") == "# Memory\n\n- crlf\n- cr\n- lf\n"


def test_memory_keeps_unicode_text(tmp_path: Path) -> None:
    (tmp_path / MEMORY_FILE).write_text("- Ünïcødé, “quotes” and emoji 🧠\n", encoding="utf-8")

    assert read_memory(tmp_path, "the entry") == "- Ünïcødé, “quotes” and emoji 🧠\n"


@pytest.mark.parametrize(
    "data", [b"\xff\xfe not text", b"# Memory\n- caf\xe9\n", b"\xc3\x28", b"\xed\xa0\x80"]
)
def test_memory_that_is_not_utf8_is_an_error_naming_where_it_came_from(
    tmp_path: Path, data: bytes
) -> None:
    (tmp_path / MEMORY_FILE).write_bytes(data)
    where = "the cache entry memory-agent/v1/memory-agent/repo/committed/7-1"

    with pytest.raises(MemoryFileError) as caught:
        read_memory(tmp_path, where)

    assert where in str(caught.value)
    assert "UTF-8" in str(caught.value)
    assert caught.value.exit_code == 4


def test_memory_behind_a_link_or_a_folder_reads_as_empty(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("- from outside\n")
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / MEMORY_FILE).symlink_to(outside)
    folder = tmp_path / "folder"
    (folder / MEMORY_FILE).mkdir(parents=True)

    assert read_memory(linked, "the entry") == ""
    assert read_memory(folder, "the entry") == ""


def test_write_memory_then_read_memory_round_trips(tmp_path: Path) -> None:
    write_memory(tmp_path / "new", "# Memory\n\n- fact\n")

    assert read_memory(tmp_path / "new", "the entry") == "# Memory\n\n- fact\n"
    assert tree(tmp_path / "new") == [MEMORY_FILE]
