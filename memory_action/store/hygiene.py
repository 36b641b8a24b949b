"""Cache hygiene: after a save, delete the entries it supersedes (needs ``actions: write``).

Every save is a new immutable entry, so without this each run would leave one more entry in the
repository's 10 GB cache budget. Only entries created at or before the one this run restored are
deleted: their content is in the new save. A newer entry (another run saved after this one
restored) is kept, so concurrent runs never lose each other's memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory_action.store.cache_admin import CacheAdmin


@dataclass(frozen=True)
class CachePruner:
    admin: CacheAdmin
    ref: str  # where this run's saves land (GITHUB_REF)
    version: str  # only entries of our archive version

    def prune(self, *, prefix: str, restored_key: str | None, saved_key: str) -> int:
        if restored_key is None or not restored_key.startswith(prefix):
            return 0  # restored from another layer: nothing of this prefix is superseded
        return self.admin.delete_superseded(
            prefix, self.ref, restored_key, None, saved_key, version=self.version
        )
