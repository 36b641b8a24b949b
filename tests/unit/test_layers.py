"""Memory in layers against a real local store: merging committed heads that raced, re-applying a
pull request's overlay on newer committed memory, merging before a save, redacting what is read.

The store is a ``LocalDirectoryStore`` in ``tmp_path`` with a clock that ticks once per save, so
"newest" is deterministic; ``LocalLayerAdmin`` lists its entries as the Actions cache's REST API
would.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from memory_action.lifecycle.layers import (
    NOT_LISTED_NOTE,
    Committed,
    Fetched,
    LayerStore,
    StartingMemory,
    fetch,
    prepare_save,
    restore_committed,
    restore_layers,
    write_entry,
)
from memory_action.memory.provenance import Provenance, Stamp
from memory_action.memory.state import (
    MEMORY_FILE,
    PROVENANCE_FILE,
    STATE_FILE,
    EntryState,
    Layer,
    load_state,
    write_memory,
)
from memory_action.run.scope import MemoryScope
from memory_action.run.settings import ScopeKind
from memory_action.store.base import (
    EntryLister,
    ListedEntry,
    RestoreKeys,
    RestoreResult,
    SaveResult,
)
from memory_action.store.hygiene import LocalLayerAdmin
from memory_action.store.local import LocalDirectoryStore
from tests.fakes.secrets_corpus import MASKED_VALUES, PLANTED

COMMITTED = "memory-agent/v1/memory-agent/repo/committed/"
OVERLAY = "memory-agent/v1/memory-agent/repo/pr-7/"
BASE = "# Conventions\n\n- Use pytest.\n"
GITHUB_TOKEN = next(s for p in PLANTED for s in p.secrets if s.startswith("ghp_"))
MASKED_DEPLOY_KEY = MASKED_VALUES[2]  # a passphrase: only its mask makes it a secret
MERGED_NOTE = "committed memory entries saved by runs that raced"
REAPPLIED_NOTE = "re-applied this pull request's memory on top of the committed memory"


def stamp(run: int, event: str = "push", pr: int | None = None) -> Stamp:
    return Stamp(
        run_id=str(run),
        run_attempt="1",
        event=event,
        actor="mona",
        pr=pr,
        trust="trusted",
        time=f"2026-11-{run % 28 + 1:02d}T08:00:00Z",
    )


def fact_stamps(text: str, run: int, event: str = "push") -> Provenance:
    """Every non-blank line of ``text`` stamped by ``run``."""
    return Provenance(
        records={line.strip(): stamp(run, event) for line in text.splitlines() if line.strip()}
    )


class Ticking:
    """A clock one second further on every call: each save is newer than the one before."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        self.now += 1
        return self.now


@dataclass
class World:
    """A local store, the entries put in it, and fresh scratch folders for each use."""

    root: Path
    clock: Ticking = field(default_factory=Ticking)
    count: int = 0

    def __post_init__(self) -> None:
        self.store = LocalDirectoryStore(self.root / "store", clock=self.clock)

    def folder(self, name: str) -> Path:
        self.count += 1
        path = self.root / name / str(self.count)
        path.mkdir(parents=True)
        return path

    def put(
        self,
        key: str,
        text: str | None,
        state: EntryState | None = None,
        provenance: Provenance | None = None,
    ) -> str:
        folder = self.folder("sources")
        if text is not None:
            write_memory(folder, text)
        if provenance is not None:
            provenance.dump(folder / PROVENANCE_FILE)
        if state is not None:
            state.dump(folder)
        result = self.store.save(key, folder)
        assert result.saved, result.reason
        return key

    def committed(
        self, run: int, text: str, base: str | None = BASE, parents: Iterable[str] = ()
    ) -> str:
        """A committed entry saved by ``run``; ``base=None``: one without a state file."""
        state = (
            None
            if base is None
            else EntryState(layer="committed", base=base, parents=tuple(parents))
        )
        return self.put(f"{COMMITTED}{run}-1", text, state, fact_stamps(text, run))

    def overlay(self, run: int, text: str, base: str, parents: Iterable[str] = ()) -> str:
        state = EntryState(layer="overlay", base=base, parents=tuple(parents))
        return self.put(f"{OVERLAY}{run}-1", text, state, fact_stamps(text, run, "pull_request"))

    def layers(
        self,
        *,
        lossless: bool = True,
        listed: bool = True,
        masked: Iterable[str] = (),
        lister: Callable[[str], EntryLister] | None = None,
    ) -> LayerStore:
        def by_ref(_ref: str) -> LocalLayerAdmin:
            return LocalLayerAdmin(store=self.store)

        return LayerStore(
            store=self.store,
            scratch=self.folder("scratch"),
            lister=(lister or by_ref) if listed else None,
            lossless=lossless,
            masked=frozenset(masked),
        )


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(root=tmp_path)


