"""The ``memory-agent`` command, in-process: help, the local store's ``memory list|show|diff``,
``review`` against the ``responses`` fake of GitHub and the OpenAI-compatible stub, and the
action's own provider path (``main()`` with no model override) against the same stub.

Nothing here leaves 127.0.0.1: GitHub is mocked, the model is the stub server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from memory_action import __version__
from memory_action.cli import main
from memory_action.local.repository import RepositoryStore
from memory_action.memory.markers import comment_marker
from memory_action.store.local import LocalDirectoryStore
from tests.fakes.github_api import REPOSITORY, FakeGitHub
from tests.fakes.openai_stub import (
    OpenAIStub,
    RecordedRequest,
    answer_reply,
    report_reply,
    tool_call_reply,
)
from tests.fakes.runner import ActionRunner, is_save_key, pull_request_event

MEMORY = ".agent-memory/AGENTS.md"
ANSWER = "The retry loop returns on the first attempt; use tenacity (as this repo does)."
LESSON = "# Conventions\n\n- Network calls retry with tenacity, never a hand-written loop.\n"
GITHUB_TOKEN = "ghp_" + "L0calT0ken" * 4
MODEL_KEY = "sk-" + "stubkey" * 4
AGENT_PREFIX = "memory-agent/v1/memory-agent/"
MEMORY_TOOLS = {"get_file_patch", "read_file", "edit_file", "write_file", "report_review"}


@dataclass
class CurrentFolder:
    """The current folder of a test: no command may change it."""

    path: Path
    expected: dict[str, tuple[bytes, int]] = field(default_factory=dict)

    def remember(self) -> None:
        """Take the folder as it is now as the state it must still be in after the test."""
        self.expected = tree(self.path)


@pytest.fixture(autouse=True)
def current_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, no_ambient_settings: None
) -> Iterator[CurrentFolder]:
    """No ambient setting of the developer (or of CI) may reach a run; the current folder is a
    scratch folder that no command may change."""
    # Nothing may fall back to the real home folder either.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "home" / "data"))
    folder = CurrentFolder(tmp_path / "cwd")
    folder.path.mkdir()
    (folder.path / "README.md").write_text("# octo-repo\n")
    folder.remember()
    monkeypatch.chdir(folder.path)
    yield folder
    assert tree(folder.path) == folder.expected, "a command changed the current folder"
    assert not (tmp_path / "home").exists(), "a command used the default store in the home folder"


@pytest.fixture(autouse=True)
def _no_tiktoken(no_tiktoken: None) -> None:
    """tiktoken downloads its encodings on first use: no run may reach it."""


def tree(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every path under ``root`` with its content (b"" for folders) and modification time."""
    found: dict[str, tuple[bytes, int]] = {}
    for path in sorted(root.rglob("*")):
        data = path.read_bytes() if path.is_file() else b""
        found[path.relative_to(root).as_posix()] = (data, path.lstat().st_mtime_ns)
    return found


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``main(argv)``: its exit code (argparse's SystemExit included), stdout and stderr."""
    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- help and version -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        [],
        ["review"],
        ["memory"],
        ["memory", "list"],
        ["memory", "show"],
        ["memory", "diff"],
        ["run"],
    ],
    ids=lambda command: " ".join(command) or "top",
)
def test_every_command_has_help(capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    code, out, err = run_cli(capsys, *command, "--help")

    assert code == 0
    assert out.startswith(f"usage: memory-agent {' '.join(command)}".rstrip())
    assert err == ""


def test_the_top_level_help_names_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run_cli(capsys, "--help")

    for command in ("review", "memory", "run"):
        assert f"    {command} " in out


def test_the_review_help_documents_its_flags(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run_cli(capsys, "review", "--help")

    for flag in ("--repo", "--pr", "--dry-run", "--no-save", "--store-dir", "--sources-dir"):
        assert flag in out
    assert "GITHUB_TOKEN" in out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "--version")

    assert code == 0
    assert out == f"memory-agent {__version__}\n"


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys)

    assert code == 2
    assert out == ""
    assert "usage: memory-agent" in err


