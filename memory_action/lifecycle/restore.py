"""The memory a run starts from: the store's layers, merged, with what a merged pull request's
comment taught promoted in (``promotion``); an empty start when memory is off or there is
nothing to restore.

The review flow and the comment-command flow both start here, so neither calls into the other.
"""

from __future__ import annotations

from pathlib import Path

from memory_action.lifecycle.layers import (
    Committed,
    Fetched,
    LayerStore,
    StartingMemory,
    restore_layers,
)
from memory_action.lifecycle.promotion import merge_comment_learning, overlay_from_comment
from memory_action.memory.provenance import Provenance
from memory_action.plan import Plan
from memory_action.run.context import fork_writable_ref
from memory_action.safety.trees import remove_tree
from memory_action.store.actions_cache import ActionsCacheStore
from memory_action.store.base import MemoryStore, RestoreResult


def clear_folder(folder: Path) -> None:
    """Memory comes only from the store: whatever the checkout has at ``memory_path`` (a pull
    request could plant a file there, a link or a tree of any depth) is removed before the
    restore, without following links or recursing."""
    if folder.is_symlink() or folder.exists():
        remove_tree(folder)


def _empty_start() -> StartingMemory:
    committed = Committed(
        newest=Fetched(result=RestoreResult.miss()),
        text="",
        holds=frozenset(),
        provenance=Provenance(records={}),
    )
    return StartingMemory(
        restored=RestoreResult.miss(),
        committed=committed,
        overlay=None,
        text="",
        provenance=Provenance(records={}),
        notes=(),
    )


def restore(the_plan: Plan) -> StartingMemory:
    scope, store, log = the_plan.scope, the_plan.services.store, the_plan.log
    if not the_plan.settings.enable_memory:
        return _empty_start()
    clear_folder(the_plan.folder)
    if scope.restore is None:
        log.info(f"Memory: nothing to restore ({scope.write_note or scope.description}).")
        return _empty_start()
    if store is None:
        log.notice(f"Memory is off for this run: {the_plan.services.store_note}")
        return _empty_start()
    with log.group(f"Restore {scope.description} from {store.name}"):
        start = restore_layers(layers_of(the_plan, store), scope, overlay_from_comment(the_plan))
        start = merge_comment_learning(the_plan, start)
        _log_restore(the_plan, start)
    return start


def _log_restore(the_plan: Plan, start: StartingMemory) -> None:
    log, restored = the_plan.log, start.restored
    for warning in start.unread:
        log.warning(f"Memory was not restored: {warning}")
    if restored.hit:
        log.info(f"Restored memory from key {restored.matched_key}")
    elif not start.unread:
        log.info(f"No memory saved yet for {the_plan.scope.description}")
    for note in start.notes:
        log.info(f"Memory: {note}")


def layers_of(the_plan: Plan, store: MemoryStore) -> LayerStore:
    """The run's view of the store's layers."""
    # Only the Actions cache answers from the run's ref chain, a fork's merge ref first.
    scoped = isinstance(store, ActionsCacheStore)
    return LayerStore(
        store=store,
        scratch=the_plan.scratch,
        lister=the_plan.services.layer_admin,
        lossless=the_plan.services.lossless,
        masked=the_plan.masked,
        fork_writable_ref=fork_writable_ref(the_plan.context) if scoped else "",
    )
