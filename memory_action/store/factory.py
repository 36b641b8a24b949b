"""Which store a run of the action uses: the Actions cache, else a local folder, else none."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memory_action.context import RunContext
from memory_action.gha import Workflow
from memory_action.settings import Settings, StoreKind
from memory_action.store.base import LayerAdmin, MemoryStore
from memory_action.store.local import STORE_DIR_VARIABLE

if TYPE_CHECKING:
    from memory_action.store.actions_cache import ActionsCacheStore


@dataclass(frozen=True)
class StoreChoice:
    store: MemoryStore | None
    note: str = ""  # why there is no store
    write_note: str = ""  # why the store will not take saves ("" when it will)
    layer_admin: Callable[[str], LayerAdmin] | None = None  # lists and prunes a ref's entries


def actions_store(
    settings: Settings, context: RunContext, env: Mapping[str, str], workflow: Workflow
) -> StoreChoice:
    """The Actions cache when this step can reach it; ``MEMORY_AGENT_STORE_DIR`` otherwise
    (a self-hosted runner with a persistent disk, or tests); else memory is off for the run.
    With ``memory_store: git`` or ``auto``, committed memory lives on a git branch instead
    (``git_choice``)."""
    if not settings.enable_memory:
        return StoreChoice(None, "enable_memory is false")
    choice = _cache_choice(settings, context, env, workflow)
    if settings.memory_store is StoreKind.CACHE or not settings.github_token:
        return choice
    from memory_action.store.git_choice import with_git  # noqa: PLC0415

    return with_git(settings, context, workflow, choice)


def _cache_choice(
    settings: Settings, context: RunContext, env: Mapping[str, str], workflow: Workflow
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
        admin = _cache_admin(settings, context, store, workflow)
        return StoreChoice(store, write_note=note, layer_admin=admin)
    store_dir = env.get(STORE_DIR_VARIABLE, "").strip()
    if store_dir:
        from memory_action.store.hygiene import LocalLayerAdmin  # noqa: PLC0415
        from memory_action.store.local import LocalDirectoryStore  # noqa: PLC0415

        local = LocalDirectoryStore(Path(store_dir))
        return StoreChoice(local, layer_admin=lambda _ref: LocalLayerAdmin(local))
    return StoreChoice(None, decision.reason)


def _cache_admin(
    settings: Settings, context: RunContext, store: ActionsCacheStore, workflow: Workflow
) -> Callable[[str], LayerAdmin] | None:
    """The cache REST API through the workflow token (``actions: read`` lists, ``actions:
    write`` deletes; without them it quietly does nothing)."""
    if not settings.github_token:
        return None
    from memory_action.store.cache_admin import CacheAdmin  # noqa: PLC0415
    from memory_action.store.hygiene import CacheLayerAdmin  # noqa: PLC0415

    admin = CacheAdmin.from_token(
        settings.github_token.reveal(), context.repository, workflow, context.api_url
    )
    return lambda ref: CacheLayerAdmin(admin=admin, ref=ref, version=store.version)
