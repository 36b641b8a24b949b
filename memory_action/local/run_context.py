"""The ``RunContext`` of a run at a terminal: trusted (the person there chose to run it), with a
run id of its own, and for ``--local`` the pull request a local change stands for."""

from __future__ import annotations

import time
from pathlib import Path

from memory_action.local.git_diff import LocalChange
from memory_action.memory.trust import Trust
from memory_action.run.context import PullRequestRef, RunContext

LOCAL_EVENT = "local"  # not a GitHub event: no promotion, no comment is read or posted


def local_run_id() -> str:
    return f"local{time.time_ns()}"  # unique per run: saved keys are immutable


def write_note(*, no_save: bool) -> str:
    return "--no-save was given" if no_save else ""


def checkout_context(change: LocalChange, workspace: Path, *, no_save: bool) -> RunContext:
    """A local change reviewed as a pull request GitHub never saw: its number is 0, its base
    and the default branch are the branches git names (for the memory scope's keys)."""
    info, git = change.info(), change.git
    default = git.default_branch()
    default_branch = branch_name(git.full_ref(default)) if default else ""
    base_branch = branch_name(git.full_ref(change.base)) or default_branch
    repository = git.github_repository() or git.root.name
    current = git.current_branch()
    return RunContext(
        event_name=LOCAL_EVENT,
        action="",
        repository=repository,
        server_url="",
        api_url="",
        ref=f"refs/heads/{current}" if current else "",
        sha=info.head_sha,
        default_branch=default_branch or base_branch or change.base,
        run_id=local_run_id(),
        run_attempt="1",
        actor="local",
        workspace=workspace,
        pull_request=PullRequestRef(
            number=info.number,
            head_repo=repository,
            base_ref=base_branch or change.base,
            head_ref=info.head_ref,
            head_sha=info.head_sha,
            author=info.author,
            author_association="OWNER",
            is_fork=False,
        ),
        comment_body="",
        comment_author_association="",
        trust=Trust.TRUSTED,
        may_write=not no_save,
        write_note=write_note(no_save=no_save),
    )


def branch_name(full_ref: str) -> str:
    """``refs/heads/x`` and ``refs/remotes/<remote>/x`` → ``x``; anything else → ""."""
    if full_ref.startswith("refs/heads/"):
        return full_ref.removeprefix("refs/heads/")
    if full_ref.startswith("refs/remotes/"):
        return full_ref.removeprefix("refs/remotes/").partition("/")[2]
    return ""
