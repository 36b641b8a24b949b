"""``memory_store: git``: committed memory on the git branch, everything else in the cache.

- Committed entries are read from and saved to the git store. The cache keeps a copy of each
  save (best effort) and serves reads when GitHub cannot be read.
- Pull request overlays stay in the cache: they live and die with their pull request.
- Migration: when the branch has no committed memory yet but the cache has, the newest cached
  entry is read, and a run that may write committed memory (``migrate``) carries it over to the
  branch under its own key at once.
- A write GitHub refuses for good (branch protection, a ruleset, a token without ``contents:
  write``) is reported once and the run goes on with the cache.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memory_action.store.base import (
    LayerAdmin,
    ListedEntry,
    MemoryStore,
    RestoreKeys,
    RestoreResult,
    SaveResult,
)
from memory_action.store.git import GitMemoryStore

PROTECTED_HINT = (
    "let the workflow push to it (exclude it from the protection rule or ruleset) or set "
    "memory_store: cache"
)
PERMISSION_HINT = "grant the workflow `permissions: contents: write`, or set memory_store: cache"


class TieredStore:
    """``MemoryStore`` routing committed keys to git and the rest to the cache."""

    def __init__(
        self,
        git: GitMemoryStore,
        cache: MemoryStore | None,
        *,
        is_committed: Callable[[str], bool],
        migrate: bool,
        report: Callable[[str], None],
    ) -> None:
        self.git = git
        self._cache = cache
        self._is_committed = is_committed
        self._migrate = migrate
        self._report = report  # said once, when git refuses
        self._reported = False

    @property
    def name(self) -> str:
        cache = f" (overlays: {self._cache.name})" if self._cache is not None else ""
        return f"{self.git.name}{cache}"

    def restore(self, keys: RestoreKeys, folder: Path) -> RestoreResult:
        if not self._is_committed(keys.primary):
            return self._cache_restore(keys, folder)
        found = self.git.restore(keys, folder)
        if found.hit or self._cache is None:
            return found
        cached = self._cache.restore(keys, folder)
        if not cached.hit or cached.matched_key is None:
            return found
        if found.failed:  # GitHub could not be read: the cache's copy is what there is
            return _with_note(cached, f"read the cache's copy: {found.warning}")
        return _with_note(cached, self._carry_over(cached.matched_key, folder))

    def _carry_over(self, key: str, folder: Path) -> str:
        """Migration: the newest cached committed entry becomes the branch's first."""
        if not self._migrate:
            return f"the {self.git.name} has no committed memory yet: read it from the cache"
        saved = self.git.save(key, folder)
        if saved.saved:
            return f"carried the cached committed memory {key} over to the {self.git.name}"
        self._fall_back(saved)
        return f"committed memory stays in the cache for now: {saved.reason}"

    def save(self, key: str, folder: Path) -> SaveResult:
        if not self._is_committed(key):
            return self._cache_save(key, folder)
        saved = self.git.save(key, folder)
        if saved.saved:
            if self._cache is not None:
                self._cache.save(key, folder)  # the copy for reads: its trouble changes nothing
            return saved
        if not saved.write_denied:
            return saved  # raced (the caller merges and saves again), or GitHub trouble
        self._fall_back(saved)
        return self._cache_save(key, folder)

    def _fall_back(self, refused: SaveResult) -> None:
        if self._reported or self.git.refusal is None:
            return
        self._reported = True
        hint = PROTECTED_HINT if self.git.refusal.protected else PERMISSION_HINT
        self._report(
            f"The {self.git.name} refused memory ({refused.reason}); this run goes on with "
            f"the Actions cache: {hint}."
        )

    def _cache_restore(self, keys: RestoreKeys, folder: Path) -> RestoreResult:
        return (
            self._cache.restore(keys, folder) if self._cache is not None else RestoreResult.miss()
        )

    def _cache_save(self, key: str, folder: Path) -> SaveResult:
        if self._cache is None:
            return SaveResult(saved=False, key=key, reason="no cache for memory outside git")
        return self._cache.save(key, folder)


def _with_note(result: RestoreResult, note: str) -> RestoreResult:
    joined = "; ".join(part for part in (result.note, note) if part)
    return RestoreResult(hit=result.hit, matched_key=result.matched_key, note=joined or None)


@dataclass(frozen=True, kw_only=True)
class TieredAdmin:
    """Lists and prunes one ref's entries: committed ones on the branch, overlays in the cache."""

    git: GitMemoryStore
    cache: LayerAdmin | None
    is_committed: Callable[[str], bool]

    def list_entries(self, prefix: str) -> list[ListedEntry] | None:
        if self.is_committed(prefix):
            return self.git.list_entries(prefix)
        return self.cache.list_entries(prefix) if self.cache is not None else None

    def prune(self, *, prefix: str, superseded: frozenset[str], saved_key: str) -> int:
        if self.is_committed(prefix) or self.cache is None:
            return 0
        return self.cache.prune(prefix=prefix, superseded=superseded, saved_key=saved_key)