def committed_scope(run: int = 99) -> MemoryScope:
    """A trusted push on the default branch: it writes committed memory."""
    return MemoryScope(
        kind=ScopeKind.REPO,
        description="repository memory (default branch main)",
        restore=RestoreKeys(primary=COMMITTED),
        committed_prefix=COMMITTED,
        overlay_prefix=None,
        save_key=f"{COMMITTED}{run}-1",
        layer=Layer.COMMITTED,
        may_write=True,
        write_note="",
        committed_ref="refs/heads/main",
    )


def overlay_scope(run: int = 99) -> MemoryScope:
    """A trusted run of pull request #7: it reads committed memory and writes its overlay."""
    return MemoryScope(
        kind=ScopeKind.REPO,
        description="repository memory (default branch main)",
        restore=RestoreKeys(primary=OVERLAY, restore=(COMMITTED,)),
        committed_prefix=COMMITTED,
        overlay_prefix=OVERLAY,
        save_key=f"{OVERLAY}{run}-1",
        layer=Layer.OVERLAY,
        may_write=True,
        write_note="",
        committed_ref="refs/heads/main",
    )


# --- restore_committed --------------------------------------------------------------------------


def test_no_committed_entries_is_empty_memory(world: World) -> None:
    committed = restore_committed(world.layers(), committed_scope())

    assert committed.newest.key is None
    assert committed.newest.result.hit is False
    assert committed.text == ""
    assert committed.holds == frozenset()
    assert committed.provenance.records == {}
    assert committed.notes == ()


def test_a_scope_without_committed_memory_restores_nothing(world: World) -> None:
    world.committed(1, BASE)
    scope = MemoryScope(
        kind=ScopeKind.PR,
        description="pull request memory (not available: no pull request)",
        restore=None,
        committed_prefix=None,
        overlay_prefix=None,
        save_key=None,
        layer=None,
        may_write=False,
        write_note="this scope has no memory for this event",
    )

    committed = restore_committed(world.layers(), scope)

    assert committed.newest.key is None
    assert committed.text == ""


FORK_REF = "refs/pull/7/merge"


@dataclass(frozen=True)
class ForkScope:
    """What a listing of the fork's merge ref answers (None: this run may not list)."""

    listed: list[ListedEntry] | None

    def list_entries(self, prefix: str) -> list[ListedEntry] | None:
        return [e for e in self.listed if e.key.startswith(prefix)] if self.listed else self.listed


@dataclass(frozen=True)
class ByRef:
    """Lists ``on_fork`` for the fork's merge ref, the store's entries for any other ref."""

    store: LocalDirectoryStore
    on_fork: list[ListedEntry] | None

    def __call__(self, ref: str) -> EntryLister:
        return ForkScope(self.on_fork) if ref == FORK_REF else LocalLayerAdmin(store=self.store)


def on_a_fork(world: World, on_fork: list[ListedEntry] | None) -> LayerStore:
    layers = world.layers(lister=ByRef(world.store, on_fork))
    return dataclasses.replace(layers, fork_writable_ref=FORK_REF)


def test_on_a_fork_committed_memory_is_read_when_its_scope_holds_none(world: World) -> None:
    world.committed(1, BASE)
    committed = restore_committed(on_a_fork(world, []), committed_scope())
    assert committed.text == BASE
    assert committed.newest.result.warning is None


@pytest.mark.parametrize(
    ("on_fork", "said"),
    [
        (
            [ListedEntry(key=f"{COMMITTED}666-1-planted", created=1.0)],
            "holds 1 entries under the committed",
        ),
        (None, "grant `actions: read`"),
    ],
)
def test_on_a_fork_committed_memory_its_scope_may_hold_is_not_read(
    world: World, on_fork: list[ListedEntry] | None, said: str
) -> None:
    world.committed(1, BASE)
    committed = restore_committed(on_a_fork(world, on_fork), committed_scope())
    assert committed.text == ""
    assert committed.newest.result.warning is not None
    assert said in committed.newest.result.warning  # unread: the run does not save over it


def test_committed_memory_in_a_forks_own_scope_is_never_read(world: World) -> None:
    world.committed(1, BASE)
    scope = dataclasses.replace(committed_scope(), committed_ref=FORK_REF)
    committed = restore_committed(on_a_fork(world, []), scope)
    assert committed.text == ""
    assert "the fork's own workflow runs can write" in (committed.newest.result.note or "")