def test_help_and_an_unhandled_event_never_import_langchain_or_pygithub(tmp_path: Path) -> None:
    """LangChain costs about a second to import: only a run that builds an agent pays it."""
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"action": "published"}))
    probe = (
        "import contextlib, io, sys\n"
        "from memory_action.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main(['--help'])\n"
        "from memory_action.main import main as action\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert action() == 0\n"
        "print(sorted({n.split('.')[0] for n in sys.modules} & {'langchain', 'langchain_core',"
        " 'langgraph', 'openai', 'github'}))\n"
    )
    env = {
        **os.environ,
        "GITHUB_EVENT_NAME": "release",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": REPOSITORY,
        "INPUT_GITHUB_TOKEN": GITHUB_TOKEN,
    }
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"


# -- memory list | show | diff ----------------------------------------------------------------

COMMITTED = f"{AGENT_PREFIX}repo/committed/"
OLD_KEY = f"{COMMITTED}1-1"
OLDER_SIBLING_KEY = f"{COMMITTED}1-10"  # starts with OLD_KEY: an exact key must still win
NEW_KEY = f"{COMMITTED}2-1"
OVERLAY_KEY = f"{AGENT_PREFIX}repo/pr-7/3-1"
OTHER_AGENT_KEY = "memory-agent/v1/other-bot/repo/committed/9-1"
SEEDED = {
    OLD_KEY: "- Use tabs.\n- Retries use tenacity.\n",
    OLDER_SIBLING_KEY: "- A sibling whose key extends the old key.\n",
    NEW_KEY: "- Use spaces.\n- Retries use tenacity.\n",
    OVERLAY_KEY: "- Pull request 7 renames fetch().\n",
    OTHER_AGENT_KEY: "- Another agent's memory.\n",
}
START = 1_700_000_000  # 2023-11-14T22:13:20Z


def size(key: str) -> str:
    """The size column of ``memory list`` for a seeded entry."""
    return f"{len(SEEDED[key].encode()):>7}"


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    """A local store holding SEEDED, saved a minute apart in that order (oldest first)."""
    ticks = iter(range(START, START + 60 * len(SEEDED), 60))
    store = LocalDirectoryStore(tmp_path / "store", clock=lambda: float(next(ticks)))
    for index, (key, text) in enumerate(SEEDED.items()):
        folder = tmp_path / "seed" / str(index)
        folder.mkdir(parents=True)
        (folder / "AGENTS.md").write_text(text)
        assert store.save(key, folder).saved
    return tmp_path / "store"


def test_list_shows_the_agents_entries_newest_first(
    capsys: pytest.CaptureFixture[str], store_dir: Path
) -> None:
    code, out, err = run_cli(capsys, "memory", "list", "--store-dir", str(store_dir))

    assert code == 0
    # Outside a checkout: the whole store, with each entry's repository (these keys name none).
    assert err.startswith("Listing every repository's memory in the local store at ")
    assert "Entries of repository (none) were saved before keys named a repository" in err
    assert out.splitlines() == [
        f"2023-11-14T22:16:20+00:00  {size(OVERLAY_KEY)} B  (none)  {OVERLAY_KEY}",
        f"2023-11-14T22:15:20+00:00  {size(NEW_KEY)} B  (none)  {NEW_KEY}",
        f"2023-11-14T22:14:20+00:00  {size(OLDER_SIBLING_KEY)} B  (none)  {OLDER_SIBLING_KEY}",
        f"2023-11-14T22:13:20+00:00  {size(OLD_KEY)} B  (none)  {OLD_KEY}",
    ]


def test_list_of_another_agent(capsys: pytest.CaptureFixture[str], store_dir: Path) -> None:
    code, out, _ = run_cli(
        capsys, "memory", "list", "--store-dir", str(store_dir), "--agent-name", "Other-Bot"
    )

    assert code == 0
    assert out.splitlines() == [
        f"2023-11-14T22:17:20+00:00  {size(OTHER_AGENT_KEY)} B  (none)  {OTHER_AGENT_KEY}"
    ]


