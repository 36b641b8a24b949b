"""A restored entry that cannot be used is cache trouble, never a failed job.

Through the whole action (``main()``), with the local store and with the Actions cache fake: an
entry whose AGENTS.md is not UTF-8, an archive member thousands of folders deep, a local entry
whose files are deeper than memory goes. Each run warns once, naming the entry's key, goes on
with the next entry that can be used (or none), leaves nothing behind, and does not save: a
save would hide the entry it could not read.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import zstandard

from memory_action.safety.trees import discard_tree
from memory_action.store.archive import Compression, cache_version
from memory_action.store.local import LocalDirectoryStore
from tests.fakes.cache_harness import default_tuning, fast_tuning
from tests.fakes.cache_service import CREATE, FakeCacheService
from tests.fakes.deep_tree import deep_name, make_deep_tree
from tests.fakes.github_api import FakeGitHub
from tests.fakes.runner import ActionRunner, CacheRunner, RunOutcome, push_event
from tests.fakes.scripted_model import ScriptedChatModel, tool_call

MEMORY = ".agent-memory/AGENTS.md"
MAIN_REF = "refs/heads/main"
COMMITTED = "memory-agent/v1/memory-agent/repo/committed/"
OLDER, BAD = f"{COMMITTED}1-1-review-00000001", f"{COMMITTED}2-1-review-00000002"
LESSON = "# Conventions\n\n- Network calls retry with tenacity, never a hand-written loop.\n"
NOT_UTF8 = b"# Conventions\n\n- caf\xe9 au lait\n"  # Latin-1, as another tool might write it
VERSION = cache_version([".agent-memory"], Compression.ZSTD_WITHOUT_LONG)


@pytest.fixture
def tmp(tmp_path: Path) -> Iterator[Path]:
    """``tmp_path``, removed without recursion afterwards: pytest's own clean-up would recurse."""
    yield tmp_path
    for child in list(tmp_path.iterdir()):
        discard_tree(child)


@pytest.fixture
def service() -> Iterator[FakeCacheService]:
    with FakeCacheService([MAIN_REF]) as fake, default_tuning(fast_tuning([])):
        yield fake


@pytest.fixture
def github(service: FakeCacheService) -> Iterator[FakeGitHub]:
    fake = FakeGitHub(cache=service)  # entries can be listed: the run can find older ones
    with fake.serve():
        yield fake


def writes(content: str) -> ScriptedChatModel:
    return ScriptedChatModel.from_script(
        tool_call("write_file", {"file_path": MEMORY, "content": content}), "Done."
    )


def warnings(outcome: RunOutcome) -> list[str]:
    return [line for line in outcome.stdout.splitlines() if line.startswith("::warning")]


def push(runner: ActionRunner, model: ScriptedChatModel) -> RunOutcome:
    outcome = runner.run("push", push_event(), MAIN_REF, model)
    log = outcome.stdout + outcome.stderr
    assert "Traceback" not in log, log
    assert outcome.exit_code == 0, log
    return outcome


def assert_refused_and_not_saved(outcome: RunOutcome, key: str, why: str) -> None:
    [warning] = warnings(outcome)  # once, however often the entry was met
    assert key in warning, warning
    assert why in warning, warning
    assert outcome.outputs["saved_key"] == ""
    assert "saving now would hide the memory saved before" in outcome.summary
    assert key in outcome.summary  # the summary's warning names it too


def leftovers(workspace: Path) -> list[str]:
    return sorted(p.name for p in workspace.iterdir() if p.name != ".agent-memory")


# -- the local store ---------------------------------------------------------------------------


def seed_local(store_dir: Path, key: str, agents_md: bytes, created: float) -> None:
    folder = store_dir.parent / "seed" / hashlib.sha256(key.encode()).hexdigest() / ".agent-memory"
    folder.mkdir(parents=True)
    (folder / "AGENTS.md").write_bytes(agents_md)
    assert LocalDirectoryStore(store_dir, clock=lambda: created).save(key, folder).saved


def test_a_local_entry_that_is_not_utf8_is_skipped_for_the_one_before_and_not_saved_over(
    tmp: Path, github: FakeGitHub
) -> None:
    runner = ActionRunner(tmp)
    seed_local(runner.store_dir, OLDER, LESSON.encode(), created=1000.0)
    seed_local(runner.store_dir, BAD, NOT_UTF8, created=2000.0)
    model = writes(LESSON + "- Learned now.\n")

    outcome = push(runner, model)

    assert_refused_and_not_saved(outcome, BAD, "not UTF-8")
    assert "never a hand-written loop" in model.system_prompts[0]  # the entry before it
    assert outcome.outputs["memory_hit"] == "true"
    assert outcome.outputs["memory_key"] == OLDER
    keys = [entry.key for entry in LocalDirectoryStore(runner.store_dir).entries()]
    assert keys == [BAD, OLDER]  # nothing saved over the entry that could not be read


