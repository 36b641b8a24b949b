"""A whole run scans each memory text for secrets once (issue 19), though the restore, the
prompt, the edit tools and the save each check it; the agent's tools run in the run's context."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memory_action import pipeline
from memory_action.safety.scrub import ScanCache, scan_once
from memory_action.store.local import LocalDirectoryStore
from tests.fakes.github_api import FakeGitHub, FakePullRequest, changed_file
from tests.fakes.runner import ActionRunner, pull_request_event
from tests.fakes.scripted_model import ScriptedChatModel, tool_call

MEMORY = ".agent-memory/AGENTS.md"
COMMITTED = "memory-agent/v1/memory-agent/repo/committed/1-1"
RULES = "".join(f"- Rule {n:03d}: the upload step retries once on a 502.\n" for n in range(60))


def test_each_memory_text_is_scanned_once_in_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[ScanCache] = []

    @contextmanager
    def recorded() -> Iterator[ScanCache]:
        with scan_once() as cache:
            opened.append(cache)
            yield cache

    monkeypatch.setattr(pipeline, "scan_once", recorded)
    runner = ActionRunner(tmp_path)
    seed = tmp_path / "seed" / ".agent-memory"
    seed.mkdir(parents=True)
    (seed / "AGENTS.md").write_text(f"# Kept\n\n{RULES}")
    LocalDirectoryStore(runner.store_dir).save(COMMITTED, seed)
    edit = {"file_path": MEMORY, "old_string": "# Kept\n", "new_string": "# Kept\n- New fact.\n"}
    model = ScriptedChatModel.from_script(tool_call("edit_file", edit), "Done.")
    github = FakeGitHub()
    github.add_pull(FakePullRequest(files=[changed_file("a.py", "+x\n")]))

    with github.serve():
        outcome = runner.run("pull_request", pull_request_event(), "refs/pull/7/merge", model)

    assert outcome.exit_code == 0, outcome.stdout
    [cache] = opened  # the run opened its own cache
    assert cache.scanned, "the run's memory went through the cache"
    assert max(cache.scanned.values()) == 1, "no text was scanned twice"
    # The edited memory is checked by the edit tool (in the agent's threads), by the prompt
    # middleware and by the save: three checks, one scan.
    assert max(cache.asked.values()) >= 3
