"""Memory in layers: restore committed memory (merging entries that raced), re-apply a pull
request's overlay on top, and save so that nothing committed meanwhile is lost.

Entries are immutable and every save has its own key, so two runs that raced leave two
"heads". Each entry records the text its run started from (``EntryState.base``) and the keys it
already holds (``parents``); a three-way merge of each head's own changes onto the newest keeps
every run's additions. See the design's "Scope and trust" and "Memory" sections.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from memory_action.errors import MemoryFileError
from memory_action.memory.merge import Head, merge_heads, merge_text
from memory_action.memory.provenance import Provenance
from memory_action.memory.provenance import entries as memory_lines
from memory_action.memory.provenance import merge as merge_provenance
from memory_action.memory.state import (
    MAX_PARENTS,
    PROVENANCE_FILE,
    EntryState,
    Layer,
    load_state,
    read_memory,
    sanitize_folder,
    write_memory,
)
from memory_action.run.scope import MemoryScope
from memory_action.safety.outgoing import Form, gate
from memory_action.safety.scrub import describe, redact
from memory_action.store.base import (
    EntryLister,
    ListedEntry,
    MemoryStore,
    RestoreKeys,
    RestoreResult,
)


@dataclass(frozen=True, kw_only=True)
class Fetched:
    """One restored entry, read and validated."""

    result: RestoreResult
    text: str = ""
    state: EntryState | None = None
    provenance: Provenance = field(default_factory=lambda: Provenance(records={}))
    removed: tuple[str, ...] = ()  # unexpected files dropped from the entry
    secrets: tuple[str, ...] = ()  # kinds of secrets redacted from it

    @property
    def key(self) -> str | None:
        return self.result.matched_key if self.result.hit else None

    def holds(self) -> frozenset[str]:
        """This entry's key and every key it says it already holds."""
        parents = self.state.parents if self.state else ()
        return frozenset({*(parents), *([self.key] if self.key else [])})


def fetch(
    store: MemoryStore, keys: RestoreKeys, folder: Path, masked: Iterable[str] = ()
) -> Fetched:
    """Restore into ``folder`` (a scratch folder) and read what came back, with any secret in
    it redacted: restored memory is untrusted, and nothing in it may travel on."""
    result = store.restore(keys, folder)
    if not result.hit or result.matched_key is None:
        return Fetched(result=result)
    key = result.matched_key
    try:
        removed = tuple(sanitize_folder(folder))
        raw = read_memory(folder, f"the memory entry {key}")
    except (MemoryFileError, OSError) as exc:
        why = "its AGENTS.md is not UTF-8 text" if isinstance(exc, MemoryFileError) else str(exc)
        return Fetched(result=RestoreResult.refused(key, why, store.name, result.note))
    text, found = redact(raw, masked)
    state = load_state(folder)
    if state is not None:
        base, found_in_base = redact(state.base, masked)
        state, found = dataclasses.replace(state, base=base), [*found, *found_in_base]
    # The sidecar names each record by its line: a record of a line that is not in the
    # (redacted) text could carry the secret the text no longer has.
    lines = frozenset(memory_lines(text))
    provenance = Provenance.load(folder / PROVENANCE_FILE)
    return Fetched(
        result=result,
        text=text,
        state=state,
        provenance=Provenance(records={k: v for k, v in provenance.records.items() if k in lines}),
        removed=removed,
        secrets=tuple(finding.kind for finding in found),
    )


@dataclass(frozen=True, kw_only=True)
class Committed:
    newest: Fetched  # the newest entry, even when it could not be used (then: no save)
    text: str  # every head merged
    holds: frozenset[str]  # the keys whose content ``text`` holds
    provenance: Provenance
    notes: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()  # kinds of secrets redacted from the heads merged
    used: Fetched | None = None  # the older entry read instead of a newest that was refused

    @property
    def started_from(self) -> Fetched:
        """The entry ``text`` starts from: the newest, or the older one read instead."""
        return self.used if self.used is not None else self.newest


