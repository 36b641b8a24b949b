"""Which store a run of the action uses, built from its settings and context: the Actions cache,
else a local folder, else none; with ``memory_store: git`` or ``auto``, committed memory on the
repository's memory branch and the cache for pull request overlays (and a copy).

The stores know nothing of settings, contexts or scopes: this module reads them and hands each
store plain values. It builds no GitHub client: the run's one client comes from ``main``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memory_action.gha import Workflow
from memory_action.memory.state import Layer
from memory_action.memory.trust import Trust
from memory_action.run.context import READ_ONLY_CACHE_EVENTS, RunContext
from memory_action.run.scope import compute_scope
from memory_action.run.settings import Settings, StoreKind
from memory_action.store.base import LayerAdmin, MemoryStore
from memory_action.store.local import STORE_DIR_VARIABLE

if TYPE_CHECKING:
    from memory_action.github.client import GitHubClient
    from memory_action.store.actions_cache import ActionsCacheStore


@dataclass(frozen=True, kw_only=True)
class StoreChoice:
    store: MemoryStore | None
    note: str = ""  # why there is no store
    write_note: str = ""  # why the store will not take saves ("" when it will)
    layer_admin: Callable[[str], LayerAdmin] | None = None  # lists and prunes a ref's entries


def actions_store(
    settings: Settings,
    context: RunContext,
    env: Mapping[str, str],
    workflow: Workflow,
    github: GitHubClient,
) -> StoreChoice:
    """The Actions cache when this step can reach it; ``MEMORY_AGENT_STORE_DIR`` otherwise
    (a self-hosted runner with a persistent disk, or tests); else memory is off for the run.
    With ``memory_store: git`` or ``auto``, committed memory lives on a git branch instead.
    ``github`` is the run's client: read only when the run has a token."""
    if not settings.enable_memory:
        return StoreChoice(store=None, note="enable_memory is false")
    choice = _cache_choice(settings, env, workflow, github)
    if settings.memory_store is StoreKind.CACHE or not settings.github_token:
        return choice
    return _with_git(settings, context, workflow, github, choice)


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


def _cache_choice(
    settings: Settings, env: Mapping[str, str], workflow: Workflow, github: GitHubClient
) -> StoreChoice:
    from memory_action.store.cache_env import decide_cache_config  # noqa: PLC0415

    decision = decide_cache_config(env)
    if decision.config is not None:
        from memory_action.store.actions_cache import ActionsCacheStore  # noqa: PLC0415

        config = decision.config
        store = ActionsCacheStore(config, settings.memory_path, workflow)
        if not config.may_read:
            workflow.notice(f"ACTIONS_CACHE_MODE={config.mode}: memory is not restored.")
        note = "" if config.may_write else f"ACTIONS_CACHE_MODE={config.mode} forbids cache writes"
        admin = _cache_admin(settings, github, store, workflow)
        return StoreChoice(store=store, write_note=note, layer_admin=admin)
    store_dir = env.get(STORE_DIR_VARIABLE, "").strip()
    if store_dir:
        from memory_action.store.hygiene import LocalLayerAdmin  # noqa: PLC0415
        from memory_action.store.local import LocalDirectoryStore  # noqa: PLC0415

        local = LocalDirectoryStore(Path(store_dir))
        return StoreChoice(store=local, layer_admin=lambda _ref: LocalLayerAdmin(store=local))
    return StoreChoice(store=None, note=decision.reason)


def _cache_admin(
    settings: Settings, github: GitHubClient, store: ActionsCacheStore, workflow: Workflow
) -> Callable[[str], LayerAdmin] | None:
    """The cache REST API through the workflow token (``actions: read`` lists, ``actions:
    write`` deletes; without them it quietly does nothing), sent by the run's GitHub client."""
    if not settings.github_token:
        return None
    from memory_action.store.cache_admin import CacheAdmin  # noqa: PLC0415
    from memory_action.store.hygiene import CacheLayerAdmin  # noqa: PLC0415

    admin = CacheAdmin(github.repository.requester, github.repo_name, workflow)
    return lambda ref: CacheLayerAdmin(admin=admin, ref=ref, version=store.version)


def _with_git(
    settings: Settings,
    context: RunContext,
    workflow: Workflow,
    github: GitHubClient,
    cache: StoreChoice,
) -> StoreChoice:
    """The run's store with committed memory on git (``cache``: the choice without git)."""
    from memory_action.store.git import GitMemoryStore  # noqa: PLC0415
    from memory_action.store.git_remote import GitHubGitRemote  # noqa: PLC0415
    from memory_action.store.tiered import TieredAdmin, TieredStore  # noqa: PLC0415

    remote = GitHubGitRemote(github.repository, context.repository, workflow.redact)
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
        return TieredAdmin(
            git=git, cache=cache_admin(ref) if cache_admin else None, is_committed=is_committed
        )

    # The cache's own limits (ACTIONS_CACHE_MODE) bind overlays only: committed saves go to git.
    note = cache.write_note if scope.layer is Layer.OVERLAY else ""
    return StoreChoice(store=store, write_note=note, layer_admin=admin)
