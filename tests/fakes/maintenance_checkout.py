"""Maintenance runs on a push to main over a real git checkout: the runner, a run, a write."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.fakes.git_repo import GitRepo, isolated_git_env
from tests.fakes.runner import ActionRunner, RunOutcome, push_event
from tests.fakes.scripted_model import ScriptedChatModel, tool_call

MEMORY = ".agent-memory/AGENTS.md"
MAIN = "refs/heads/main"
APP = "def fetch_retry(url):\n    return url\n"


def checkout_runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **inputs: str) -> ActionRunner:
    """A maintenance runner whose workspace is a git checkout of main holding ``src/app.py``."""
    env = isolated_git_env(tmp_path / "home")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    runner = ActionRunner(tmp_path, inputs={"mode": "maintenance", **inputs})
    repo = GitRepo(runner.workspace, env)
    repo.git("init", "--quiet", "--initial-branch=main")
    repo.write("src/app.py", APP)
    repo.commit("Start")
    return runner


def maintain(runner: ActionRunner, *steps: object) -> tuple[RunOutcome, ScriptedChatModel]:
    """One maintenance run with the scripted ``steps`` (none: any model call fails the run)."""
    model = ScriptedChatModel.from_script(*steps)  # type: ignore[arg-type]
    outcome = runner.run("push", push_event(), MAIN, model)
    assert outcome.exit_code == 0, outcome.stdout + outcome.stderr
    return outcome, model


def write(text: str) -> object:
    return tool_call("write_file", {"file_path": MEMORY, "content": text})


def seed_without_digest(runner: ActionRunner, text: str) -> None:
    """Memory as review runs leave it: saved without a maintenance digest (the checkout is
    hidden, so citations cannot be checked and no digest is kept)."""
    git, hidden = runner.workspace / ".git", runner.root / "hidden-git"
    shutil.move(git, hidden)
    try:
        maintain(runner, write(text), "Seeded.")
    finally:
        shutil.move(hidden, git)