def test_one_entry_is_restored_as_it_is(world: World) -> None:
    ancestor = f"{COMMITTED}0-1"  # merged and pruned long ago: only named as a parent
    key = world.committed(1, BASE + "- Fact one.\n", parents=[ancestor])

    committed = restore_committed(world.layers(), committed_scope())

    assert committed.newest.key == key
    assert committed.text == BASE + "- Fact one.\n"
    assert committed.holds == {key, ancestor}
    assert committed.newest.state == EntryState(layer="committed", base=BASE, parents=(ancestor,))
    assert committed.provenance.records["- Fact one."] == stamp(1)
    assert committed.notes == ()


def test_three_heads_that_raced_from_the_same_base_are_all_merged(world: World) -> None:
    root = world.committed(1, BASE, base="")
    heads = [
        world.committed(run, BASE + f"- Fact from run {run}.\n", parents=[root])
        for run in (2, 3, 4)
    ]

    committed = restore_committed(world.layers(), committed_scope())

    assert committed.newest.key == heads[-1]
    # Newest first, then each older head's own change; the shared base once.
    assert committed.text == (BASE + "- Fact from run 4.\n- Fact from run 3.\n- Fact from run 2.\n")
    assert committed.holds == {root, *heads}
    assert committed.notes == (f"merged 3 {MERGED_NOTE}",)
    assert {committed.provenance.records[f"- Fact from run {run}."] for run in (2, 3, 4)} == {
        stamp(2),
        stamp(3),
        stamp(4),
    }


def test_heads_raced_are_merged_whatever_order_they_were_saved_in(world: World) -> None:
    root = world.committed(1, BASE, base="")
    world.committed(4, BASE + "- Fact from run 4.\n", parents=[root])
    world.committed(2, BASE + "- Fact from run 2.\n", parents=[root])
    world.committed(3, BASE + "- Fact from run 3.\n", parents=[root])

    committed = restore_committed(world.layers(), committed_scope())

    assert committed.newest.key == f"{COMMITTED}3-1"  # the last saved, not the highest run id
    for run in (2, 3, 4):
        assert committed.text.count(f"- Fact from run {run}.\n") == 1
    assert committed.text.count("- Use pytest.") == 1


def test_an_entry_that_holds_its_parent_is_the_only_head(world: World) -> None:
    first = world.committed(1, BASE + "- Fact one.\n")
    second = world.committed(
        2, BASE + "- Fact one.\n- Fact two.\n", base=BASE + "- Fact one.\n", parents=[first]
    )

    committed = restore_committed(world.layers(), committed_scope())

    assert committed.newest.key == second
    assert committed.text == BASE + "- Fact one.\n- Fact two.\n"
    assert committed.holds == {first, second}
    assert committed.notes == ()  # one head: nothing merged


def test_a_chain_with_two_heads_raced_on_top_merges_only_the_heads(world: World) -> None:
    first = world.committed(1, BASE + "- Fact one.\n")
    one = BASE + "- Fact one.\n"
    second = world.committed(2, one + "- Fact two.\n", base=one, parents=[first])
    third = world.committed(3, one + "- Fact three.\n", base=one, parents=[first])

    committed = restore_committed(world.layers(), committed_scope())

    assert committed.text == one + "- Fact three.\n- Fact two.\n"
    assert committed.holds == {first, second, third}
    assert committed.notes == (f"merged 2 {MERGED_NOTE}",)


def test_an_entry_without_state_merges_from_an_empty_base(world: World) -> None:
    old = world.committed(1, "# Conventions\n- Fact from an old version.\n", base=None)
    new = world.committed(2, "# Conventions\n- New fact.\n", base="# Conventions\n")

    committed = restore_committed(world.layers(), committed_scope())

    # The stateless entry's whole text is its change: the heading is already there, kept once.
    assert committed.text == "# Conventions\n- New fact.\n- Fact from an old version.\n"
    assert committed.holds == {old, new}
    assert committed.notes == (f"merged 2 {MERGED_NOTE}",)


def test_fetching_an_entry_without_state_has_no_history(world: World) -> None:
    key = world.committed(1, BASE, base=None)

    fetched = fetch(world.store, RestoreKeys(primary=key), world.folder("scratch"))

    assert fetched.key == key
    assert fetched.state is None
    assert fetched.holds() == {key}
    assert fetched.text == BASE