@dataclass(frozen=True, kw_only=True)
class StartingMemory:
    """What a run starts from, and what it needs to save without losing anything."""

    restored: RestoreResult  # reported in the outputs: the overlay's match, else committed's
    committed: Committed
    overlay: Fetched | None
    text: str  # what the agent starts from
    provenance: Provenance
    notes: tuple[str, ...]

    @property
    def unread(self) -> tuple[str, ...]:
        """Why memory saved before could not be read (once each). A save now would hide it, so
        a run with any of these does not save."""
        results = [self.restored, self.committed.newest.result]
        if self.overlay is not None:
            results.append(self.overlay.result)
        return tuple(dict.fromkeys(r.warning for r in results if r.warning is not None))

    @property
    def last_maintained(self) -> str:
        """What the last maintenance saw (``maintenance``'s digest; "" when none did)."""
        state = self.committed.started_from.state
        return state.maintained if state is not None else ""

    @property
    def layer_text(self) -> str:
        """What the layer this run saves to holds now: a save is needed only if it differs."""
        if self.overlay is not None and self.overlay.key:
            return self.overlay.text
        return self.committed.newest.text


@dataclass(frozen=True, kw_only=True)
class LayerStore:
    """The store and what a run may do with it."""

    store: MemoryStore
    scratch: Path  # an empty folder for restores that are read, not used as memory
    lister: Callable[[str], EntryLister] | None = None  # by ref; None: no head merging
    lossless: bool = True  # False only to measure what newest-entry-wins loses
    masked: frozenset[str] = frozenset()  # values the run masked: redacted from what is read
    # A scope the run's cache token reads before the committed one and a fork can write ("" if
    # none): committed memory is read only when it provably came from elsewhere.
    fork_writable_ref: str = ""


def restore_layers(
    layers: LayerStore, scope: MemoryScope, overlay: Fetched | None = None
) -> StartingMemory:
    """Committed memory with its heads merged, then the overlay (restored here, or given)."""
    committed = restore_committed(layers, scope)
    if overlay is None and scope.overlay_prefix:
        keys, folder = RestoreKeys(primary=scope.overlay_prefix), layers.scratch / "overlay"
        overlay = fetch(layers.store, keys, folder, layers.masked)
    text, provenance, notes = committed.text, committed.provenance, list(committed.notes)
    if overlay is not None and overlay.result.hit:
        base = overlay.state.base if overlay.state and overlay.state.layer == Layer.OVERLAY else ""
        merged = merge_text(base, committed.text, overlay.text)
        text, provenance = merged.text, merge_provenance(overlay.provenance, provenance)
        notes.append("re-applied this pull request's memory on top of the committed memory")
    restored = (
        overlay.result if overlay is not None and overlay.key else committed.started_from.result
    )
    results = [committed.newest.result, committed.started_from.result]
    results += [overlay.result] if overlay is not None else []
    notes.extend(dict.fromkeys(result.note for result in results if result.note is not None))
    found = [*committed.secrets, *(overlay.secrets if overlay is not None else ())]
    if found:
        notes.append(f"redacted {describe(found)} found in the restored memory")
    return StartingMemory(
        restored=restored,
        committed=committed,
        overlay=overlay,
        text=text,
        provenance=provenance,
        notes=tuple(notes),
    )


NOT_LISTED_NOTE = (
    "this run's token may not list the memory entries in the cache, so entries saved by runs "
    "that raced are not merged: runs that race can lose memory: grant `actions: read`"
)


def restore_committed(layers: LayerStore, scope: MemoryScope) -> Committed:
    """Committed memory, unless it may have come from a scope a fork can write: then none,
    and the run says why (and, being unread, does not save over it)."""
    committed = _restore_committed(layers, scope)
    distrusted = _fork_planted(layers, scope)
    if distrusted is None:
        return committed
    return Committed(
        newest=Fetched(result=distrusted),
        text="",
        holds=frozenset(),
        provenance=Provenance(records={}),
    )


def _fork_planted(layers: LayerStore, scope: MemoryScope) -> RestoreResult | None:
    """Why committed memory this run restored cannot be trusted, or None when it can.

    The cache answers a restore from the first scope of the run's ref chain that holds a
    match, so on a fork's merge ref an entry the fork's workflow saved under the committed
    prefix would be taken for committed memory. The listing runs after the restore: entries
    are immutable and a fork's token cannot delete one, so an empty listing proves the restore
    read none."""
    fork_ref, prefix = layers.fork_writable_ref, scope.committed_prefix
    if not fork_ref or not prefix:
        return None
    if scope.committed_ref == fork_ref:
        return RestoreResult.miss(
            note=(
                f"committed memory is not read: {scope.description} lives in the cache scope of "
                "a fork's pull request, which the fork's own workflow runs can write"
            )
        )
    listed = layers.lister(fork_ref).list_entries(prefix) if layers.lister is not None else None
    if listed is None:
        return RestoreResult.miss(
            warning=(
                "committed memory is not read on a fork's pull request unless this run may list "
                "the cache entries of the pull request's scope, to prove none was planted under "
                "the committed prefix: grant `actions: read`"
            )
        )
    if listed:
        return RestoreResult.miss(
            warning=(
                f"committed memory is not read: the cache scope of this fork's pull request "
                f"holds {len(listed)} entries under the committed prefix {prefix}, which only "
                "the fork's own workflow runs can have saved there"
            )
        )
    return None