def test_list_of_an_empty_store(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run_cli(capsys, "memory", "list", "--store-dir", str(tmp_path / "empty"))

    assert code == 0
    assert out == f"No memory entries under {AGENT_PREFIX} in local store at {tmp_path}/empty.\n"


def test_the_store_folder_comes_from_the_environment(
    capsys: pytest.CaptureFixture[str], store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_AGENT_STORE_DIR", str(store_dir))

    code, out, _ = run_cli(capsys, "memory", "list")

    assert code == 0
    assert len(out.splitlines()) == 4


def test_show_prints_the_newest_entry(capsys: pytest.CaptureFixture[str], store_dir: Path) -> None:
    code, out, _ = run_cli(capsys, "memory", "show", "--store-dir", str(store_dir))

    assert code == 0
    assert out == (
        f"# {OVERLAY_KEY} (2023-11-14T22:16:20+00:00)\n\n## AGENTS.md\n\n{SEEDED[OVERLAY_KEY]}"
    )


def test_show_by_exact_key_prefers_it_over_newer_keys_it_prefixes(
    capsys: pytest.CaptureFixture[str], store_dir: Path
) -> None:
    code, out, _ = run_cli(
        capsys, "memory", "show", "--store-dir", str(store_dir), "--key", OLD_KEY
    )

    assert code == 0
    assert out.startswith(f"# {OLD_KEY} (")
    assert SEEDED[OLD_KEY] in out
    assert SEEDED[OLDER_SIBLING_KEY] not in out


def test_show_by_prefix_prints_the_newest_match(
    capsys: pytest.CaptureFixture[str], store_dir: Path
) -> None:
    code, out, _ = run_cli(
        capsys, "memory", "show", "--store-dir", str(store_dir), "--key", COMMITTED
    )

    assert code == 0
    assert out.startswith(f"# {NEW_KEY} (")
    assert SEEDED[NEW_KEY] in out


def test_show_of_a_missing_entry_is_one_line_and_exit_code_2(
    capsys: pytest.CaptureFixture[str], store_dir: Path
) -> None:
    code, out, err = run_cli(
        capsys, "memory", "show", "--store-dir", str(store_dir), "--key", f"{COMMITTED}nope"
    )

    assert code == 2
    assert out == ""
    [line] = err.splitlines()
    assert line.startswith(f"Error: No memory entry matches '{COMMITTED}nope' in local store at ")
    assert "'memory-agent memory list'" in line


def test_show_in_an_empty_store_is_exit_code_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run_cli(capsys, "memory", "show", "--store-dir", str(tmp_path / "empty"))

    assert code == 2
    assert len(err.splitlines()) == 1


def test_diff_of_the_two_newest_entries(
    capsys: pytest.CaptureFixture[str], store_dir: Path
) -> None:
    code, out, _ = run_cli(capsys, "memory", "diff", "--store-dir", str(store_dir))

    assert code == 0
    lines = out.splitlines()
    assert lines[:2] == [f"--- {NEW_KEY}", f"+++ {OVERLAY_KEY}"]
    assert "-- Use spaces." in lines
    assert "+- Pull request 7 renames fetch()." in lines


def test_diff_with_old_and_new(capsys: pytest.CaptureFixture[str], store_dir: Path) -> None:
    code, out, _ = run_cli(
        capsys,
        "memory",
        "diff",
        "--store-dir",
        str(store_dir),
        "--old",
        OLD_KEY,
        "--new",
        COMMITTED,  # a prefix: the newest committed entry
    )

    assert code == 0
    lines = out.splitlines()
    assert lines[:2] == [f"--- {OLD_KEY}", f"+++ {NEW_KEY}"]
    assert "-- Use tabs." in lines
    assert "+- Use spaces." in lines
    assert " - Retries use tenacity." in lines  # context, unchanged


def test_diff_of_an_entry_with_itself(capsys: pytest.CaptureFixture[str], store_dir: Path) -> None:
    code, out, _ = run_cli(
        capsys, "memory", "diff", "--store-dir", str(store_dir), "--old", NEW_KEY, "--new", NEW_KEY
    )

    assert code == 0
    assert out == f"--- {NEW_KEY}\n+++ {NEW_KEY}\n(no differences)\n"


@pytest.mark.parametrize("given", ["--old", "--new"])
def test_diff_needs_both_old_and_new(
    capsys: pytest.CaptureFixture[str], store_dir: Path, given: str
) -> None:
    code, out, err = run_cli(
        capsys, "memory", "diff", "--store-dir", str(store_dir), given, OLD_KEY
    )

    assert code == 2
    assert out == ""
    assert err == "Error: memory diff needs both --old and --new, or neither.\n"


def test_diff_of_a_missing_entry_is_exit_code_2(
    capsys: pytest.CaptureFixture[str], store_dir: Path
) -> None:
    code, out, err = run_cli(
        capsys,
        "memory",
        "diff",
        "--store-dir",
        str(store_dir),
        "--old",
        "memory-agent/v1/memory-agent/branch/",
        "--new",
        NEW_KEY,
    )

    assert code == 2
    assert out == ""
    [line] = err.splitlines()
    assert "No memory entry matches 'memory-agent/v1/memory-agent/branch/'" in line


def test_diff_with_fewer_than_two_entries(
    capsys: pytest.CaptureFixture[str], store_dir: Path
) -> None:
    code, out, _ = run_cli(
        capsys, "memory", "diff", "--store-dir", str(store_dir), "--agent-name", "other-bot"
    )

    assert code == 0
    assert (
        out == "Fewer than two memory entries under memory-agent/v1/other-bot/; nothing to diff.\n"
    )


def test_an_invalid_agent_name_is_exit_code_2(
    capsys: pytest.CaptureFixture[str], store_dir: Path
) -> None:
    code, _, err = run_cli(
        capsys, "memory", "list", "--store-dir", str(store_dir), "--agent-name", "a/b"
    )

    assert code == 2
    [line] = err.splitlines()
    assert line.startswith("Error: --agent-name has the invalid value 'a/b'; accepted: ")


# -- review -----------------------------------------------------------------------------------


@pytest.fixture
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub() as server:
        yield server


@pytest.fixture
def credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", GITHUB_TOKEN)
    monkeypatch.setenv("MEMORY_AGENT_MODEL_API_KEY", MODEL_KEY)


def review(
    capsys: pytest.CaptureFixture[str], stub: OpenAIStub, store: Path, *flags: str
) -> tuple[int, str, str]:
    return run_cli(
        capsys,
        "review",
        "--repo",
        REPOSITORY,
        "--pr",
        "7",
        "--store-dir",
        str(store),
        "--model",
        "openai:stub-model",
        "--model-base-url",
        stub.url("/v1"),
        *flags,
    )


def learns(content: str = LESSON, call_id: str = "call_1") -> list[dict[str, Any]]:
    """The stub's replies for a run that writes ``content`` to memory, then answers."""
    write = {"file_path": MEMORY, "content": content}
    return [tool_call_reply("write_file", write, call_id=call_id), report_reply(ANSWER)]


def system_prompt(request: RecordedRequest) -> str:
    first = request.body["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


def tool_names(request: RecordedRequest) -> set[str]:
    return {tool["function"]["name"] for tool in request.body["tools"]}


def writes(github: FakeGitHub) -> list[tuple[str, str]]:
    return [(method, url) for method, url in github.calls if method != "GET"]


@pytest.mark.usefixtures("credentials")
def test_a_dry_run_prints_the_review_saves_memory_and_the_next_run_sees_it(
    capsys: pytest.CaptureFixture[str], github: FakeGitHub, stub: OpenAIStub, tmp_path: Path
) -> None:
    store_dir = tmp_path / "store"
    stub.add_replies(*learns())

    code, out, err = review(capsys, stub, store_dir, "--dry-run")

    assert code == 0, out + err
    # stdout is the review and the memory diff alone (progress goes to stderr): it can be piped.
    assert out.startswith(f"{ANSWER}\n\nMemory changes:\n--- /dev/null\n+++ b/{MEMORY}\n")
    assert out.rstrip().endswith(
        "\n+- Network calls retry with tenacity, never a hand-written loop."
    )
    # A dry run posts nothing.
    assert github.comments == {}
    assert writes(github) == []
    # The model was called with the key, the PR and memory tools, and the (empty) memory block.
    first, _ = stub.requests
    assert first.path == "/v1/chat/completions"
    assert first.header("authorization") == f"Bearer {MODEL_KEY}"
    assert first.body["model"] == "stub-model"
    assert tool_names(first) == MEMORY_TOOLS
    assert "<agent_memory>" in system_prompt(first)
    assert "Pull request #7 in" in first.body["messages"][1]["content"]
    # Memory was saved to the local store as the pull request's overlay, in its repository's
    # part of the store (the same as a clone of it would use).
    [raw] = LocalDirectoryStore(store_dir).entries()
    assert raw.key.startswith(f"github.com%2F{REPOSITORY.replace('/', '%2F')}/{AGENT_PREFIX}")
    store = RepositoryStore(
        store=LocalDirectoryStore(store_dir), repository=f"github.com/{REPOSITORY}"
    )
    [entry] = store.entries()
    assert entry.key.startswith(f"{AGENT_PREFIX}repo/pr-7/local")
    assert store.read_entry(entry.key)["AGENTS.md"] == LESSON
    assert f"Saved memory as {entry.key}" in err
    # Secrets never reach the terminal.
    assert GITHUB_TOKEN not in out + err
    assert MODEL_KEY not in out + err

    # The next run restores that memory into the system prompt and, unchanged, saves nothing.
    stub.add_replies(report_reply("Still one issue: the loop never retries."))

    code, out, err = review(capsys, stub, store_dir, "--dry-run")

    assert code == 0, out + err
    assert out == "Still one issue: the loop never retries.\n"
    third = stub.requests[2]
    assert "Network calls retry with tenacity, never a hand-written loop." in system_prompt(third)
    assert f"Restored memory from key {entry.key}" in err
    assert store.entries() == [entry]
    assert github.comments == {}


@pytest.mark.usefixtures("credentials")
def test_two_runs_in_a_row_that_both_learn_both_save(
    capsys: pytest.CaptureFixture[str], github: FakeGitHub, stub: OpenAIStub, tmp_path: Path
) -> None:
    """Each local run saves under its own key, however quickly the runs follow each other."""
    store_dir = tmp_path / "store"
    second_lesson = LESSON + "- Timeouts are explicit.\n"
    stub.add_replies(*learns(), *learns(second_lesson, call_id="call_2"))

    first = review(capsys, stub, store_dir, "--dry-run")
    second = review(capsys, stub, store_dir, "--dry-run")

    assert first[0] == second[0] == 0, first[1:] + second[1:]
    store = LocalDirectoryStore(store_dir)
    newest, oldest = store.entries()
    assert newest.key != oldest.key
    assert store.read_entry(newest.key)["AGENTS.md"] == second_lesson
    assert "+- Timeouts are explicit." in second[1]


@pytest.mark.usefixtures("credentials")
def test_no_save_shows_the_memory_changes_and_saves_nothing(
    capsys: pytest.CaptureFixture[str], github: FakeGitHub, stub: OpenAIStub, tmp_path: Path
) -> None:
    store_dir = tmp_path / "store"
    stub.add_replies(*learns())

    code, out, err = review(capsys, stub, store_dir, "--dry-run", "--no-save")

    assert code == 0, out + err
    assert ANSWER in out
    assert "+- Network calls retry with tenacity" in out
    assert "--no-save was given" in out + err
    assert LocalDirectoryStore(store_dir).entries() == []


@pytest.mark.usefixtures("credentials")
def test_without_dry_run_the_review_is_posted_as_the_sticky_comment(
    capsys: pytest.CaptureFixture[str], github: FakeGitHub, stub: OpenAIStub, tmp_path: Path
) -> None:
    stub.add_replies(answer_reply(ANSWER))

    code, out, err = review(capsys, stub, tmp_path / "store")

    assert code == 0, out + err
    [comment] = github.bodies(7)
    assert comment_marker("memory-agent") in comment
    assert ANSWER in comment
    assert ANSWER in out


@pytest.mark.usefixtures("github")
@pytest.mark.parametrize("variable", ["GITHUB_TOKEN", "GH_TOKEN"])
def test_either_token_variable_works(
    capsys: pytest.CaptureFixture[str],
    stub: OpenAIStub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
) -> None:
    monkeypatch.setenv(variable, GITHUB_TOKEN)
    monkeypatch.setenv("MEMORY_AGENT_MODEL_API_KEY", MODEL_KEY)
    stub.add_replies(answer_reply(ANSWER))

    code, out, err = review(capsys, stub, tmp_path / "store", "--dry-run")

    assert code == 0, out + err
    assert ANSWER in out


def test_a_missing_github_token_is_one_line_and_exit_code_2(
    capsys: pytest.CaptureFixture[str],
    github: FakeGitHub,
    stub: OpenAIStub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMORY_AGENT_MODEL_API_KEY", MODEL_KEY)

    code, out, err = review(capsys, stub, tmp_path / "store", "--dry-run")

    assert code == 2
    assert out == ""
    [line] = err.splitlines()
    assert line.startswith("Error: No GitHub token: set GITHUB_TOKEN (or GH_TOKEN)")
    assert github.calls == []
    assert stub.requests == []
    assert not (tmp_path / "store").exists()


@pytest.mark.usefixtures("credentials")
def test_an_invalid_flag_value_is_one_line_and_exit_code_2(
    capsys: pytest.CaptureFixture[str], github: FakeGitHub, stub: OpenAIStub, tmp_path: Path
) -> None:
    code, _, err = review(capsys, stub, tmp_path / "store", "--max-memory-kb", "0")

    assert code == 2
    [line] = err.splitlines()
    assert line.startswith("Error: --max-memory-kb has the invalid value '0'; accepted: ")
    assert "Input" not in line and "max_memory_kb" not in line
    assert github.calls == []


@pytest.mark.usefixtures("credentials")
def test_read_only_sources_come_from_the_sources_folder(
    capsys: pytest.CaptureFixture[str], github: FakeGitHub, stub: OpenAIStub, tmp_path: Path
) -> None:
    sources = tmp_path / "checkout"
    (sources / "docs").mkdir(parents=True)
    (sources / "AGENTS.md").write_text("- Makefiles are indented with tabs.\n")
    (sources / "docs" / "STYLE.md").write_text("- Public functions have docstrings.\n")
    (sources / "NOT-LISTED.md").write_text("- Never shown.\n")
    before = tree(sources)
    stub.add_replies(answer_reply(ANSWER))

    code, out, err = review(
        capsys,
        stub,
        tmp_path / "store",
        "--dry-run",
        "--sources-dir",
        str(sources),
        "--memory-source",
        "AGENTS.md",
        "--memory-source",
        "docs/STYLE.md",
        "--memory-source",
        "MISSING.md",  # missing sources are skipped
    )

    assert code == 0, out + err
    prompt = system_prompt(stub.requests[0])
    assert "Makefiles are indented with tabs." in prompt
    assert "Public functions have docstrings." in prompt
    assert "Never shown." not in prompt
    assert tree(sources) == before


@pytest.mark.usefixtures("credentials")
def test_read_only_sources_default_to_the_current_folder(
    capsys: pytest.CaptureFixture[str],
    github: FakeGitHub,
    stub: OpenAIStub,
    tmp_path: Path,
    current_folder: CurrentFolder,
) -> None:
    cwd = current_folder.path
    (cwd / "AGENTS.md").write_text("- Commit messages are in the imperative.\n")
    current_folder.remember()  # checked again after the test, AGENTS.md included
    stub.add_replies(*learns())

    code, out, err = review(capsys, stub, tmp_path / "store", "--dry-run")

    assert code == 0, out + err
    assert "Commit messages are in the imperative." in system_prompt(stub.requests[0])
    assert not (cwd / ".agent-memory").exists()


@pytest.mark.usefixtures("credentials")
def test_a_source_that_links_outside_the_sources_folder_is_refused(
    capsys: pytest.CaptureFixture[str], github: FakeGitHub, stub: OpenAIStub, tmp_path: Path
) -> None:
    """As in the action: a checkout's AGENTS.md linking to, say, ~/.ssh/config is not sent."""
    secret = tmp_path / "private.txt"
    secret.write_text("password=hunter2\n")
    sources = tmp_path / "checkout"
    sources.mkdir()
    (sources / "AGENTS.md").symlink_to(secret)
    stub.add_replies(answer_reply(ANSWER))

    code, out, err = review(
        capsys, stub, tmp_path / "store", "--dry-run", "--sources-dir", str(sources)
    )

    assert code == 4
    [line] = err.splitlines()
    assert "Memory source AGENTS.md is a symlink to a file outside" in line
    assert stub.requests == []
    assert "hunter2" not in out + err


@pytest.mark.usefixtures("credentials")
def test_a_source_that_links_inside_the_sources_folder_is_used(
    capsys: pytest.CaptureFixture[str], github: FakeGitHub, stub: OpenAIStub, tmp_path: Path
) -> None:
    sources = tmp_path / "checkout"
    (sources / "docs").mkdir(parents=True)
    (sources / "docs" / "AGENTS.md").write_text("- Linked conventions.\n")
    (sources / "AGENTS.md").symlink_to(Path("docs") / "AGENTS.md")
    stub.add_replies(answer_reply(ANSWER))

    code, out, err = review(
        capsys, stub, tmp_path / "store", "--dry-run", "--sources-dir", str(sources)
    )

    assert code == 0, out + err
    assert "Linked conventions." in system_prompt(stub.requests[0])


# -- the action's provider path -------------------------------------------------------------


def test_the_action_builds_the_model_its_inputs_name(
    github: FakeGitHub, stub: OpenAIStub, tmp_path: Path
) -> None:
    """``main()`` without a model override: INPUT_MODEL → ChatOpenAI → HTTP to the stub."""
    runner = ActionRunner(tmp_path / "action")
    runner.inputs["model"] = "openai:stub-model"
    runner.inputs["model_base_url"] = stub.url("/v1")
    runner.inputs["model_api_key"] = MODEL_KEY
    stub.add_replies(*learns())

    outcome = runner.run("pull_request", pull_request_event(), "refs/pull/7/merge")

    assert outcome.exit_code == 0, outcome.stdout + outcome.stderr
    first, second = stub.requests
    assert first.header("authorization") == f"Bearer {MODEL_KEY}"
    assert first.body["model"] == "stub-model"
    assert tool_names(first) == MEMORY_TOOLS
    assert "<agent_memory>" in system_prompt(first)
    assert "(No memory loaded)" in system_prompt(first)
    assert LESSON.strip() in system_prompt(second)  # re-read after the edit
    [comment] = github.bodies(7)
    assert ANSWER in comment
    assert "+- Network calls retry with tenacity" in comment
    assert outcome.outputs["response"] == ANSWER
    # The action asked the server for the window of a model it does not know; the stub had none.
    assert {r.path for r in stub.other_requests} == {"/v1/models", "/props", "/api/show"}
    assert (
        "Model limits: openai:stub-model: 8,000 tokens in (assumed: the server did not say; set "
        "the max_input_tokens input), 2,000 out; each request may take up to 600 s "
        "(timeout_minutes: 10)." in outcome.stdout  # the action's inputs, not the CLI's flags
    )
    assert is_save_key(
        outcome.outputs["saved_key"], "memory-agent/v1/memory-agent/repo/pr-7/", 1001
    )
    log = "\n".join(
        line
        for line in (outcome.stdout + outcome.stderr).splitlines()
        if not line.startswith("::add-mask::")
    )
    assert MODEL_KEY not in log
    assert f"::add-mask::{MODEL_KEY}" in outcome.stdout


def test_memory_blame_shows_which_run_wrote_each_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memory_action.memory.provenance import Provenance, Stamp  # noqa: PLC0415

    entry = tmp_path / "entry" / ".agent-memory"
    entry.mkdir(parents=True)
    (entry / "AGENTS.md").write_text("# Conventions\n- Use tenacity.\n- Unknown origin.\n")
    stamp = Stamp(
        run_id="4242",
        run_attempt="1",
        event="pull_request",
        actor="mona",
        pr=7,
        trust="trusted",
        time="2026-11-29T10:00:00Z",
    )
    Provenance(records={"- Use tenacity.": stamp}).dump(entry / "provenance.json")
    store_dir = tmp_path / "store"
    LocalDirectoryStore(store_dir).save("memory-agent/v1/memory-agent/repo/committed/1-1", entry)

    code = main(["memory", "blame", "--store-dir", str(store_dir)])

    out = capsys.readouterr().out
    assert code == 0
    [tenacity] = [line for line in out.splitlines() if "Use tenacity" in line]
    assert "4242-1" in tenacity
    assert "pr#7" in tenacity
    assert "@mona" in tenacity
    [unknown] = [line for line in out.splitlines() if "Unknown origin" in line]
    assert "(unknown)" in unknown