def test_a_tampered_state_is_ignored_like_a_missing_one(world: World) -> None:
    folder = world.folder("sources")
    write_memory(folder, BASE)
    (folder / STATE_FILE).parent.mkdir()
    (folder / STATE_FILE).write_text("[" * 100_000 + "]" * 100_000)
    (folder / "planted.sh").write_text("echo hi\n")
    world.store.save(f"{COMMITTED}1-1", folder)

    fetched = fetch(world.store, RestoreKeys(primary=COMMITTED), world.folder("scratch"))

    assert fetched.text == BASE
    assert fetched.state is None
    assert fetched.removed == ("planted.sh",)


@pytest.mark.parametrize("how", ["lossless=False", "no lister"])
def test_newest_entry_wins_when_heads_are_not_merged(world: World, how: str) -> None:
    root = world.committed(1, BASE, base="")
    for run in (2, 3, 4):
        world.committed(run, BASE + f"- Fact from run {run}.\n", parents=[root])
    layers = world.layers(lossless=False) if how == "lossless=False" else world.layers(listed=False)

    committed = restore_committed(layers, committed_scope())

    assert committed.text == BASE + "- Fact from run 4.\n"
    assert committed.holds == {f"{COMMITTED}4-1", root}
    assert committed.notes == ()


def test_every_head_is_merged_however_many_raced(world: World) -> None:
    root = world.committed(1, BASE, base="")
    for run in range(2, 42):  # 40 heads: more than one page of the cache REST API's default
        world.committed(run, BASE + f"- Fact from run {run}.\n", parents=[root])

    committed = restore_committed(world.layers(), committed_scope())

    for run in range(2, 42):
        assert committed.text.count(f"- Fact from run {run}.\n") == 1, run
    assert committed.notes == (f"merged 40 {MERGED_NOTE}",)


@dataclass
class CountingStore:
    """The world's store, recording the key of every restore (each one is a download)."""

    store: LocalDirectoryStore
    restored: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.store.name

    def restore(self, keys: RestoreKeys, folder: Path) -> RestoreResult:
        self.restored.append(keys.primary)
        return self.store.restore(keys, folder)

    def save(self, key: str, folder: Path) -> SaveResult:
        return self.store.save(key, folder)


def test_an_entry_a_newer_one_holds_is_never_downloaded(world: World) -> None:
    chain = [world.committed(1, BASE, base="")]
    for run in range(2, 8):  # each saved after merging all before it
        chain.append(world.committed(run, BASE + f"- Fact {run}.\n", parents=list(chain)))
    raced = world.committed(8, BASE + "- Raced.\n", parents=list(chain[:-1]))
    counting = CountingStore(world.store)
    layers = dataclasses.replace(world.layers(), store=counting)

    committed = restore_committed(layers, committed_scope())

    # The newest (the raced entry, restored by prefix), then the other head; the six entries the
    # heads hold are never downloaded.
    assert counting.restored == [COMMITTED, chain[-1]]
    assert committed.text.count("- Raced.\n") == committed.text.count("- Fact 7.\n") == 1
    assert committed.holds == {*chain, raced}


@dataclass(frozen=True)
class RefusedListing:
    """A token without ``actions: read``: the cache REST API refuses to list."""

    def list_entries(self, prefix: str) -> None:
        del prefix

    def prune(self, *, prefix: str, superseded: frozenset[str], saved_key: str) -> int:
        del prefix, superseded, saved_key
        return 0


@pytest.mark.parametrize("raced", [True, False], ids=["raced", "one-entry"])
def test_a_refused_listing_is_said_once_whatever_was_saved(world: World, raced: bool) -> None:
    root = world.committed(1, BASE, base="")
    if raced:
        world.committed(2, BASE + "- Fact two.\n", parents=[root])
        world.committed(3, BASE + "- Fact three.\n", parents=[root])
    layers = world.layers(lister=lambda _ref: RefusedListing())

    start = restore_layers(layers, overlay_scope())

    assert start.committed.notes == (NOT_LISTED_NOTE,)
    assert start.notes.count(NOT_LISTED_NOTE) == 1
    assert "grant `actions: read`" in NOT_LISTED_NOTE


@dataclass(frozen=True)
class EditedListing:
    """A listing that differs from the store: entries evicted after listing, or listed late."""

    store: LocalDirectoryStore
    add: tuple[ListedEntry, ...] = ()
    drop: frozenset[str] = frozenset()

    def list_entries(self, prefix: str) -> list[ListedEntry]:
        listed = LocalLayerAdmin(store=self.store).list_entries(prefix)
        return [*self.add, *(e for e in listed if e.key not in self.drop)]

    def prune(self, *, prefix: str, superseded: frozenset[str], saved_key: str) -> int:
        del prefix, superseded, saved_key
        return 0


