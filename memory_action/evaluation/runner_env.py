"""What the Actions runner gives a Docker action, as one environment for ``main()`` in-process.

``INPUT_*`` for every input with its default (as the runner does), ``GITHUB_*``, an event file,
``GITHUB_OUTPUT`` and ``GITHUB_STEP_SUMMARY`` files and ``MEMORY_AGENT_STORE_DIR`` (a local
directory store). ``memory-agent eval`` runs every step of an episode in it; the tests' runner
(``tests/fakes/runner.py``) builds its environments here too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

JOB = "review"  # GITHUB_JOB of every run
# action.yml's defaults, less the token (the caller's own).
INPUT_DEFAULTS = {
    "enable_memory": "true",
    "memory_scope": "repo",
    "agent_name": "memory-agent",
    "memory_path": ".agent-memory",
    "memory_sources": "AGENTS.md",
    "model": "github:openai/gpt-4.1-mini",
    "model_base_url": "",
    "model_api_key": "",
    "prompt": "",
    "mode": "auto",
    "max_memory_kb": "auto",
    "timeout_minutes": "10",
    "post_comment": "true",
    "max_input_tokens": "",
    "max_model_calls": "12",
    "exclude": "",
}


@dataclass(frozen=True, kw_only=True)
class Repository:
    """Where the runs happen: the repository, its API and its workflow."""

    full_name: str
    api_url: str
    workflow_ref: str
    actor: str = "mona"


@dataclass(frozen=True, kw_only=True)
class RunFiles:
    """One run's folder: its event file, its output and summary files."""

    folder: Path

    @property
    def output(self) -> Path:
        return self.folder / "output"

    @property
    def summary(self) -> Path:
        return self.folder / "summary"


def runner_env(
    *,
    files: RunFiles,
    repository: Repository,
    event_name: str,
    event: Mapping[str, Any],
    ref: str,
    sha: str,
    run_id: int,
    inputs: Mapping[str, str],
    workspace: Path,
    store_dir: Path | None,
) -> dict[str, str]:
    """The environment of one run; writes its event file and empty output and summary files.
    ``store_dir`` None: no local store (the Actions cache is the store)."""
    files.folder.mkdir(parents=True)
    workspace.mkdir(parents=True, exist_ok=True)
    event_path = files.folder / "event.json"
    event_path.write_text(json.dumps(event))
    files.output.touch()
    files.summary.touch()
    env = {f"INPUT_{name.upper()}": value for name, value in {**INPUT_DEFAULTS, **inputs}.items()}
    env.update(
        GITHUB_ACTIONS="true",
        GITHUB_EVENT_NAME=event_name,
        GITHUB_EVENT_PATH=str(event_path),
        GITHUB_REPOSITORY=repository.full_name,
        GITHUB_REF=ref,
        GITHUB_SHA=sha,
        GITHUB_RUN_ID=str(run_id),
        GITHUB_RUN_ATTEMPT="1",
        GITHUB_JOB=JOB,
        GITHUB_WORKFLOW_REF=repository.workflow_ref,
        GITHUB_ACTOR=repository.actor,
        GITHUB_SERVER_URL="https://github.com",
        GITHUB_API_URL=repository.api_url,
        GITHUB_WORKSPACE=str(workspace),
        GITHUB_OUTPUT=str(files.output),
        GITHUB_STEP_SUMMARY=str(files.summary),
        RUNNER_TEMP=str(files.folder),
        LANGSMITH_TRACING="false",
    )
    if store_dir is not None:
        env["MEMORY_AGENT_STORE_DIR"] = str(store_dir)
    return env


def parse_outputs(text: str) -> dict[str, str]:
    """Parse ``name<<DELIM`` heredocs of a ``GITHUB_OUTPUT`` file as the runner does."""
    outputs: dict[str, str] = {}
    for match in re.finditer(r"^(\w+)<<(\S+)\n(.*?)\n\2$", text, re.DOTALL | re.MULTILINE):
        outputs[match.group(1)] = match.group(3)
    return outputs
