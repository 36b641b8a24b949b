"""edit_file / write_file: what they change, and everything they refuse (leaving disk untouched)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from langchain_core.tools import BaseTool

from memory_action.memory.sources import MemoryFiles
from memory_action.memory.tools import MemoryEditor, make_memory_tools, memory_tools
from memory_action.safety.scrub import RefusalLog

WRITABLE = ".agent-memory/AGENTS.md"
MEMORY = "## Notes\n\n- one\n- two\n"
REPO_RULES = "- repo rule\n"

Tree = dict[str, tuple[str, str | bytes]]


class Setup:
    """A workspace (under root/ws) with a read-only AGENTS.md and the writable memory file."""

    def __init__(self, root: Path, *, max_bytes: int = 1024, create_memory: bool = True) -> None:
        self.root = root
        self.workspace = root / "ws"
        self.workspace.mkdir()
        (self.workspace / "AGENTS.md").write_text(REPO_RULES, encoding="utf-8")
        if create_memory:
            self.memory.parent.mkdir()
            self.memory.write_text(MEMORY, encoding="utf-8")
        self.edits = 0
        self.files = MemoryFiles(
            workspace=self.workspace,
            read_only=(PurePosixPath("AGENTS.md"), PurePosixPath("docs/ORG.md")),
            writable=PurePosixPath(WRITABLE),
            max_bytes=max_bytes,
        )
        tools = {tool.name: tool for tool in make_memory_tools(self.files, self._count)}
        self.edit_tool, self.write_tool = tools["edit_file"], tools["write_file"]

    @property
    def memory(self) -> Path:
        return self.workspace / WRITABLE

    def _count(self) -> None:
        self.edits += 1

    def edit(self, old: str, new: str, path: str = WRITABLE, **extra: Any) -> str:
        args = {"file_path": path, "old_string": old, "new_string": new, **extra}
        return invoke(self.edit_tool, args)

    def write(self, content: str, path: str = WRITABLE) -> str:
        return invoke(self.write_tool, {"file_path": path, "content": content})

    def tree(self) -> Tree:
        """Everything under root: files with their bytes, links with their targets, folders."""
        found: Tree = {}
        for path in sorted(self.root.rglob("*")):
            name = path.relative_to(self.root).as_posix()
            if path.is_symlink():
                found[name] = ("link", str(path.readlink()))
            elif path.is_dir():
                found[name] = ("dir", "")
            else:
                found[name] = ("file", path.read_bytes())
        return found


def invoke(tool: BaseTool, args: dict[str, Any]) -> str:
    result = tool.invoke(args)
    assert isinstance(result, str)
    return result


@pytest.fixture
def ws(tmp_path: Path) -> Setup:
    return Setup(tmp_path)


def assert_refused(setup: Setup, action: Callable[[], str], *expected: str) -> str:
    before = setup.tree()
    message = action()
    assert message.startswith("Error: "), message
    for part in expected:
        assert part in message
    assert setup.tree() == before, "a refused call must not change the file system"
    assert setup.edits == 0
    return message


# --- what they change ---------------------------------------------------------------------------


def test_tools_are_named_described_and_typed(ws: Setup) -> None:
    assert ws.edit_tool.name == "edit_file"
    assert WRITABLE in ws.edit_tool.description
    assert set(ws.edit_tool.args) == {"file_path", "old_string", "new_string", "replace_all"}
    assert set(ws.write_tool.args) == {"file_path", "content"}


def test_edit_replaces_the_unique_match(ws: Setup) -> None:
    assert ws.edit("- two\n", "- two\n- three\n") == f"Edited {WRITABLE}"

    assert ws.memory.read_text(encoding="utf-8") == "## Notes\n\n- one\n- two\n- three\n"
    assert ws.edits == 1


def test_leading_dot_slash_is_accepted(ws: Setup) -> None:
    assert ws.edit("- one", "- uno", path=f"./{WRITABLE}") == f"Edited {WRITABLE}"
    assert "- uno" in ws.memory.read_text(encoding="utf-8")


def test_replace_all(ws: Setup) -> None:
    ws.memory.write_text("- x\n- x\n", encoding="utf-8")

    assert ws.edit("- x", "- y", replace_all=True) == f"Edited {WRITABLE} (2 replacements)"
    assert ws.memory.read_text(encoding="utf-8") == "- y\n- y\n"


def test_write_creates_the_folder_and_file(tmp_path: Path) -> None:
    setup = Setup(tmp_path, create_memory=False)

    assert setup.write("- first lesson\n") == f"Wrote {WRITABLE}"
    assert setup.memory.read_text(encoding="utf-8") == "- first lesson\n"
    assert setup.edits == 1
    assert [p.name for p in setup.memory.parent.iterdir()] == ["AGENTS.md"], "no temp file left"


def test_write_replaces_the_file(ws: Setup) -> None:
    assert ws.write("# Fresh\n") == f"Wrote {WRITABLE}"
    assert ws.memory.read_text(encoding="utf-8") == "# Fresh\n"


def test_crlf_is_normalised_to_lf(ws: Setup) -> None:
    ws.memory.write_bytes(b"- one\r\n- two\r\n")

    assert ws.edit("- one\r\n- two", "- one\r\n- 2") == f"Edited {WRITABLE}"
    assert ws.memory.read_bytes() == b"- one\n- 2\n"

    ws.write("a\r\nb\r\n")
    assert ws.memory.read_bytes() == b"a\nb\n"


def test_parallel_edits_do_not_lose_each_other(ws: Setup) -> None:
    ws.memory.write_text("".join(f"- item {i}\n" for i in range(20)), encoding="utf-8")

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda i: ws.edit(f"- item {i}\n", f"- done {i}\n"), range(20)))

    assert results == [f"Edited {WRITABLE}"] * 20
    assert ws.memory.read_text(encoding="utf-8") == "".join(f"- done {i}\n" for i in range(20))


# --- what they refuse -------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["notes.md", ".agent-memory/OTHER.md", ".agent-memory"])
def test_other_paths_are_refused(ws: Setup, path: str) -> None:
    assert_refused(ws, lambda: ws.write("- x\n", path=path), "only .agent-memory/AGENTS.md")
    assert_refused(ws, lambda: ws.edit("- one", "- x", path=path), "not your memory file")


@pytest.mark.parametrize(
    "path", ["../AGENTS.md", ".agent-memory/../.agent-memory/AGENTS.md", "..\\outside.md"]
)
def test_dot_dot_is_refused(ws: Setup, path: str) -> None:
    assert_refused(ws, lambda: ws.write("- x\n", path=path), "'..'")


@pytest.mark.parametrize("path", ["/etc/passwd", f"/{WRITABLE}", "~/AGENTS.md"])
def test_absolute_paths_are_refused(ws: Setup, path: str) -> None:
    message = assert_refused(ws, lambda: ws.write("- x\n", path=path), "absolute path")
    assert WRITABLE in message, "the refusal tells the model the right path"


@pytest.mark.parametrize("path", ["AGENTS.md", "./AGENTS.md", "docs/ORG.md"])
def test_read_only_sources_are_refused(ws: Setup, path: str) -> None:
    assert_refused(
        ws, lambda: ws.edit("- repo rule", "- x", path=path), "is read-only: it comes from"
    )
    assert_refused(ws, lambda: ws.write("- x\n", path=path), "is read-only")


def test_symlinked_file_is_never_followed(tmp_path: Path) -> None:
    setup = Setup(tmp_path, create_memory=False)
    target = tmp_path / "victim.txt"
    target.write_text("precious\n", encoding="utf-8")
    setup.memory.parent.mkdir()
    setup.memory.symlink_to(target)

    assert_refused(setup, lambda: setup.write("- x\n"), f"{WRITABLE} is a symlink")
    assert_refused(setup, lambda: setup.edit("precious", "owned"), "is a symlink")
    assert target.read_text(encoding="utf-8") == "precious\n"


def test_symlinked_folder_is_never_followed(tmp_path: Path) -> None:
    setup = Setup(tmp_path, create_memory=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (setup.workspace / ".agent-memory").symlink_to(elsewhere, target_is_directory=True)

    assert_refused(setup, lambda: setup.write("- x\n"), ".agent-memory is a symlink")
    assert list(elsewhere.iterdir()) == []


def test_a_folder_made_a_symlink_after_it_was_created_is_never_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race between creating the memory folder and writing into it: another process swaps
    the new folder for a link to elsewhere (here, inside ``mkdir``). Nothing is written there."""
    setup = Setup(tmp_path, create_memory=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder = setup.memory.parent
    real_mkdir = Path.mkdir

    def mkdir_then_swap(self: Path, *args: Any, **kwargs: Any) -> None:
        real_mkdir(self, *args, **kwargs)
        if self == folder:
            self.rmdir()
            self.symlink_to(elsewhere, target_is_directory=True)

    monkeypatch.setattr(Path, "mkdir", mkdir_then_swap)

    message = setup.write("- x\n")

    assert message.startswith("Error: ") and ".agent-memory is a symlink" in message, message
    assert list(elsewhere.iterdir()) == []


def test_budget_exceeded_leaves_the_file_unchanged(tmp_path: Path) -> None:
    setup = Setup(tmp_path, max_bytes=len(MEMORY) + 5)

    message = assert_refused(
        setup,
        lambda: setup.edit("- two\n", "- two\n- a much longer entry\n"),
        "over the memory limit",
        "Consolidate",
        "nothing was written",
    )
    assert str(len(MEMORY) + 5) in message
    assert_refused(setup, lambda: setup.write("x" * 1000), "over the memory limit")


def test_write_exactly_at_the_budget_is_allowed(tmp_path: Path) -> None:
    setup = Setup(tmp_path, max_bytes=10)

    assert setup.write("x" * 10) == f"Wrote {WRITABLE}"


def test_ambiguous_match_is_refused(ws: Setup) -> None:
    ws.memory.write_text("- x\n- x\n", encoding="utf-8")

    assert_refused(ws, lambda: ws.edit("- x", "- y"), "occurs 2 times", "replace_all")


def test_missing_old_string_is_refused(ws: Setup) -> None:
    assert_refused(ws, lambda: ws.edit("- three", "- 3"), "old_string was not found")


def test_empty_or_identical_strings_are_refused(ws: Setup) -> None:
    assert_refused(ws, lambda: ws.edit("", "- x"), "old_string is empty")
    assert_refused(ws, lambda: ws.edit("- one", "- one"), "nothing to change")


def test_editing_a_missing_file_points_to_write_file(tmp_path: Path) -> None:
    setup = Setup(tmp_path, create_memory=False)

    assert_refused(setup, lambda: setup.edit("- a", "- b"), "does not exist yet", "write_file")


def test_memory_folder_being_a_file_is_reported_not_raised(tmp_path: Path) -> None:
    setup = Setup(tmp_path, create_memory=False)
    (setup.workspace / ".agent-memory").write_text("oops", encoding="utf-8")

    assert_refused(setup, lambda: setup.write("- x\n"), "could not change")


def test_not_utf8_memory_is_refused_for_edit(ws: Setup) -> None:
    ws.memory.write_bytes(b"\xff\xfe")

    assert_refused(ws, lambda: ws.edit("a", "b"), "not UTF-8", "write_file")


# -- undoing a conversation's edits ----------------------------------------------------------


def editor_for(setup: Setup) -> tuple[MemoryEditor, dict[str, BaseTool]]:
    editor = MemoryEditor(setup.files, None, RefusalLog())
    return editor, {tool.name: tool for tool in memory_tools(editor)}


def test_a_roll_back_puts_back_the_text_of_the_checkpoint(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    editor, tools = editor_for(setup)
    mark = editor.checkpoint()
    invoke(tools["write_file"], {"file_path": WRITABLE, "content": "- half a thought\n"})

    assert editor.roll_back(mark) is True
    assert setup.memory.read_text() == MEMORY
    assert editor.roll_back(mark) is False  # nothing left to undo


def test_a_roll_back_to_no_file_removes_the_file_the_conversation_made(tmp_path: Path) -> None:
    setup = Setup(tmp_path, create_memory=False)
    editor, tools = editor_for(setup)
    mark = editor.checkpoint()
    invoke(tools["write_file"], {"file_path": WRITABLE, "content": "- new\n"})

    assert editor.roll_back(mark) is True
    assert not setup.memory.exists()