def test_a_local_entry_that_is_not_utf8_and_alone_means_no_memory_and_no_save(
    tmp: Path, github: FakeGitHub
) -> None:
    runner = ActionRunner(tmp)
    seed_local(runner.store_dir, BAD, NOT_UTF8, created=2000.0)
    model = writes(LESSON)

    outcome = push(runner, model)

    assert_refused_and_not_saved(outcome, BAD, "not UTF-8")
    assert "(No memory loaded)" in model.system_prompts[0]
    assert outcome.outputs["memory_hit"] == "false"
    # Once the entry is deleted, as the warning says, memory is saved again.
    discard_tree(runner.store_dir / hashlib.sha256(BAD.encode()).hexdigest())
    assert push(runner, writes(LESSON)).outputs["saved_key"]


def test_a_local_entry_whose_file_is_1500_folders_deep_is_refused_before_any_is_made(
    tmp: Path, github: FakeGitHub
) -> None:
    runner = ActionRunner(tmp)
    seed_local(runner.store_dir, OLDER, LESSON.encode(), created=1000.0)
    seed_local(runner.store_dir, BAD, b"# Fine\n", created=2000.0)
    entry = runner.store_dir / hashlib.sha256(BAD.encode()).hexdigest() / "entry.json"
    document = json.loads(entry.read_text())
    deep = deep_name(1_500)  # never on disk: the entry is refused before its files are read
    document["files"].append({"path": deep, "size": 0, "sha256": hashlib.sha256().hexdigest()})
    entry.write_text(json.dumps(document))
    model = writes(LESSON + "- Learned now.\n")

    outcome = push(runner, model)

    assert_refused_and_not_saved(outcome, BAD, "1500 folders deep, more than the 32 allowed")
    assert "never a hand-written loop" in model.system_prompts[0]
    assert leftovers(runner.workspace) == []


# -- the Actions cache -------------------------------------------------------------------------


def archive(*members: tuple[str, bytes | None]) -> bytes:
    """A zstd pax tar of ``.agent-memory`` with these members (None: a folder)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in [(".agent-memory", None), *members]:
            info = tarfile.TarInfo(name)
            info.type = tarfile.DIRTYPE if data is None else tarfile.REGTYPE
            info.mode = 0o755 if data is None else 0o644
            info.size = len(data or b"")
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return zstandard.ZstdCompressor(level=3).compress(buffer.getvalue())


def deep_archive(depth: int) -> bytes:
    """Every folder of the deep member listed, as GNU tar would write it, then the file."""
    folders = [(".agent-memory/" + "/".join(["d"] * n), None) for n in range(1, depth + 1)]
    leaf = (".agent-memory/" + deep_name(depth), b"deep\n")
    return archive((".agent-memory/AGENTS.md", b"# Fine\n"), *folders, leaf)


def seed_cache(service: FakeCacheService, key: str, data: bytes) -> None:
    service.seed(key, VERSION, data, scope=MAIN_REF)


@pytest.mark.parametrize("depth", [1_500, 2_100])
def test_an_archive_member_thousands_of_folders_deep_is_cache_trouble(
    tmp: Path, service: FakeCacheService, github: FakeGitHub, depth: int
) -> None:
    runner = CacheRunner(tmp, extra_env=service.env())
    seed_cache(service, OLDER, archive((".agent-memory/AGENTS.md", LESSON.encode())))
    seed_cache(service, BAD, deep_archive(depth))
    model = writes(LESSON + "- Learned now.\n")

    outcome = push(runner, model)

    assert_refused_and_not_saved(outcome, BAD, "folders deep below .agent-memory/")
    assert "never a hand-written loop" in model.system_prompts[0]
    assert outcome.outputs["memory_key"] == OLDER
    assert leftovers(runner.workspace) == []  # no .restore staging folder
    assert service.requests_to(CREATE) == []
    assert sorted(entry.key for entry in service.visible()) == [OLDER, BAD]


def test_a_cache_entry_that_is_not_utf8_is_cache_trouble(
    tmp: Path, service: FakeCacheService, github: FakeGitHub
) -> None:
    runner = CacheRunner(tmp, extra_env=service.env())
    seed_cache(service, BAD, archive((".agent-memory/AGENTS.md", NOT_UTF8)))
    model = writes(LESSON)

    outcome = push(runner, model)

    assert_refused_and_not_saved(outcome, BAD, "not UTF-8")
    assert "(No memory loaded)" in model.system_prompts[0]
    assert leftovers(runner.workspace) == []
    assert service.requests_to(CREATE) == []


def test_a_tree_thousands_of_folders_deep_planted_at_memory_path_is_cleared(tmp: Path) -> None:
    """A pull request can put anything at memory_path in the checkout: it is removed before the
    restore without recursion, and the run goes on."""
    runner = ActionRunner(tmp)
    runner.workspace.mkdir(parents=True)
    make_deep_tree(runner.workspace / ".agent-memory", 2_000)

    outcome = push(runner, writes(LESSON))

    assert outcome.outputs["saved_key"]
    assert (runner.workspace / ".agent-memory" / "AGENTS.md").read_text() == LESSON
