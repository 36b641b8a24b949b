"""Loading memory sources: order, skipping, and one-line errors that name the file and the fix."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pytest

from memory_action.errors import MemoryFileError
from memory_action.memory.sources import MemoryFiles, MemorySource, load_sources
from memory_action.run.settings import Settings

WRITABLE = ".agent-memory/AGENTS.md"


def make_files(workspace: Path, *read_only: str, max_bytes: int = 1024) -> MemoryFiles:
    return MemoryFiles(
        workspace=workspace,
        read_only=tuple(PurePosixPath(p) for p in read_only),
        writable=PurePosixPath(WRITABLE),
        max_bytes=max_bytes,
    )


def put(workspace: Path, relative: str, data: str | bytes) -> Path:
    path = workspace / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_bytes(data.encode("utf-8"))
    else:
        path.write_bytes(data)
    return path


def load_error(files: MemoryFiles) -> str:
    with pytest.raises(MemoryFileError) as caught:
        load_sources(files)
    message = str(caught.value)
    assert "\n" not in message, "errors are one line"
    return message


def test_from_settings_takes_paths_and_budget(tmp_path: Path) -> None:
    settings = Settings(
        memory_sources=("AGENTS.md", "docs/ORG.md", "AGENTS.md", ".mem/AGENTS.md"),
        memory_path=PurePosixPath(".mem"),
        max_memory_kb=2,
    )

    files = MemoryFiles.from_settings(settings, tmp_path)

    assert files == MemoryFiles(
        workspace=tmp_path,
        read_only=(PurePosixPath("AGENTS.md"), PurePosixPath("docs/ORG.md")),
        writable=PurePosixPath(".mem/AGENTS.md"),
        max_bytes=2048,
    )


def test_read_only_sources_in_order_then_the_writable_file(tmp_path: Path) -> None:
    put(tmp_path, WRITABLE, "- learned\n")
    put(tmp_path, "docs/ORG.md", "- org rule\n")
    put(tmp_path, "AGENTS.md", "- repo rule\n")

    sources = load_sources(make_files(tmp_path, "docs/ORG.md", "AGENTS.md"))

    assert sources == [
        MemorySource(path="docs/ORG.md", content="- org rule\n", writable=False),
        MemorySource(path="AGENTS.md", content="- repo rule\n", writable=False),
        MemorySource(path=WRITABLE, content="- learned\n", writable=True),
    ]


def test_missing_and_empty_files_are_left_out(tmp_path: Path) -> None:
    put(tmp_path, "AGENTS.md", " \n\n")
    put(tmp_path, "docs/ORG.md", "- org rule\n")

    sources = load_sources(make_files(tmp_path, "AGENTS.md", "missing.md", "docs/ORG.md"))

    assert [s.path for s in sources] == ["docs/ORG.md"]


def test_nothing_at_all_loads_nothing(tmp_path: Path) -> None:
    assert load_sources(make_files(tmp_path, "AGENTS.md")) == []


def test_crlf_and_byte_order_mark_are_normalised(tmp_path: Path) -> None:
    put(tmp_path, "AGENTS.md", b"\xef\xbb\xbf- one\r\n- two\r\n")

    [source] = load_sources(make_files(tmp_path, "AGENTS.md"))

    assert source.content == "- one\n- two\n"


def test_not_utf8_names_the_file_and_the_fix(tmp_path: Path) -> None:
    put(tmp_path, "AGENTS.md", b"- caf\xe9\n")

    message = load_error(make_files(tmp_path, "AGENTS.md"))

    assert message.startswith("Memory file AGENTS.md is not UTF-8 text")
    assert "save it as UTF-8" in message
    assert "memory_sources" in message


def test_writable_file_not_utf8(tmp_path: Path) -> None:
    put(tmp_path, WRITABLE, b"\xff\xfe")

    message = load_error(make_files(tmp_path))

    assert WRITABLE in message
    assert "not UTF-8" in message


def test_oversize_names_the_file_and_the_fix(tmp_path: Path) -> None:
    put(tmp_path, "AGENTS.md", "x" * 1025)

    message = load_error(make_files(tmp_path, "AGENTS.md", max_bytes=1024))

    assert "AGENTS.md" in message
    assert "1025 bytes" in message
    assert "raise the max_memory_kb input or trim it" in message


def test_writable_memory_over_budget_loads_so_it_can_be_consolidated(tmp_path: Path) -> None:
    put(tmp_path, WRITABLE, "x" * 1025)

    [source] = load_sources(make_files(tmp_path, max_bytes=1024))

    assert len(source.content) == 1025


def test_writable_memory_far_over_budget_names_the_file_and_the_fix(tmp_path: Path) -> None:
    put(tmp_path, WRITABLE, "x" * 4097)

    message = load_error(make_files(tmp_path, max_bytes=1024))

    assert WRITABLE in message
    assert "4097 bytes" in message
    assert "(1 KiB from the max_memory_kb input)" in message
    assert "raise the max_memory_kb input or trim it" in message


def test_exactly_at_the_budget_loads(tmp_path: Path) -> None:
    put(tmp_path, "AGENTS.md", "x" * 1024)

    [source] = load_sources(make_files(tmp_path, "AGENTS.md", max_bytes=1024))

    assert len(source.content) == 1024


def test_a_folder_is_not_a_regular_file(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").mkdir()

    message = load_error(make_files(tmp_path, "AGENTS.md"))

    assert "AGENTS.md is not a regular file" in message


def test_writable_file_may_not_be_a_symlink(tmp_path: Path) -> None:
    put(tmp_path, "elsewhere.md", "- planted\n")
    (tmp_path / ".agent-memory").mkdir()
    (tmp_path / WRITABLE).symlink_to(tmp_path / "elsewhere.md")

    message = load_error(make_files(tmp_path))

    assert f"{WRITABLE} is a symlink" in message


def test_writable_folder_may_not_be_a_symlink(tmp_path: Path) -> None:
    put(tmp_path, "real/AGENTS.md", "- planted\n")
    (tmp_path / ".agent-memory").symlink_to(tmp_path / "real", target_is_directory=True)

    message = load_error(make_files(tmp_path))

    assert ".agent-memory is a symlink" in message


def test_dangling_writable_symlink_is_refused_too(tmp_path: Path) -> None:
    (tmp_path / ".agent-memory").mkdir()
    (tmp_path / WRITABLE).symlink_to(tmp_path / "nowhere")

    assert "is a symlink" in load_error(make_files(tmp_path))


def test_read_only_symlink_inside_the_workspace_is_fine(tmp_path: Path) -> None:
    put(tmp_path, "docs/AGENTS.md", "- rule\n")
    (tmp_path / "AGENTS.md").symlink_to("docs/AGENTS.md")

    [source] = load_sources(make_files(tmp_path, "AGENTS.md"))

    assert source == MemorySource(path="AGENTS.md", content="- rule\n", writable=False)


def test_read_only_symlink_out_of_the_workspace_is_refused(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    put(tmp_path, "secret.txt", "not for the model\n")
    (workspace / "AGENTS.md").symlink_to(os.path.relpath(tmp_path / "secret.txt", workspace))

    message = load_error(make_files(workspace, "AGENTS.md"))

    assert "AGENTS.md is a symlink to a file outside the workspace" in message
