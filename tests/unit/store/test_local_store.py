"""The local directory store behaves like the Actions cache: matching, immutability, key rules."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory_action.store import local
from memory_action.store.base import RestoreKeys, RestoreResult, SaveResult
from memory_action.store.local import LocalDirectoryStore, StoredEntry, default_store_dir

T0 = 1_700_000_000.0


class Clock:
    """A settable clock: every save made without moving it happens in the same second."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def write_tree(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for relative, text in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def read_tree(folder: Path) -> dict[str, str]:
    return {
        path.relative_to(folder).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def memory_of(key: str) -> dict[str, str]:
    return {"AGENTS.md": f"# memory of {key}\n", "notes/conventions.md": f"- from {key}\n"}


@dataclass
class Harness:
    tmp_path: Path
    clock: Clock = field(default_factory=Clock)
    sources: int = 0

    def __post_init__(self) -> None:
        self.store = LocalDirectoryStore(self.tmp_path / "store", clock=self.clock)
        self.target = self.tmp_path / "work" / ".agent-memory"

    def save(self, key: str, files: dict[str, str] | None = None) -> SaveResult:
        self.sources += 1
        source = write_tree(self.tmp_path / f"source-{self.sources}", files or memory_of(key))
        return self.store.save(key, source)

    def restore(self, primary: str, *restore: str) -> RestoreResult:
        return self.store.restore(RestoreKeys(primary=primary, restore=tuple(restore)), self.target)

    def entry_dir(self, key: str) -> Path:
        return self.store.root / hashlib.sha256(key.encode()).hexdigest()


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    return Harness(tmp_path)


# -- matching ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class MatchCase:
    saved: tuple[str, ...]  # saved in this order; one clock second unless `times` says otherwise
    primary: str
    restore: tuple[str, ...]
    expected: str | None
    times: tuple[float, ...] = ()


MATCH_CASES = {
    "exact hit beats a newer prefix match": MatchCase(("a-1", "a-10"), "a-1", (), "a-1"),
    "prefix hit: newest of the same second by sequence": MatchCase(
        ("m/pr-1/run-1", "m/pr-1/run-3", "m/pr-1/run-2"), "m/pr-1/", (), "m/pr-1/run-2"
    ),
    "prefix hit: newest created wins over a later sequence": MatchCase(
        ("k-new", "k-old"), "k-", (), "k-new", times=(T0 + 60, T0)
    ),
    "primary prefix beats an exact restore key": MatchCase(
        ("pr-1", "base"), "pr-", ("base",), "pr-1"
    ),
    "restore keys in order: the first that matches wins": MatchCase(
        ("base-1", "repo-1"), "pr-", ("base-", "repo-"), "base-1"
    ),
    "restore key: exact before its own prefix": MatchCase(("r", "r-newer"), "missing", ("r",), "r"),
    "restore key prefix: newest": MatchCase(("r-1", "r-2", "other"), "missing", ("r-",), "r-2"),
    "keys with slash and percent": MatchCase(
        ("memory/v1/o%2Fr/pr/7/run-1", "memory/v1/o%2Fr/pr/7/run-2"),
        "memory/v1/o%2Fr/pr/7/",
        (),
        "memory/v1/o%2Fr/pr/7/run-2",
    ),
    "no fallback outside the given prefixes": MatchCase(
        ("agent-b/repo-1",), "agent-a/pr-", ("agent-a/repo-",), None
    ),
    "empty store": MatchCase((), "k", ("k-",), None),
}


@pytest.mark.parametrize("case", MATCH_CASES.values(), ids=MATCH_CASES.keys())
def test_restore_matches_like_the_cache(harness: Harness, case: MatchCase) -> None:
    for index, key in enumerate(case.saved):
        harness.clock.now = case.times[index] if case.times else T0
        assert harness.save(key).saved

    result = harness.restore(case.primary, *case.restore)

    assert result.hit is (case.expected is not None)
    assert result.matched_key == case.expected
    assert result.warning is None
    expected_files = memory_of(case.expected) if case.expected else {}
    assert read_tree(harness.target) == expected_files
    assert harness.target.is_dir()


@pytest.mark.parametrize(
    "before",
    [None, {}, {"AGENTS.md": "stale\n", "old/deep/file.md": "stale\n"}],
    ids=["target missing", "target empty", "target with stale files"],
)
def test_miss_leaves_an_empty_existing_folder(
    harness: Harness, before: dict[str, str] | None
) -> None:
    harness.save("other-1")
    if before is not None:
        write_tree(harness.target, before)

    result = harness.restore("wanted-", "also-wanted-")

    assert result == RestoreResult.miss()
    assert harness.target.is_dir()
    assert list(harness.target.iterdir()) == []


def test_hit_replaces_stale_files_and_keeps_no_staging(harness: Harness) -> None:
    harness.save("k-1")
    write_tree(harness.target, {"stale.md": "old\n", "notes/stale.md": "old\n"})
    (harness.target / "link").symlink_to(harness.tmp_path)

    result = harness.restore("k-")

    assert result.hit
    assert read_tree(harness.target) == memory_of("k-1")
    assert not (harness.target / "link").is_symlink()
    assert sorted(p.name for p in harness.target.parent.iterdir()) == [".agent-memory"]


def test_restore_from_a_store_that_does_not_exist_yet(harness: Harness) -> None:
    result = harness.restore("k")

    assert result == RestoreResult.miss()
    assert harness.target.is_dir()
    assert harness.store.entries() == []


# -- immutability and key rules ---------------------------------------------------------------


def test_an_entry_is_immutable(harness: Harness) -> None:
    first = harness.save("k", {"AGENTS.md": "first\n"})
    harness.clock.now = T0 + 10
    second = harness.save("k", {"AGENTS.md": "second\n"})

    assert first == SaveResult(saved=True, key="k", reason="", size_bytes=len("first\n"))
    assert not second.saved
    assert second.reason.startswith("already exists")
    assert harness.store.read_entry("k") == {"AGENTS.md": "first\n"}
    assert [entry.created for entry in harness.store.entries()] == [
        datetime.fromtimestamp(T0, tz=UTC)
    ]


BAD_KEYS = {
    "empty": ("", "empty"),
    "513 characters": ("k" * 513, "513 characters"),
    "comma": ("a,b", "comma"),
}


@pytest.mark.parametrize(("key", "words"), BAD_KEYS.values(), ids=BAD_KEYS.keys())
def test_a_bad_key_is_refused_without_an_exception(harness: Harness, key: str, words: str) -> None:
    saved = harness.save(key)
    write_tree(harness.target, {"stale.md": "old\n"})
    restored = harness.restore("ok", key)

    assert not saved.saved
    assert words in saved.reason
    assert not restored.hit
    assert restored.warning is not None
    assert words in restored.warning
    assert list(harness.target.iterdir()) == []
    assert not harness.store.root.exists()


@pytest.mark.parametrize(("count", "hit"), [(10, True), (11, False)], ids=["10 keys", "11 keys"])
def test_at_most_ten_keys_in_a_restore(harness: Harness, count: int, hit: bool) -> None:
    harness.save("last-1")
    keys = [f"miss-{index}-" for index in range(count - 1)] + ["last-"]

    result = harness.restore(*keys)

    assert result.hit is hit
    assert (result.warning is None) is hit
    if not hit:
        assert "at most 10" in (result.warning or "")


def test_a_512_character_key_is_accepted(harness: Harness) -> None:
    key = "k" * 512

    assert harness.save(key).saved
    assert harness.restore(key).matched_key == key


# -- concurrency ------------------------------------------------------------------------------


def test_concurrent_saves_of_one_key_have_exactly_one_winner(harness: Harness) -> None:
    contenders = 8
    sources = [
        write_tree(harness.tmp_path / f"contender-{n}", {"AGENTS.md": f"contender {n}\n"})
        for n in range(contenders)
    ]
    barrier = threading.Barrier(contenders)
    results: list[SaveResult] = [SaveResult(saved=False, key="")] * contenders

    def contend(n: int) -> None:
        barrier.wait()
        results[n] = harness.store.save("race", sources[n])

    threads = [threading.Thread(target=contend, args=(n,)) for n in range(contenders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    winners = [n for n, result in enumerate(results) if result.saved]
    assert len(winners) == 1
    assert all(r.reason.startswith("already exists") for r in results if not r.saved)
    assert harness.store.read_entry("race") == {"AGENTS.md": f"contender {winners[0]}\n"}
    assert sorted(p.name for p in harness.store.root.iterdir() if p.name.startswith(".tmp")) == []


def test_concurrent_saves_of_different_keys_get_distinct_sequences(harness: Harness) -> None:
    keys = [f"k-{n}" for n in range(8)]
    source = write_tree(harness.tmp_path / "shared-source", {"AGENTS.md": "x\n"})
    barrier = threading.Barrier(len(keys))

    def save(key: str) -> None:
        barrier.wait()
        assert harness.store.save(key, source).saved

    threads = [threading.Thread(target=save, args=(key,)) for key in keys]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    sequences = [
        json.loads((harness.entry_dir(key) / "entry.json").read_text())["sequence"] for key in keys
    ]
    assert sorted(sequences) == list(range(1, len(keys) + 1))


def test_a_lost_sequence_counter_continues_after_the_newest_entry(harness: Harness) -> None:
    harness.save("k-1")
    harness.save("k-2")
    (harness.store.root / ".sequence").unlink()

    harness.save("k-3")

    assert harness.restore("k-").matched_key == "k-3"


# -- corrupt entries --------------------------------------------------------------------------


def break_entry_json(entry: Path, text: str | None) -> None:
    if text is None:
        (entry / "entry.json").unlink()
    else:
        (entry / "entry.json").write_text(text)


CORRUPT_ENTRY_JSON = {
    "missing entry.json": (None, "missing"),
    "bad JSON": ("{not json", "not valid JSON"),
    "not an object": ("[1, 2]", "not a JSON object"),
    "nested 20,000 deep": ('{"key": ' + "[" * 20_000 + "]" * 20_000 + "}", "deeper than 200"),
    "key of another folder": (
        json.dumps({"format": 1, "key": "elsewhere", "created": T0, "sequence": 9,
                    "size": 0, "files": []}),
        "another name",
    ),
    "unsafe path": (
        json.dumps({"format": 1, "key": "k-2", "created": T0, "sequence": 9, "size": 1,
                    "files": [{"path": "../x", "size": 1, "sha256": "0" * 64}]}),
        "unsafe file path",
    ),
}  # fmt: skip


@pytest.mark.parametrize(
    ("text", "words"), CORRUPT_ENTRY_JSON.values(), ids=CORRUPT_ENTRY_JSON.keys()
)
def test_a_corrupt_entry_is_skipped_and_the_restore_hits_with_a_note(
    harness: Harness, text: str | None, words: str
) -> None:
    harness.save("k-1")
    harness.save("k-2")  # newer: would win if it were readable
    break_entry_json(harness.entry_dir("k-2"), text)

    result = harness.restore("k-")

    # Restored, with a note: not a failed restore (that would refuse every later save).
    assert result.hit
    assert not result.failed
    assert result.matched_key == "k-1"
    assert result.note is not None
    assert "corrupt" in result.note
    assert words in result.note
    assert read_tree(harness.target) == memory_of("k-1")
    assert [entry.key for entry in harness.store.entries()] == ["k-1"]
    with pytest.raises(KeyError, match="no usable entry"):
        harness.store.read_entry("k-2")


def test_a_corrupt_entry_alone_is_a_miss_with_a_note_not_a_failed_restore(
    harness: Harness,
) -> None:
    harness.save("k-1")
    break_entry_json(harness.entry_dir("k-1"), "{not json")

    result = harness.restore("k-")

    assert (result.hit, result.failed) == (False, False)
    assert "corrupt" in (result.note or "")


def test_a_restore_that_hit_cannot_carry_a_failure() -> None:
    with pytest.raises(ValueError, match="say it in the note"):
        RestoreResult(hit=True, matched_key="k-1", warning="trouble")


def delete_a_file(files: Path) -> None:
    (files / "notes" / "conventions.md").unlink()


def change_a_file(files: Path) -> None:
    (files / "notes" / "conventions.md").write_text("- tampered\n")


def swap_a_file_for_a_link(files: Path) -> None:
    (files / "notes" / "conventions.md").unlink()
    (files / "notes" / "conventions.md").symlink_to(files / "AGENTS.md")


def remove_the_files_folder(files: Path) -> None:
    for path in sorted(files.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    files.rmdir()


DAMAGE = {
    "a stored file deleted": delete_a_file,
    "a stored file changed": change_a_file,
    "a stored file replaced by a symlink": swap_a_file_for_a_link,
    "files folder removed": remove_the_files_folder,
}


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=DAMAGE.keys())
def test_a_damaged_match_restores_nothing_never_half(harness: Harness, damage: object) -> None:
    assert callable(damage)
    harness.save("k-1")
    damage(harness.entry_dir("k-1") / "files")
    write_tree(harness.target, {"stale.md": "old\n"})

    result = harness.restore("k-")

    assert not result.hit
    assert result.warning is not None
    assert "the memory entry k-1 in the local store" in result.warning
    assert result.unusable == "k-1"  # an older entry may still be good
    assert harness.target.is_dir()
    assert list(harness.target.iterdir()) == []
    assert sorted(p.name for p in harness.target.parent.iterdir()) == [".agent-memory"]


def test_a_failure_midway_through_the_copy_restores_nothing(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness.save("k-1")
    write_tree(harness.target, {"stale.md": "old\n"})
    real_read = local._read_recorded
    calls: list[str] = []

    def fail_on_second(files: Path, record: local._FileRecord) -> bytes:
        calls.append(record.path)
        if len(calls) == 2:
            raise OSError("disk full")
        return real_read(files, record)

    monkeypatch.setattr(local, "_read_recorded", fail_on_second)

    result = harness.restore("k-1")

    assert len(calls) == 2
    assert not result.hit
    assert "disk full" in (result.warning or "")
    assert list(harness.target.iterdir()) == []
    assert sorted(p.name for p in harness.target.parent.iterdir()) == [".agent-memory"]


# -- what is stored ---------------------------------------------------------------------------


def test_symlinks_and_special_files_are_not_stored(harness: Harness) -> None:
    outside = write_tree(harness.tmp_path / "outside", {"secret.txt": "token\n"})
    source = write_tree(harness.tmp_path / "memory", {"AGENTS.md": "# m\n", "notes/a.md": "a\n"})
    (source / "link.md").symlink_to(source / "AGENTS.md")
    (source / "leak.txt").symlink_to(outside / "secret.txt")
    (source / "notes" / "outside").symlink_to(outside, target_is_directory=True)
    if hasattr(os, "mkfifo"):
        os.mkfifo(source / "pipe")

    result = harness.store.save("k", source)

    assert result.saved
    for skipped in ("link.md", "leak.txt", "notes/outside"):
        assert skipped in result.reason
    if hasattr(os, "mkfifo"):
        assert "pipe (not a regular file)" in result.reason
    assert harness.store.entries()[0].files == ("AGENTS.md", "notes/a.md")
    assert result.size_bytes == len("# m\n") + len("a\n")
    assert harness.restore("k").hit
    assert read_tree(harness.target) == {"AGENTS.md": "# m\n", "notes/a.md": "a\n"}
    assert not any(path.is_symlink() for path in harness.target.rglob("*"))
    assert not any(path.is_symlink() for path in harness.store.root.rglob("*"))


@pytest.mark.parametrize("kind", ["missing", "file", "symlink"])
def test_saving_something_that_is_not_a_folder_is_refused(harness: Harness, kind: str) -> None:
    path = harness.tmp_path / "memory"
    if kind == "file":
        path.write_text("x")
    elif kind == "symlink":
        path.symlink_to(write_tree(harness.tmp_path / "real", {"AGENTS.md": "x\n"}))

    result = harness.store.save("k", path)

    assert not result.saved
    assert "not a folder" in result.reason
    assert harness.store.entries() == []


def test_an_empty_folder_is_saved_as_an_empty_entry(harness: Harness) -> None:
    (harness.tmp_path / "empty").mkdir()

    result = harness.store.save("k", harness.tmp_path / "empty")

    assert result == SaveResult(saved=True, key="k", reason="", size_bytes=0)
    assert harness.store.read_entry("k") == {}


def test_layout_one_folder_per_key_named_by_its_sha256(harness: Harness) -> None:
    key = "memory/v1/o%2Fr/repo/run-1-1"
    harness.clock.now = T0 + 0.5

    harness.save(key)

    entry = harness.entry_dir(key)
    assert sorted(p.name for p in entry.iterdir()) == ["entry.json", "files"]
    document = json.loads((entry / "entry.json").read_text(encoding="utf-8"))
    files = memory_of(key)
    assert document == {
        "format": 1,
        "key": key,
        "created": T0 + 0.5,
        "sequence": 1,
        "size": sum(len(text) for text in files.values()),
        "files": [
            {"path": path, "size": len(text), "sha256": hashlib.sha256(text.encode()).hexdigest()}
            for path, text in sorted(files.items())
        ],
    }
    assert read_tree(entry / "files") == files


# -- helpers for the CLI ----------------------------------------------------------------------


def test_entries_newest_first_with_prefix_and_read_entry(harness: Harness) -> None:
    for offset, key in [(0, "a/run-1"), (5, "a/run-2"), (5, "a/run-3"), (1, "b/run-1")]:
        harness.clock.now = T0 + offset
        harness.save(key, {"AGENTS.md": f"{key}\n"})

    listed = harness.store.entries("a/")

    assert listed == [
        StoredEntry(
            key=key,
            created=datetime.fromtimestamp(T0 + offset, tz=UTC),
            size=len(f"{key}\n"),
            files=("AGENTS.md",),
        )
        for offset, key in [(5, "a/run-3"), (5, "a/run-2"), (0, "a/run-1")]
    ]
    assert [entry.key for entry in harness.store.entries()] == [
        "a/run-3",
        "a/run-2",
        "b/run-1",
        "a/run-1",
    ]
    assert harness.store.read_entry("b/run-1") == {"AGENTS.md": "b/run-1\n"}
    with pytest.raises(KeyError, match="no entry"):
        harness.store.read_entry("b/run-")


def test_name_says_where_the_store_is(tmp_path: Path) -> None:
    assert LocalDirectoryStore(tmp_path / "s").name == f"local store at {tmp_path / 's'}"


DEFAULT_DIRS = {
    "explicit": (
        {"MEMORY_AGENT_STORE_DIR": "/srv/m", "XDG_DATA_HOME": "/x", "HOME": "/h"},
        Path("/srv/m"),
    ),
    "xdg": ({"XDG_DATA_HOME": "/x", "HOME": "/h"}, Path("/x/memory-agent/store")),
    "relative xdg ignored": (
        {"XDG_DATA_HOME": "rel", "HOME": "/h"},
        Path("/h/.local/share/memory-agent/store"),
    ),
    "empty values ignored": (
        {"MEMORY_AGENT_STORE_DIR": "", "XDG_DATA_HOME": "", "HOME": "/h"},
        Path("/h/.local/share/memory-agent/store"),
    ),
    "home": ({"HOME": "/h"}, Path("/h/.local/share/memory-agent/store")),
}


@pytest.mark.parametrize(("env", "expected"), DEFAULT_DIRS.values(), ids=DEFAULT_DIRS.keys())
def test_default_store_dir(env: dict[str, str], expected: Path) -> None:
    assert default_store_dir(env) == expected


def test_default_store_dir_without_home_uses_the_user_home() -> None:
    assert default_store_dir({}) == Path.home() / ".local" / "share" / "memory-agent" / "store"


def test_a_save_that_loses_the_race_at_the_rename_reports_already_exists(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_copy = local._copy_tree
    rival = write_tree(harness.tmp_path / "rival", {"AGENTS.md": "rival\n"})

    def copy_while_a_rival_saves(
        source: Path, destination: Path
    ) -> tuple[list[local._FileRecord], list[str]]:
        copied = real_copy(source, destination)
        if source != rival:
            assert harness.store.save("race", rival).saved  # lands between check and rename
        return copied

    monkeypatch.setattr(local, "_copy_tree", copy_while_a_rival_saves)

    result = harness.save("race", {"AGENTS.md": "loser\n"})

    assert not result.saved
    assert result.reason.startswith("already exists")
    assert harness.store.read_entry("race") == {"AGENTS.md": "rival\n"}
    assert [p.name for p in harness.store.root.iterdir() if p.name.startswith(".tmp")] == []


def test_a_target_that_cannot_move_is_refilled_in_place(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness.save("k-1")
    write_tree(harness.target, {"stale.md": "old\n"})
    real_rename = Path.rename
    target = harness.target

    def rename(self: Path, destination: str | os.PathLike[str]) -> Path:
        if self == target:
            raise OSError(16, "Device or resource busy")  # a mount point cannot be renamed
        return real_rename(self, destination)

    monkeypatch.setattr(Path, "rename", rename)

    result = harness.restore("k-")

    assert result.hit
    assert read_tree(harness.target) == memory_of("k-1")
    assert sorted(p.name for p in harness.target.parent.iterdir()) == [".agent-memory"]


def test_disk_trouble_is_a_result_not_an_exception(harness: Harness) -> None:
    harness.store.root.parent.mkdir(parents=True, exist_ok=True)
    harness.store.root.write_text("a file where the store should be")
    harness.target.parent.mkdir(parents=True)
    harness.target.write_text("a file where the memory folder should be")

    saved = harness.save("k")
    restored = harness.restore("k")

    assert not saved.saved
    assert saved.reason.startswith("not saved to the local store")
    assert not restored.hit
    assert restored.warning is not None
    assert "could not empty" in restored.warning
    assert harness.store.entries() == []