def test_a_listed_entry_that_is_gone_by_the_time_it_is_read_is_skipped(world: World) -> None:
    root = world.committed(1, BASE, base="")
    world.committed(2, BASE + "- Fact two.\n", parents=[root])
    world.committed(3, BASE + "- Fact three.\n", parents=[root])
    gone = ListedEntry(
        key=f"{COMMITTED}5-1", created=world.clock.now + 10
    )  # evicted after the listing
    listing = EditedListing(world.store, add=(gone,))

    committed = restore_committed(world.layers(lister=lambda _ref: listing), committed_scope())

    assert committed.text == BASE + "- Fact three.\n- Fact two.\n"
    assert gone.key not in committed.holds


def test_the_newest_entry_counts_even_when_the_listing_lags_behind(world: World) -> None:
    """The restore found an entry the listing does not show yet: its memory must not be lost."""
    root = world.committed(1, BASE, base="")
    world.committed(2, BASE + "- Fact two.\n", parents=[root])
    world.committed(3, BASE + "- Fact three.\n", parents=[root])
    newest = world.committed(4, BASE + "- Fact four.\n", parents=[root])
    listing = EditedListing(world.store, drop=frozenset({newest}))

    committed = restore_committed(world.layers(lister=lambda _ref: listing), committed_scope())

    assert committed.newest.key == newest
    for fact in ("- Fact two.\n", "- Fact three.\n", "- Fact four.\n"):
        assert committed.text.count(fact) == 1, committed.text
    assert newest in committed.holds


@dataclass
class SameSecondListing:
    """The listing of a service whose timestamps tie (saves in the same second): the order
    among equal times is the service's, here oldest first, so a parent comes before its child."""

    store: LocalDirectoryStore

    def list_entries(self, prefix: str) -> list[ListedEntry]:
        listed = LocalLayerAdmin(store=self.store).list_entries(prefix)
        return [ListedEntry(key=e.key, created=0.0) for e in reversed(listed)]

    def prune(self, *, prefix: str, superseded: frozenset[str], saved_key: str) -> int:
        del prefix, superseded, saved_key
        return 0


def test_an_entry_held_by_one_listed_after_it_is_no_head_and_what_it_forgot_stays_forgotten(
    world: World,
) -> None:
    """A parent read before its child (equal timestamps) is dropped from the heads once the child
    says it holds it: merged as a head, it would bring back the line the child forgot."""
    one = BASE + "- Fact one.\n"
    first = world.committed(1, one)
    second = world.committed(2, BASE + "- Fact two.\n", base=one, parents=[first])
    other = world.committed(3, one + "- Fact three.\n", base=one, parents=[first])
    listing = SameSecondListing(world.store)

    committed = restore_committed(world.layers(lister=lambda _ref: listing), committed_scope())

    assert "- Fact one." not in committed.text, committed.text  # forgotten by the second
    assert "- Fact two." in committed.text and "- Fact three." in committed.text
    assert committed.holds == {first, second, other}


# --- restore_layers -----------------------------------------------------------------------------


def test_an_overlay_is_re_applied_on_newer_committed_memory(world: World) -> None:
    old = world.committed(1, BASE)
    pr_text = BASE + "- Network calls retry with tenacity.\n"
    overlay = world.overlay(2, pr_text, base=BASE, parents=())
    # Committed meanwhile: a heading above, and an edit of a line the overlay did not touch.
    newer = "# Style\n\n- ruff formats.\n\n# Conventions\n\n- Use pytest, never unittest.\n"
    new = world.committed(3, newer, base=BASE, parents=[old])

    start = restore_layers(world.layers(), overlay_scope())

    assert start.text == newer + "- Network calls retry with tenacity.\n"
    assert start.committed.text == newer
    assert start.committed.holds == {old, new}
    assert start.overlay is not None
    assert start.overlay.key == overlay
    assert start.restored.matched_key == overlay
    assert start.layer_text == pr_text
    assert REAPPLIED_NOTE in start.notes
    records = start.provenance.records
    assert records["- Network calls retry with tenacity."].event == "pull_request"
    assert records["- ruff formats."] == stamp(3)


def test_an_overlay_keeps_what_committed_memory_deleted_meanwhile_deleted(world: World) -> None:
    with_old = BASE + "- Use the old client.\n"
    old = world.committed(1, with_old)
    world.overlay(2, with_old + "- PR fact.\n", base=with_old)
    world.committed(3, BASE, base=with_old, parents=[old])

    start = restore_layers(world.layers(), overlay_scope())

    assert start.text == BASE + "- PR fact.\n"


