"""The memory store protocol every store implements, and its result objects.

A store keeps immutable entries under string keys, with the Actions cache's semantics:
``save`` never overwrites an existing key, ``restore`` tries the primary key exactly, then as a
prefix, then each restore key exactly and as a prefix, returning the newest entry of the first
step that matches. A miss is a result, not an exception; trouble is reported in ``warning``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


class StoreLog(Protocol):
    """What a store says in the run's log, and the values it asks the log to hide (signed URLs,
    the runtime token). The run's ``gha.Workflow`` is one; the store knows no more of it."""

    def info(self, message: str) -> None: ...

    def debug(self, message: str) -> None: ...

    def add_mask(self, value: str) -> None:
        """Never show ``value`` in the log again."""
        ...

    def redact(self, text: str) -> str:
        """``text`` as the log may show it: every masked value and found secret hidden."""
        ...


@dataclass(frozen=True, kw_only=True)
class RestoreKeys:
    """The primary key, then up to nine restore keys (prefixes), in the order to try them."""

    primary: str
    restore: tuple[str, ...] = ()

    def all(self) -> tuple[str, ...]:
        return (self.primary, *self.restore)


@dataclass(frozen=True, kw_only=True)
class RestoreResult:
    """What a restore found. Two things are told apart, because a run acts on them differently:

    - ``warning``: the restore **failed** (cache trouble, a refused key, an unreadable store).
      Memory saved before may exist and was not read, so the run must not save over it. Only a
      miss fails.
    - ``note``: the restore worked (a hit, or truly nothing saved yet) and there is something to
      say, such as a corrupt entry the store skipped. The run goes on as after any restore.

    A failed restore sets ``unusable`` when the store found the entry and refused what it holds
    (a corrupt or hostile archive, files that do not match their checksums): trying again will
    not help, but an older entry may be good.
    """

    hit: bool
    matched_key: str | None = None
    warning: str | None = None  # why the restore failed
    note: str | None = None  # said about a restore that worked
    unusable: str | None = None  # the key of the entry found and refused, when the restore failed

    def __post_init__(self) -> None:
        if self.hit and self.warning is not None:
            raise ValueError("a restore that hit did not fail: say it in the note")
        if self.unusable is not None and self.warning is None:
            raise ValueError("an entry that could not be used makes the restore fail: say why")

    @property
    def failed(self) -> bool:
        return self.warning is not None

    @classmethod
    def miss(cls, warning: str | None = None, note: str | None = None) -> RestoreResult:
        return cls(hit=False, warning=warning, note=note)

    @classmethod
    def refused(cls, key: str, why: str, where: str, note: str | None = None) -> RestoreResult:
        """The entry under ``key`` in ``where`` (a store's name) was found and cannot be used:
        a failed restore that names it."""
        warning = (
            f"the memory entry {key} in the {where} cannot be used ({why}); memory is not "
            "saved while it is the newest, so that nothing in it is hidden: delete the entry "
            "to save memory again"
        )
        return cls(hit=False, warning=warning, note=note, unusable=key)


@dataclass(frozen=True, kw_only=True)
class SaveResult:
    saved: bool
    key: str
    reason: str = ""  # why it was not saved, or a note such as "already existed"
    size_bytes: int | None = None
    write_denied: bool = False  # the store refuses every write this run (read-only token, mode)
    raced: bool = False  # another run saved first: merge with what it saved and save again


class MemoryStore(Protocol):
    """Restores and saves one memory folder under scoped keys."""

    @property
    def name(self) -> str:
        """A short description for logs, e.g. 'Actions cache (v2)' or 'local store at …'."""
        ...

    def restore(self, keys: RestoreKeys, folder: Path) -> RestoreResult:
        """Fill ``folder`` with the matched entry, replacing what it held.

        Never leaves a half-restored folder: either the whole entry or nothing restored. (The
        pipeline empties the folder before restoring, so a miss means no memory.)
        """
        ...

    def save(self, key: str, folder: Path) -> SaveResult:
        """Save ``folder`` under ``key`` as a new immutable entry.

        An existing key is never overwritten: the result is not saved, and ``reason`` says so.
        (Every save's key is unique, ``scope.py``, so only a bug or a replay can meet one.)
        """
        ...


@dataclass(frozen=True, kw_only=True)
class ListedEntry:
    key: str
    created: float  # seconds since the epoch


class EntryLister(Protocol):
    """Lists a layer's entries, so a restore can find heads that raced and merge them."""

    def list_entries(self, prefix: str) -> list[ListedEntry] | None:
        """Every entry whose key starts with ``prefix``, newest first; None when this run may
        not list them (the token lacks ``actions: read``)."""
        ...


class SupersededPruner(Protocol):
    """Deletes entries a new save supersedes, so per-run keys do not fill the cache budget."""

    def prune(self, *, prefix: str, superseded: frozenset[str], saved_key: str) -> int:
        """Delete the entries under ``prefix`` whose keys are in ``superseded`` (their content
        is in the new save); never ``saved_key``, never any other. How many were deleted."""
        ...


class LayerAdmin(EntryLister, SupersededPruner, Protocol):
    """Lists and prunes the entries of one ref's scope."""