def _restore_committed(layers: LayerStore, scope: MemoryScope) -> Committed:
    empty = Committed(
        newest=Fetched(result=RestoreResult.miss()),
        text="",
        holds=frozenset(),
        provenance=Provenance(records={}),
    )
    if not scope.committed_prefix:
        return empty
    newest = fetch(
        layers.store,
        RestoreKeys(primary=scope.committed_prefix),
        layers.scratch / "newest",
        layers.masked,
    )
    refused = newest.result.unusable
    used = _older_usable(layers, scope, refused) if refused is not None else None
    start = used if used is not None else newest
    if start.key is None:
        return Committed(
            newest=newest, text="", holds=frozenset(), provenance=Provenance(records={})
        )
    heads, not_listed, unread = _heads(
        layers, scope, start, frozenset({refused} if refused else ())
    )
    unread_note = (_unread_heads_note(unread),) if unread else ()
    if len(heads) <= 1:
        notes = (*((NOT_LISTED_NOTE,) if not_listed else ()), *unread_note)
        return Committed(
            newest=newest,
            text=start.text,
            holds=start.holds(),
            provenance=start.provenance,
            notes=notes,
            secrets=start.secrets,
            used=used,
        )
    merged = merge_heads(
        [
            Head(text=h.text, base=_base_of(h), key=h.key or "", created=created)
            for h, created in heads
        ]
    )
    provenance = start.provenance
    holds: frozenset[str] = frozenset()
    for head, _ in heads:
        provenance = merge_provenance(provenance, head.provenance)
        holds |= head.holds()
    note = f"merged {len(heads)} committed memory entries saved by runs that raced"
    secrets = tuple(kind for head, _ in heads for kind in head.secrets)
    return Committed(
        newest=newest,
        text=merged.text,
        holds=holds,
        provenance=provenance,
        notes=(note, *unread_note),
        secrets=secrets,
        used=used,
    )


def _unread_heads_note(unread: list[str]) -> str:
    """A head that could not be downloaded stays in the cache (no save of this run holds it, so
    none supersedes or deletes it): this run works without it, and a later restore merges it."""
    return (
        f"{len(unread)} committed memory entries saved by runs that raced could not be read "
        f"(cache trouble; the first: {unread[0]}); they are kept, and a later run merges them"
    )


def _older_usable(layers: LayerStore, scope: MemoryScope, refused: str) -> Fetched | None:
    """The newest committed entry but ``refused`` that can be used, or None (none, or the
    entries may not be listed). Its content is read for the agent; the run still does not save,
    because that would hide the refused entry."""
    if layers.lister is None or not scope.committed_prefix:
        return None
    listed = layers.lister(scope.committed_ref).list_entries(scope.committed_prefix)
    for number, entry in enumerate(sorted(listed or [], key=lambda e: e.created, reverse=True)):
        if entry.key == refused:
            continue
        folder = layers.scratch / f"older-{number}"
        fetched = fetch(layers.store, RestoreKeys(primary=entry.key), folder, layers.masked)
        if fetched.key == entry.key:
            return fetched
    return None


def _base_of(entry: Fetched) -> str:
    return entry.state.base if entry.state is not None else ""