def test_an_overlay_without_an_overlay_state_is_merged_from_an_empty_base(world: World) -> None:
    world.committed(1, BASE + "- Committed fact.\n")
    # Saved by an older version, or with a committed-layer state: no base to diff against.
    world.put(
        f"{OVERLAY}2-1", BASE + "- PR fact.\n", EntryState(layer="committed", base="", parents=())
    )

    start = restore_layers(world.layers(), overlay_scope())

    # Both sides' whole texts are changes: every line is kept, each once.
    assert start.text.startswith(BASE + "- Committed fact.\n")
    for line in ("# Conventions\n", "- Use pytest.\n", "- Committed fact.\n", "- PR fact.\n"):
        assert start.text.count(line) == 1, start.text
    assert REAPPLIED_NOTE in start.notes


def test_without_an_overlay_a_pull_request_starts_from_committed_memory(world: World) -> None:
    key = world.committed(1, BASE)

    start = restore_layers(world.layers(), overlay_scope())

    assert start.text == BASE
    assert start.overlay is not None
    assert start.overlay.result.hit is False
    assert start.restored.matched_key == key
    assert start.layer_text == BASE
    assert REAPPLIED_NOTE not in start.notes


def test_a_given_overlay_is_used_instead_of_the_stored_one(world: World) -> None:
    world.committed(1, BASE)
    world.overlay(2, BASE + "- From the cache.\n", base=BASE)
    from_comment = Fetched(
        result=RestoreResult(hit=True, matched_key=None),
        text=BASE + "- From the comment.\n",
        state=EntryState(layer="overlay", base=BASE),
    )

    start = restore_layers(world.layers(), overlay_scope(), from_comment)

    assert start.text == BASE + "- From the comment.\n"
    assert start.overlay is from_comment
    assert start.restored.matched_key == f"{COMMITTED}1-1"  # the comment has no key
    assert start.layer_text == BASE  # nothing of this layer is stored


def test_a_committed_scope_has_no_overlay(world: World) -> None:
    world.committed(1, BASE)
    world.overlay(2, BASE + "- PR fact.\n", base=BASE)

    start = restore_layers(world.layers(), committed_scope())

    assert start.overlay is None
    assert start.text == BASE
    assert start.layer_text == BASE


# --- prepare_save -------------------------------------------------------------------------------


def test_an_overlay_save_records_the_committed_text_and_the_previous_overlay(world: World) -> None:
    world.committed(1, BASE)
    previous = world.overlay(2, BASE + "- PR fact.\n", base=BASE)
    start = restore_layers(world.layers(), overlay_scope())
    final = start.text + "- Another PR fact.\n"
    provenance = fact_stamps(final, 5, "pull_request")
    world.committed(4, BASE + "- Committed meanwhile.\n", parents=[f"{COMMITTED}1-1"])

    text, state, saved_provenance, holds, notes = prepare_save(
        world.layers(), overlay_scope(), start, final, provenance
    )

    assert text == final  # committed memory is re-applied at restore, never saved into it
    assert state == EntryState(layer="overlay", base=start.committed.text, parents=(previous,))
    assert state.base == BASE
    assert saved_provenance is provenance
    assert holds == {previous}
    assert notes == ()


def test_a_first_overlay_save_has_no_parents(world: World) -> None:
    world.committed(1, BASE)
    start = restore_layers(world.layers(), overlay_scope())

    _, state, _, holds, _ = prepare_save(
        world.layers(), overlay_scope(), start, BASE + "- PR fact.\n", Provenance(records={})
    )

    assert state == EntryState(layer="overlay", base=BASE, parents=())
    assert holds == frozenset()


def test_an_overlay_save_merges_another_run_of_the_same_pull_request(world: World) -> None:
    """A re-run racing a new push: both runs' learning survives in the PR's overlay."""
    world.committed(1, BASE)
    start = restore_layers(world.layers(), overlay_scope())  # no overlay yet
    other = world.overlay(3, BASE + "- Learned by the other run.\n", base=BASE)
    final = BASE + "- Learned by this run.\n"

    text, state, _, holds, notes = prepare_save(
        world.layers(), overlay_scope(), start, final, Provenance(records={})
    )

    assert text == BASE + "- Learned by the other run.\n- Learned by this run.\n"
    assert state == EntryState(layer="overlay", base=BASE, parents=(other,))
    assert holds == {other}
    assert notes == (f"merged {other}, saved by another run of this pull request meanwhile",)


