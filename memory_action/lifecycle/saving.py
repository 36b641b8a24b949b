"""Saving memory: only a changed, valid memory of a finished run that may write, merged with
what was committed meanwhile, within budget; then the entries it holds are deleted."""

from __future__ import annotations

from dataclasses import replace

from memory_action.lifecycle.layers import StartingMemory, prepare_save, write_entry
from memory_action.lifecycle.restore import layers_of
from memory_action.memory.provenance import Provenance
from memory_action.memory.review_ledger import ReviewLedger
from memory_action.plan import Plan
from memory_action.store.base import SaveResult

# A store with compare-and-swap (the git store) refuses a save that lost a race: the run merges
# with the winner and tries again, a bounded number of times. Every lost race is another run's
# save that went through, so runs saving at once need at most as many attempts as there are of
# them: 30 covers a large matrix.
MAX_SAVE_ATTEMPTS = 30


def save(
    the_plan: Plan,
    start: StartingMemory,
    final: str,
    provenance: Provenance,
    *,
    finished: bool = True,
    ledger: ReviewLedger | None = None,
    maintained: str = "",
) -> SaveResult:
    """Save a changed, valid memory of a finished run that may write, merged with what was
    committed meanwhile; then delete the entries the new one holds. ``ledger``: the pull
    request's findings ledger after this run (a changed ledger is a change to save too);
    ``maintained``: what this maintenance saw (saved so the next one can skip the model)."""
    key = the_plan.scope.save_key or ""
    changed = (
        final != start.layer_text
        or (ledger is not None and ledger != _ledger_of(start))
        or (bool(maintained) and maintained != start.last_maintained)
    )
    reason = (
        _why_not_save(the_plan, start, changed=changed)
        if finished
        else "the run did not finish (the model's quota ran out)"
    )
    store = the_plan.services.store
    if reason is not None or store is None:
        reason = reason or "no store"
        the_plan.log.info(f"Memory not saved: {reason}.")
        return SaveResult(saved=False, key=key, reason=reason)
    layers = layers_of(the_plan, store)
    result = SaveResult(saved=False, key=key)
    for _ in range(MAX_SAVE_ATTEMPTS):
        text, state, provenance_saved, holds, notes = prepare_save(
            layers, the_plan.scope, start, final, provenance
        )
        if ledger is not None:
            state = replace(state, review=ledger)
        if maintained and text == final:  # merged with another run's memory: check it again
            state = replace(state, maintained=maintained)
        for note in notes:
            the_plan.log.info(f"Memory: {note}")
        over = len(text.encode()) - the_plan.settings.max_memory_bytes
        if over > 0:
            reason = (
                f"it is {over} bytes over max_memory_kb={the_plan.settings.max_memory_kb} after "
                "merging; nothing was cut, the next run merges again and consolidates"
            )
            the_plan.log.warning(f"Memory not saved: {reason}.")
            return SaveResult(saved=False, key=key, reason=reason)
        write_entry(the_plan.folder, text, state, provenance_saved, the_plan.masked)
        result = store.save(key, the_plan.folder)
        if not result.raced:
            break
        the_plan.log.info(f"Memory: {result.reason}; merging again")
    _report_save(the_plan, result)
    if result.saved:
        _prune(the_plan, holds, result.key)
    return result


def _ledger_of(start: StartingMemory) -> ReviewLedger | None:
    state = start.overlay.state if start.overlay is not None else None
    return state.review if state is not None else None


def _report_save(the_plan: Plan, result: SaveResult) -> None:
    if result.saved:
        note = f" ({result.reason})" if result.reason else ""
        the_plan.log.info(f"Saved memory as {result.key}{note}")
    elif result.write_denied:
        the_plan.log.notice(
            f"Memory was not saved: {result.reason}. This run's memory changes are shown in the "
            "job summary (and the pull request comment)."
        )
    else:
        the_plan.log.warning(f"Memory was not saved: {result.reason.removeprefix('not saved: ')}")


def _prune(the_plan: Plan, holds: frozenset[str], saved_key: str) -> None:
    """Delete the entries the new save holds (cache hygiene); trouble only warns."""
    admin = the_plan.services.layer_admin
    key = the_plan.scope.save_key
    if admin is None or key is None or not holds:
        return
    prefix = key[: key.rindex("/") + 1]
    deleted = admin(the_plan.context.ref).prune(
        prefix=prefix, superseded=holds, saved_key=saved_key
    )
    if deleted:
        the_plan.log.info(f"Deleted {deleted} superseded memory entries under {prefix}")


def _why_not_save(the_plan: Plan, start: StartingMemory, *, changed: bool) -> str | None:
    scope, services = the_plan.scope, the_plan.services
    if not the_plan.settings.enable_memory:
        return "enable_memory is false"
    if not changed:
        return "the agent did not change it"  # nor the findings ledger
    if start.unread:
        return "memory could not be restored, and saving now would hide the memory saved before"
    if not scope.may_write or scope.save_key is None:
        return scope.write_note or "this run may not write memory"
    if services.store is None:
        return services.store_note
    return services.store_write_note or None