def _heads(
    layers: LayerStore, scope: MemoryScope, newest: Fetched, refused: frozenset[str] = frozenset()
) -> tuple[list[tuple[Fetched, float]], bool, list[str]]:
    """Entries of the committed prefix that no other entry holds (the newest always counts;
    ``refused`` ones are not read again), whether the listing was refused, and the keys of the
    heads whose download failed (cache trouble: not "gone", and said).

    Every listed entry is considered, newest first; one that an entry already read holds is
    skipped before it is downloaded (its content is in that entry).
    """
    if layers.lister is None or not layers.lossless or not scope.committed_prefix:
        return [(newest, 0.0)], False, []
    listed = layers.lister(scope.committed_ref).list_entries(scope.committed_prefix)
    if listed is None:
        return [(newest, 0.0)], True, []
    if newest.key not in {entry.key for entry in listed}:  # a listing that lags behind
        listed = [ListedEntry(key=newest.key or "", created=math.inf), *listed]
    entries: list[tuple[Fetched, float]] = []
    unread: list[str] = []
    held: frozenset[str] = frozenset()
    for number, entry in enumerate(sorted(listed, key=lambda e: e.created, reverse=True)):
        if entry.key in held or entry.key in refused:
            continue
        if entry.key == newest.key:
            fetched = newest
        else:
            folder = layers.scratch / f"head-{number}"
            fetched = fetch(layers.store, RestoreKeys(primary=entry.key), folder, layers.masked)
            if fetched.key != entry.key:
                if fetched.result.failed:
                    unread.append(entry.key)  # cache trouble, not gone
                continue  # gone since the listing (evicted, or deleted by another run)
        entries.append((fetched, entry.created))
        held |= fetched.holds() - {fetched.key}
    return [(f, created) for f, created in entries if f.key not in held], False, unread


def prepare_save(
    layers: LayerStore,
    scope: MemoryScope,
    start: StartingMemory,
    final: str,
    provenance: Provenance,
) -> tuple[str, EntryState, Provenance, frozenset[str], tuple[str, ...]]:
    """The text, state and provenance to save, merged with anything saved since the start."""
    if scope.layer is Layer.OVERLAY:
        return _prepare_overlay(layers, scope, start, final, provenance)
    holds, text = start.committed.holds, final
    notes: tuple[str, ...] = ()
    if layers.lossless and scope.committed_prefix:
        newest = fetch(
            layers.store,
            RestoreKeys(primary=scope.committed_prefix),
            layers.scratch / "before-save",
            layers.masked,
        )
        if newest.key is not None and newest.key not in holds:
            text = merge_text(start.committed.text, newest.text, final).text
            provenance = merge_provenance(provenance, newest.provenance)
            holds = holds | newest.holds()
            notes = (f"merged {newest.key}, saved by another run while this one ran",)
    state = EntryState(layer=Layer.COMMITTED, base=start.committed.text, parents=_capped(holds))
    return text, state, provenance, holds, notes


def _prepare_overlay(
    layers: LayerStore,
    scope: MemoryScope,
    start: StartingMemory,
    final: str,
    provenance: Provenance,
) -> tuple[str, EntryState, Provenance, frozenset[str], tuple[str, ...]]:
    """Another run of the same PR may have saved its overlay meanwhile (a re-run racing a new
    push): its changes, re-applied on our committed memory, are merged into ours."""
    own = start.overlay.key if start.overlay and start.overlay.key else None
    parents, text = frozenset({own} if own else ()), final
    notes: tuple[str, ...] = ()
    if layers.lossless and scope.overlay_prefix:
        keys, folder = (
            RestoreKeys(primary=scope.overlay_prefix),
            layers.scratch / "overlay-before-save",
        )
        newest = fetch(layers.store, keys, folder, layers.masked)
        if newest.key is not None and newest.key not in parents | _held(start.overlay):
            base = newest.state.base if newest.state and newest.state.layer == Layer.OVERLAY else ""
            theirs = merge_text(base, start.committed.text, newest.text).text
            text = merge_text(start.text, theirs, final).text
            provenance = merge_provenance(provenance, newest.provenance)
            parents = parents | newest.holds()
            notes = (f"merged {newest.key}, saved by another run of this pull request meanwhile",)
    state = EntryState(layer=Layer.OVERLAY, base=start.committed.text, parents=_capped(parents))
    return text, state, provenance, parents, notes


def _held(entry: Fetched | None) -> frozenset[str]:
    return entry.holds() if entry is not None else frozenset()


def _capped(keys: frozenset[str]) -> tuple[str, ...]:
    return tuple(sorted(keys))[-MAX_PARENTS:]


def write_entry(
    folder: Path,
    text: str,
    state: EntryState,
    provenance: Provenance,
    masked: Iterable[str] = (),
) -> None:
    """Lay out a memory folder as an entry: AGENTS.md, the provenance sidecar, the state; each
    through the outgoing gate (``outgoing.gate``), redacting ``masked`` too."""
    masked = tuple(masked)
    write_memory(folder, gate(text, masked, form=Form.TEXT).text)
    provenance.dump(folder / PROVENANCE_FILE, masked)
    state.dump(folder, masked)