def test_an_overlay_save_rebases_a_racing_overlay_made_on_older_committed_memory(
    world: World,
) -> None:
    first = world.committed(1, BASE)
    other = world.overlay(2, BASE + "- Other run.\n", base=BASE)
    world.committed(3, BASE + "- Committed later.\n", parents=[first])
    start = restore_layers(world.layers(), overlay_scope())  # sees the other overlay
    newer = world.overlay(4, BASE + "- Other run.\n- Its second run.\n", base=BASE, parents=[other])
    final = start.text + "- This run.\n"

    text, _, _, holds, _ = prepare_save(
        world.layers(), overlay_scope(), start, final, Provenance(records={})
    )

    for line in ("- Other run.", "- Its second run.", "- Committed later.", "- This run."):
        assert text.count(line) == 1, text
    assert holds == {other, newer}


def test_a_committed_save_merges_what_another_run_saved_meanwhile(world: World) -> None:
    first = world.committed(1, BASE)
    start = restore_layers(world.layers(), committed_scope())
    other = world.committed(2, BASE + "- Saved by the other run.\n", parents=[first])
    final = BASE + "- Learned by this run.\n"
    provenance = Provenance(records={"- Learned by this run.": stamp(9)})

    text, state, merged, holds, notes = prepare_save(
        world.layers(), committed_scope(), start, final, provenance
    )

    assert text == BASE + "- Saved by the other run.\n- Learned by this run.\n"
    assert holds == {first, other}
    assert state == EntryState(layer="committed", base=BASE, parents=tuple(sorted({first, other})))
    assert notes == (f"merged {other}, saved by another run while this one ran",)
    assert merged.records["- Learned by this run."] == stamp(9)
    assert merged.records["- Saved by the other run."] == stamp(2)

    # Saved, the new entry holds both: the next run finds one head and nothing to merge.
    folder = world.folder("save")
    write_entry(folder, text, state, merged)
    assert world.store.save(f"{COMMITTED}99-1", folder).saved
    again = restore_committed(world.layers(), committed_scope())
    assert again.text == text
    assert again.notes == ()
    assert again.holds == {first, other, f"{COMMITTED}99-1"}


def test_a_committed_save_with_nothing_saved_meanwhile_is_the_final_text(world: World) -> None:
    first = world.committed(1, BASE)
    start = restore_layers(world.layers(), committed_scope())
    final = BASE + "- Learned by this run.\n"

    text, state, _, holds, notes = prepare_save(
        world.layers(), committed_scope(), start, final, Provenance(records={})
    )

    assert text == final
    assert state == EntryState(layer="committed", base=BASE, parents=(first,))
    assert holds == {first}
    assert notes == ()


def test_a_first_committed_save_merges_a_first_save_of_another_run(world: World) -> None:
    start = restore_layers(world.layers(), committed_scope())
    other = world.committed(2, "# Notes\n- Other run.\n", base="")

    text, state, _, holds, notes = prepare_save(
        world.layers(), committed_scope(), start, "# Notes\n- This run.\n", Provenance(records={})
    )

    assert text == "# Notes\n- Other run.\n- This run.\n"
    assert state == EntryState(layer="committed", base="", parents=(other,))
    assert holds == {other}
    assert notes == (f"merged {other}, saved by another run while this one ran",)


def test_a_committed_save_does_not_merge_when_lossless_is_off(world: World) -> None:
    first = world.committed(1, BASE)
    start = restore_layers(world.layers(lossless=False), committed_scope())
    world.committed(2, BASE + "- Saved by the other run.\n", parents=[first])
    final = BASE + "- Learned by this run.\n"

    text, _, _, holds, notes = prepare_save(
        world.layers(lossless=False), committed_scope(), start, final, Provenance(records={})
    )

    assert text == final
    assert holds == {first}
    assert notes == ()


def test_write_entry_lays_out_an_entry(world: World) -> None:
    folder = world.folder("entry")
    state = EntryState(layer="committed", base=BASE, parents=("k",))

    write_entry(folder, BASE, state, Provenance(records={"- Use pytest.": stamp(1)}))

    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == [
        STATE_FILE,
        MEMORY_FILE,
        PROVENANCE_FILE,
    ]
    assert load_state(folder) == state
    assert Provenance.load(folder / PROVENANCE_FILE).records == {"- Use pytest.": stamp(1)}


# --- secrets in restored entries ----------------------------------------------------------------

SECRET_LINES = f"- Deploy with {GITHUB_TOKEN}.\n- The deploy key is {MASKED_DEPLOY_KEY}.\n"


def assert_clean(text: str) -> None:
    assert GITHUB_TOKEN not in text
    assert MASKED_DEPLOY_KEY not in text


def secrets_note(notes: Iterable[str]) -> str:
    [note] = [note for note in notes if note.startswith("redacted")]
    return note


