"""Which runs write committed memory through git although their cache token is read-only."""

from __future__ import annotations

import dataclasses

from memory_action.memory.trust import Trust
from memory_action.run.context import RunContext
from memory_action.run.settings import Settings, StoreKind
from memory_action.store_wiring import allow_git_writes, origin_of
from tests.unit.test_context import context_of

GIT = Settings(memory_store=StoreKind.GIT)


def read_only_run(trust: Trust = Trust.TRUSTED) -> RunContext:
    push = context_of("push_main")
    note = "workflow_run runs get a read-only cache token"
    return dataclasses.replace(
        push, event_name="workflow_run", may_write=False, write_note=note, trust=trust
    )


def test_a_trusted_run_with_a_read_only_cache_token_writes_through_git() -> None:
    context = read_only_run()
    assert allow_git_writes(GIT, context).may_write
    assert not allow_git_writes(Settings(), context).may_write
    untrusted = read_only_run(Trust.UNTRUSTED)
    assert not allow_git_writes(GIT, untrusted).may_write


def test_pull_request_runs_keep_their_rules() -> None:
    for case in ("issue_comment_pr_collaborator", "pull_request_target_fork"):
        context = context_of(case)
        assert allow_git_writes(GIT, context) == context


def test_the_commit_message_names_the_run_event_and_pull_request() -> None:
    origin = origin_of(context_of("issue_comment_pr_collaborator"))
    assert "actions/runs/" in origin and "Event: issue_comment" in origin
    assert "Pull request: #" in origin
