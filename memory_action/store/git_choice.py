"""``memory_store: git`` and ``auto``: committed memory on the repository's memory branch, the
cache for pull request overlays (and a copy), chosen for a run of the action."""

from __future__ import annotations

import dataclasses

from memory_action.context import READ_ONLY_CACHE_EVENTS, RunContext, Trust
from memory_action.gha import Workflow
from memory_action.scope import Layer, compute_scope
from memory_action.settings import Settings, StoreKind
from memory_action.store.base import LayerAdmin
from memory_action.store.factory import StoreChoice
from memory_action.store.git import GitMemoryStore
from memory_action.store.tiered import TieredAdmin, TieredStore


def uses_git(settings: Settings) -> bool:
    return settings.enable_memory and settings.memory_store is not StoreKind.CACHE


def allow_git_writes(settings: Settings, context: RunContext) -> RunContext:
    """A trusted run kept from writing only by its read-only cache token (``workflow_run``)
    writes committed memory through git, which that token does not govern. A run of a pull
    request still writes only its overlay, which lives in the cache."""
    read_only_token = context.event_name in READ_ONLY_CACHE_EVENTS
    if not uses_git(settings) or context.may_write or not read_only_token:
        return context
    if context.trust is not Trust.TRUSTED or context.pull_request is not None:
        return context
    return dataclasses.replace(context, may_write=True, write_note="")


def origin_of(context: RunContext) -> str:
    """What a memory commit says about the run that made it."""
    run = f"{context.server_url}/{context.repository}/actions/runs/{context.run_id}"
    lines = [
        f"Run: {run} (attempt {context.run_attempt})",
        f"Event: {context.event_name} on {context.ref or 'no ref'}",
    ]
    if context.pull_request is not None:
        lines.append(f"Pull request: #{context.pull_request.number}")
    if context.actor:
        lines.append(f"Actor: {context.actor}")
    if context.comment_url:
        lines.append(f"Comment: {context.comment_url}")
    return "\n".join(lines)


def with_git(
    settings: Settings, context: RunContext, workflow: Workflow, cache: StoreChoice
) -> StoreChoice:
    """The run's store with committed memory on git (``cache``: the choice without git)."""
    from memory_action.github.client import GitHubClient  # noqa: PLC0415 - PyGithub loads slowly
    from memory_action.store.git_remote import GitHubGitRemote  # noqa: PLC0415

    client = GitHubClient(settings.github_token.reveal(), context.api_url, context.repository)
    remote = GitHubGitRemote(client.repository, context.repository, workflow.redact)
    git = GitMemoryStore(remote, origin=origin_of(context), masked=lambda: workflow.masked_values)
    scope = compute_scope(settings, context)

    def is_committed(key: str) -> bool:
        return scope.layer_of(key) is Layer.COMMITTED

    explicit = settings.memory_store is StoreKind.GIT
    store = TieredStore(
        git,
        cache.store,
        is_committed=is_committed,
        migrate=scope.may_write and scope.layer is Layer.COMMITTED,
        report=workflow.warning if explicit else workflow.notice,
    )
    why = "memory_store: git" if explicit else "memory_store: auto; the cache if git refuses"
    workflow.info(f"Committed memory lives on the {git.name} ({why}).")
    cache_admin = cache.layer_admin

    def admin(ref: str) -> LayerAdmin:
        return TieredAdmin(git, cache_admin(ref) if cache_admin else None, is_committed)

    # The cache's own limits (ACTIONS_CACHE_MODE) bind overlays only: committed saves go to git.
    note = cache.write_note if scope.layer is Layer.OVERLAY else ""
    return StoreChoice(store, write_note=note, layer_admin=admin)