def test_secrets_in_a_committed_entry_and_its_base_are_redacted(world: World) -> None:
    world.committed(1, BASE + SECRET_LINES, base=BASE + SECRET_LINES)

    start = restore_layers(world.layers(masked=[MASKED_DEPLOY_KEY]), overlay_scope())

    assert_clean(start.text)
    assert "- Deploy with [REDACTED GitHub token].\n" in start.text
    assert "- The deploy key is [REDACTED masked secret].\n" in start.text
    assert start.committed.newest.state is not None
    assert_clean(start.committed.newest.state.base)
    assert "[REDACTED GitHub token]" in start.committed.newest.state.base
    note = secrets_note(start.notes)
    assert "GitHub token" in note
    assert "masked secret" in note
    assert note.endswith("found in the restored memory")
    assert_clean(repr(start))


def test_a_masked_value_is_only_redacted_when_the_run_masked_it(world: World) -> None:
    world.committed(1, BASE + f"- The deploy key is {MASKED_DEPLOY_KEY}.\n")

    start = restore_layers(world.layers(), overlay_scope())

    assert MASKED_DEPLOY_KEY in start.text  # an ordinary word to a run that did not mask it
    assert not [note for note in start.notes if note.startswith("redacted")]


def test_secrets_in_an_overlay_are_redacted_and_noted(world: World) -> None:
    world.committed(1, BASE)
    world.overlay(2, BASE + SECRET_LINES, base=BASE + f"- Old {GITHUB_TOKEN}\n")

    start = restore_layers(world.layers(masked=[MASKED_DEPLOY_KEY]), overlay_scope())

    assert_clean(start.text)
    assert start.overlay is not None
    assert start.overlay.state is not None
    assert_clean(start.overlay.state.base)
    assert_clean(start.layer_text)
    assert "GitHub token" in secrets_note(start.notes)


def test_secrets_in_an_older_head_are_redacted_and_noted(world: World) -> None:
    root = world.committed(1, BASE, base="")
    world.committed(2, BASE + SECRET_LINES, parents=[root])
    world.committed(3, BASE + "- Fact three.\n", parents=[root])

    start = restore_layers(world.layers(masked=[MASKED_DEPLOY_KEY]), committed_scope())

    assert "- Fact three.\n" in start.text
    assert "- Deploy with [REDACTED GitHub token].\n" in start.text
    assert_clean(start.text)
    note = secrets_note(start.notes)
    assert "GitHub token" in note
    assert "masked secret" in note


def test_secrets_in_a_restored_provenance_sidecar_never_travel_on(world: World) -> None:
    """The sidecar names each entry by its text: a secret in a line is a secret in its key."""
    first = world.committed(1, BASE + SECRET_LINES)
    start = restore_layers(world.layers(masked=[MASKED_DEPLOY_KEY]), committed_scope())
    assert_clean(json.dumps(sorted(start.provenance.records)))
    # Another run saved (with the secret it did not know to mask) while this one ran.
    world.committed(2, BASE + SECRET_LINES + "- Other run.\n", parents=[first])

    text, _, provenance, _, _ = prepare_save(
        world.layers(masked=[MASKED_DEPLOY_KEY]),
        committed_scope(),
        start,
        start.text + "- This run.\n",
        start.provenance,
    )

    assert_clean(text)
    assert_clean(json.dumps(sorted(provenance.records)))
    assert "- Other run." in provenance.records


# --- StartingMemory.layer_text ------------------------------------------------------------------


def starting(committed_text: str, newest_text: str, overlay: Fetched | None) -> StartingMemory:
    newest = Fetched(
        result=RestoreResult(hit=True, matched_key=f"{COMMITTED}1-1"), text=newest_text
    )
    committed = Committed(
        newest=newest, text=committed_text, holds=frozenset(), provenance=Provenance(records={})
    )
    return StartingMemory(
        restored=newest.result,
        committed=committed,
        overlay=overlay,
        text="start",
        provenance=Provenance(records={}),
        notes=(),
    )


def test_layer_text_is_what_the_layer_this_run_saves_to_holds() -> None:
    stored = Fetched(result=RestoreResult(hit=True, matched_key=f"{OVERLAY}2-1"), text="overlay\n")
    missed = Fetched(result=RestoreResult.miss())
    from_comment = Fetched(result=RestoreResult(hit=True, matched_key=None), text="comment\n")

    assert starting("merged\n", "newest\n", stored).layer_text == "overlay\n"
    assert starting("merged\n", "newest\n", missed).layer_text == "newest\n"
    assert starting("merged\n", "newest\n", from_comment).layer_text == "newest\n"
    # Heads merged at restore are not stored yet: the newest entry is what the layer holds,
    # so a run that keeps the merged text still saves it.
    assert starting("merged\n", "newest\n", None).layer_text == "newest\n"
