"""Snapshots of the memory folder and the unified diff shown in the job summary."""

from __future__ import annotations

from pathlib import Path

from memory_action.memory.diff import changed, memory_diff, snapshot


def test_snapshot_keeps_regular_utf8_files_only(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "AGENTS.md").write_text("- a\n", encoding="utf-8")
    (tmp_path / "sub" / "notes.md").write_text("- b\n", encoding="utf-8")
    (tmp_path / "binary.bin").write_bytes(b"\xff\x00")
    (tmp_path / "link.md").symlink_to(tmp_path / "AGENTS.md")

    assert snapshot(tmp_path) == {"AGENTS.md": "- a\n", "sub/notes.md": "- b\n"}


def test_snapshot_of_a_missing_folder_is_empty(tmp_path: Path) -> None:
    assert snapshot(tmp_path / "missing") == {}


def test_no_change_is_an_empty_diff() -> None:
    files = {"AGENTS.md": "- a\n"}

    assert memory_diff(files, dict(files), ".agent-memory") == ""
    assert not changed(files, dict(files))


def test_changed_added_and_removed_files() -> None:
    before = {"AGENTS.md": "# Memory\n- a\n", "old.md": "gone\n"}
    after = {"AGENTS.md": "# Memory\n- a\n- b\n", "new.md": "fresh\n"}

    diff = memory_diff(before, after, ".agent-memory")

    assert changed(before, after)
    assert diff == (
        "--- a/.agent-memory/AGENTS.md\n"
        "+++ b/.agent-memory/AGENTS.md\n"
        "@@ -1,2 +1,3 @@\n"
        " # Memory\n"
        " - a\n"
        "+- b\n"
        "--- /dev/null\n"
        "+++ b/.agent-memory/new.md\n"
        "@@ -0,0 +1 @@\n"
        "+fresh\n"
        "--- a/.agent-memory/old.md\n"
        "+++ /dev/null\n"
        "@@ -1 +0,0 @@\n"
        "-gone\n"
    )


def test_missing_final_newline_is_marked() -> None:
    diff = memory_diff({"AGENTS.md": "- a"}, {"AGENTS.md": "- b"}, "")

    assert diff == (
        "--- a/AGENTS.md\n"
        "+++ b/AGENTS.md\n"
        "@@ -1 +1 @@\n"
        "-- a\n"
        "\\ No newline at end of file\n"
        "+- b\n"
        "\\ No newline at end of file\n"
    )


def test_round_trip_through_the_folder(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("- a\n", encoding="utf-8")
    before = snapshot(tmp_path)
    (tmp_path / "AGENTS.md").write_text("- a\n- b\n", encoding="utf-8")

    diff = memory_diff(before, snapshot(tmp_path), "mem/")

    assert diff.splitlines()[:2] == ["--- a/mem/AGENTS.md", "+++ b/mem/AGENTS.md"]
    assert "+- b" in diff.splitlines()
