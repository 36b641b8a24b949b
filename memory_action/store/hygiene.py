"""Cache hygiene: list a layer's entries, and delete the ones a new save supersedes.

Every save is a new immutable entry, so without pruning each run would leave one more entry in
the repository's 10 GB cache budget. Only the entries whose content the new save holds (the
heads this run merged) are deleted: an entry another run saved after this one restored is kept,
so concurrent runs never lose each other's memory. Listing needs ``actions: read`` (without it
``list_entries`` says so with None, and the restore tells the user), deleting ``actions: write``
(without it old entries are left to GitHub's eviction, quietly).
"""

from __future__ import annotations

from dataclasses import dataclass

from memory_action.store.base import ListedEntry
from memory_action.store.cache_admin import CacheAdmin
from memory_action.store.local import EntryStore


@dataclass(frozen=True, kw_only=True)
class LocalLayerAdmin:
    """The local store's entries; nothing is pruned: they are the history ``memory diff`` shows."""

    store: EntryStore

    def list_entries(self, prefix: str) -> list[ListedEntry]:
        return [
            ListedEntry(key=e.key, created=e.created.timestamp())
            for e in self.store.entries(prefix)
        ]

    def prune(self, *, prefix: str, superseded: frozenset[str], saved_key: str) -> int:
        del prefix, superseded, saved_key
        return 0


@dataclass(frozen=True, kw_only=True)
class CacheLayerAdmin:
    admin: CacheAdmin
    ref: str  # the ref whose scope holds the entries (where this layer's saves land)
    version: str  # only entries of our archive version

    def list_entries(self, prefix: str) -> list[ListedEntry] | None:
        listed = self.admin.list_entries(prefix, self.ref)
        if listed is None:
            return None
        ours = (e for e in listed if e.version == self.version)
        return [ListedEntry(key=e.key, created=e.created_at.timestamp()) for e in ours]

    def prune(self, *, prefix: str, superseded: frozenset[str], saved_key: str) -> int:
        if not superseded:
            return 0
        return self.admin.delete_keys(
            prefix, self.ref, superseded, keep_key=saved_key, version=self.version
        )
