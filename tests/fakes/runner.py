"""A runner-like environment for running the action's ``main()`` in-process.

It lays out what the Actions runner gives a Docker action: ``INPUT_*`` for every input with its
default (as the runner does), ``GITHUB_*``, an event file, ``GITHUB_OUTPUT`` and
``GITHUB_STEP_SUMMARY`` files, and a workspace folder.
"""

from __future__ import annotations

import io
import os
import re
import time
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from memory_action.evaluation.runner_env import (
    INPUT_DEFAULTS,
    JOB,
    Repository,
    RunFiles,
    parse_outputs,
    runner_env,
)
from memory_action.main import main
from tests.fakes.github_api import API_URL, BASE_SHA, HEAD_SHA, REPOSITORY, WORKFLOW_REF

TOKEN = "ghs_" + "W0rkf1ow" * 5
REPO_ROOT = Path(__file__).resolve().parents[2]
# Never inherited by a child process: a developer's or a CI job's settings would change what runs
# (ACTIONS_RUNTIME_TOKEN, say, would send the memory to the real Actions cache).
SCRUBBED_PREFIXES = (
    "GITHUB_",
    "ACTIONS_",
    "INPUT_",
    "RUNNER_",
    "MEMORY_AGENT_",
    "OPENAI_",
    "ANTHROPIC_",
    "LANGSMITH_",
    "LANGCHAIN_",
)
ACTION_DEFAULTS = {**INPUT_DEFAULTS, "github_token": TOKEN}
GITHUB = Repository(full_name=REPOSITORY, api_url=API_URL, workflow_ref=WORKFLOW_REF)


def child_env(work: Path, *, code: Path = REPO_ROOT, **extra: str) -> dict[str, str]:
    """The environment of a child process that runs the action from ``code`` (a checkout):
    this one less the scrubbed variables, HOME in ``work``, 127.0.0.1 never proxied."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(SCRUBBED_PREFIXES)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(code), env.get("PYTHONPATH", "")]))
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env["HOME"] = str(work / "home")  # nothing may fall back to the real home folder
    env.update(extra)
    return env


def pull_request_event(
    number: int = 7,
    *,
    fork: bool = False,
    association: str = "MEMBER",
    action: str = "opened",
    base_ref: str = "main",
    head_sha: str = HEAD_SHA,
    base_sha: str = BASE_SHA,
) -> dict[str, Any]:
    head_repo = "outside-dev/octo-repo" if fork else REPOSITORY
    return {
        "action": action,
        "number": number,
        "pull_request": {
            # As GitHub's webhook payload has them; a run reads the pull request from here.
            "number": number,
            "title": "Add a retry to the fetcher",
            "body": "Retries flaky downloads.",
            "html_url": f"https://github.com/{REPOSITORY}/pull/{number}",
            "draft": False,
            "author_association": association,
            "user": {"login": "outside-dev" if fork else "mona"},
            "head": {"ref": "retry-fetcher", "sha": head_sha, "repo": {"full_name": head_repo}},
            "base": {"ref": base_ref, "sha": base_sha, "repo": {"full_name": REPOSITORY}},
        },
        "repository": {"full_name": REPOSITORY, "default_branch": "main"},
    }


def comment_event(
    body: str, association: str = "COLLABORATOR", number: int = 7, login: str = "mona"
) -> dict[str, Any]:
    """A new comment by ``login`` on pull request ``number`` (an ``issue_comment`` event)."""
    return {
        "action": "created",
        "issue": {"number": number, "pull_request": {"url": "x"}, "user": {"login": "mona"}},
        "comment": {"body": body, "author_association": association, "user": {"login": login}},
        "repository": {"full_name": REPOSITORY, "default_branch": "main"},
    }


def reply_event(
    to: int, body: str, login: str = "mona", comment_id: int = 9_000_001
) -> dict[str, Any]:
    """``pull_request_review_comment``: ``login``'s reply ``comment_id`` to review comment ``to``
    of pull request 7."""
    event = pull_request_event(action="created")
    event["comment"] = {
        "id": comment_id,
        "in_reply_to_id": to,
        "body": body,
        "author_association": "MEMBER",
        "user": {"login": login, "type": "User"},
    }
    return event


def push_event(sha: str | None = None) -> dict[str, Any]:
    """A push to main; with ``sha``, also its head commit (through which a merged PR is found)."""
    event: dict[str, Any] = {"ref": "refs/heads/main"}
    if sha is not None:
        event.update(after=sha, head_commit={"id": sha}, commits=[{"id": sha}])
    event["repository"] = {"full_name": REPOSITORY, "default_branch": "main"}
    return event


@dataclass
class RunOutcome:
    exit_code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str


@dataclass
class ActionRunner:
    root: Path
    inputs: dict[str, str] = field(default_factory=dict)
    extra_env: dict[str, str] = field(default_factory=dict)
    run_id: int = 1000
    waits: list[float] = field(default_factory=list)  # rate-limit waits, recorded, never slept
    timer: Callable[[], float] = time.monotonic  # what timeout_minutes is measured on

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def store_dir(self) -> Path:
        return self.root / "store"

    def env(self, event_name: str, event: dict[str, Any], ref: str) -> dict[str, str]:
        self.run_id += 1
        env = runner_env(
            files=RunFiles(folder=self.root / f"run-{self.run_id}"),
            repository=GITHUB,
            event_name=event_name,
            event=event,
            ref=ref,
            sha=HEAD_SHA,
            run_id=self.run_id,
            inputs={"github_token": TOKEN, **self.inputs},
            workspace=self.workspace,
            store_dir=self.store_dir,
        )
        env.update(self.extra_env)
        return env

    def run(
        self,
        event_name: str,
        event: dict[str, Any],
        ref: str,
        model: BaseChatModel | Callable[[], BaseChatModel] | None = None,
    ) -> RunOutcome:
        env = self.env(event_name, event, ref)
        build = (lambda: model) if isinstance(model, BaseChatModel) else model
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = main(env, build_model=build, sleep=self.waits.append, timer=self.timer)
        return RunOutcome(
            exit_code=code,
            stdout=out.getvalue(),
            stderr=err.getvalue(),
            outputs=parse_outputs(Path(env["GITHUB_OUTPUT"]).read_text()),
            summary=Path(env["GITHUB_STEP_SUMMARY"]).read_text(),
        )


class CacheRunner(ActionRunner):
    """``ActionRunner`` without ``MEMORY_AGENT_STORE_DIR``: the Actions cache is the store."""

    def env(self, event_name: str, event: dict[str, Any], ref: str) -> dict[str, str]:
        env = super().env(event_name, event, ref)
        del env["MEMORY_AGENT_STORE_DIR"]
        return env


def is_save_key(key: str, prefix: str, run_id: int) -> bool:
    """Whether ``key`` is the save key of run ``run_id``'s job under ``prefix`` (its last part
    is random: ``<run_id>-<attempt>-<job>-<nonce>``)."""
    return re.fullmatch(rf"{re.escape(prefix)}{run_id}-1-{JOB}-[0-9a-f]{{8}}", key) is not None
