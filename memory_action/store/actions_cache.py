"""The memory store on the GitHub Actions cache, compatible with ``@actions/cache`` 6.x.

One store serves one memory folder, ``workspace/<relative folder>``. Its version is the one
``actions/cache`` computes for ``path: <relative folder>``, so either side restores what the
other saved. Cache trouble never raises: a restore becomes a miss with a warning, a save a
``SaveResult`` with ``saved=False`` and the reason (``actions-cache-protocol.md`` §2.1 to 2.3).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from types import TracebackType

import httpx

from memory_action.errors import CacheError
from memory_action.store.archive import (
    ArchiveError,
    ArchiveLimits,
    Compression,
    cache_version,
    create_archive,
    extract_archive,
    fix_ownership,
)
from memory_action.store.base import RestoreKeys, RestoreResult, SaveResult, StoreLog
from memory_action.store.cache_blob import BlobSizes, BlobTransfer
from memory_action.store.cache_env import CacheConfig, CacheProtocol
from memory_action.store.cache_http import HttpSession, Timeouts
from memory_action.store.cache_protocol import (
    AlreadyExistsError,
    CacheBackend,
    Hit,
    RetryClock,
    ServiceError,
    SignatureRejectedError,
    WriteDeniedError,
)
from memory_action.store.cache_twirp import TwirpCacheClient
from memory_action.store.cache_v1 import CHUNK_SIZE, V1CacheClient
from memory_action.store.keys import key_problem, keys_problem

READ_ONLY_MESSAGE = (
    "the cache token of this run is read-only (events such as issue_comment and "
    "pull_request_target get a read-only cache since 2026-06-26); memory was not saved"
)
ARCHIVE_NAMES = {Compression.ZSTD_WITHOUT_LONG: "cache.tzst", Compression.GZIP: "cache.tgz"}


@dataclass(frozen=True, kw_only=True)
class CacheTuning:
    """Knobs tests turn: timeouts, the retry clock, blob and chunk sizes, archive limits."""

    timeouts: Timeouts = field(default_factory=Timeouts)
    clock: RetryClock = field(default_factory=RetryClock)
    blob_sizes: BlobSizes = field(default_factory=BlobSizes)
    v1_chunk_size: int = CHUNK_SIZE
    limits: ArchiveLimits = field(default_factory=ArchiveLimits)


@dataclass(frozen=True, kw_only=True)
class _Found:
    hit: Hit
    compression: Compression
    version: str


def build_backend(
    config: CacheConfig, http: HttpSession, tuning: CacheTuning
) -> TwirpCacheClient | V1CacheClient:
    blob = BlobTransfer(http, tuning.clock, tuning.blob_sizes)
    if config.protocol is CacheProtocol.V2:
        return TwirpCacheClient(
            origin=config.base_url, token=config.token, http=http, blob=blob, clock=tuning.clock
        )
    return V1CacheClient(
        base_url=config.base_url,
        token=config.token,
        http=http,
        blob=blob,
        clock=tuning.clock,
        chunk_size=tuning.v1_chunk_size,
    )


class ActionsCacheStore:
    """``MemoryStore`` over the Actions cache service (v2 Twirp, or v1 on GHES)."""

    def __init__(
        self,
        config: CacheConfig,
        folder: PurePosixPath,
        log: StoreLog,
        *,
        client: httpx.Client | None = None,
        tuning: CacheTuning | None = None,
    ) -> None:
        if not folder.parts or folder.is_absolute() or ".." in folder.parts:
            raise ValueError(f"the memory folder must be relative to the workspace: {folder}")
        self._config = config
        self._relative = folder
        self._log = log
        self._tuning = tuning or CacheTuning()
        self._owns_client = client is None
        self._client = client if client is not None else httpx.Client(follow_redirects=False)
        log.add_mask(config.token.reveal())
        http = HttpSession(self._client, log, self._tuning.timeouts)
        self._backend: CacheBackend = build_backend(config, http, self._tuning)
        self._write_denied = False
        # Read through once per run: entries are immutable, so an entry downloaded once is
        # extracted again from its archive; and gzip entries come only from other clients
        # (ours saves zstd), so a gzip miss stays a miss for the run. zstd lookups are always
        # asked again: the check before a save looks for what racing runs saved meanwhile.
        self._archives: dict[str, tuple[Path, Compression]] = {}  # matched key → archive
        self._archive_dir: tempfile.TemporaryDirectory[str] | None = None
        self._gzip_misses: set[tuple[str, ...]] = set()
        self.version = cache_version([str(folder)], Compression.ZSTD_WITHOUT_LONG)
        self._gzip_version = cache_version([str(folder)], Compression.GZIP)

    @property
    def name(self) -> str:
        return self._backend.name

    @property
    def may_write(self) -> bool:
        """False when ACTIONS_CACHE_MODE forbids writing or the token proved read-only."""
        return self._config.may_write and not self._write_denied

    def close(self) -> None:
        if self._archive_dir is not None:
            self._archive_dir.cleanup()
            self._archive_dir = None
            self._archives.clear()
        if self._owns_client:
            self._client.close()

    def __enter__(self) -> ActionsCacheStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- restore ------------------------------------------------------------------------------

    def restore(self, keys: RestoreKeys, folder: Path) -> RestoreResult:
        """Restore the newest matching entry into ``folder``; leave it untouched on a miss.

        ``folder`` may be any folder (the entry's memory folder is extracted into it): runs read
        older entries into scratch folders to merge them.
        """
        problem = keys_problem(keys.all())
        if problem is not None:
            return RestoreResult.miss(warning=f"not restoring from the {self.name}: {problem}")
        if not self._config.may_read:
            # The caller tells the user once; this is the trace.
            self._log.debug(f"ACTIONS_CACHE_MODE={self._config.mode}: no cache lookup")
            return RestoreResult.miss()
        try:
            return self._restore(keys, folder)
        except (CacheError, OSError) as exc:
            return RestoreResult.miss(
                warning=self._safe(f"memory was not restored from the {self.name}: {exc}")
            )

    def _restore(self, keys: RestoreKeys, folder: Path) -> RestoreResult:
        found = self._lookup(keys)
        if found is None:
            self._log.info(f"Cache not found for keys: {', '.join(keys.all())}")
            return RestoreResult.miss()
        hit, archive, compression = self._archive(keys, found)
        try:
            extract_archive(archive, compression, self._relative, folder, self._tuning.limits)
        except ArchiveError as exc:  # the entry was read whole: what it holds is refused
            why = self._safe(str(exc))
            return RestoreResult.refused(hit.matched_key, why, self.name)
        fix_ownership(folder, self._config.workspace)
        label = "Cache hit for" if hit.matched_key == keys.primary else "Cache hit for restore-key"
        self._log.info(f"{label}: {hit.matched_key}")
        return RestoreResult(hit=True, matched_key=hit.matched_key)

    def _archive(self, keys: RestoreKeys, found: _Found) -> tuple[Hit, Path, Compression]:
        """The found entry's archive: downloaded, or kept from an earlier restore of this run."""
        kept = self._archives.get(found.hit.matched_key)
        if kept is not None:
            return found.hit, *kept
        if self._archive_dir is None:
            self._config.temp_dir.mkdir(parents=True, exist_ok=True)
            self._archive_dir = tempfile.TemporaryDirectory(
                prefix="memory-cache-", dir=self._config.temp_dir
            )
        # A folder of its own per download, failed ones included: a restore that tries again
        # after a failed download must not trip over the folder the failure left.
        folder = Path(tempfile.mkdtemp(prefix="entry-", dir=self._archive_dir.name))
        archive = folder / ARCHIVE_NAMES[found.compression]
        try:
            hit = self._download(keys, found, archive)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)  # no partial archive stays behind
            raise
        self._archives[hit.matched_key] = (archive, found.compression)
        return hit, archive, found.compression

    def _lookup(self, keys: RestoreKeys) -> _Found | None:
        """zstd first; then gzip, for entries saved where zstd was missing (§6.5)."""
        hit = self._backend.lookup(keys, self.version)
        if hit is not None:
            return _Found(hit=hit, compression=Compression.ZSTD_WITHOUT_LONG, version=self.version)
        if tuple(keys.all()) in self._gzip_misses:
            return None
        hit = self._backend.lookup(keys, self._gzip_version)
        if hit is None:
            self._gzip_misses.add(tuple(keys.all()))
            return None
        return _Found(hit=hit, compression=Compression.GZIP, version=self._gzip_version)

    def _download(self, keys: RestoreKeys, found: _Found, archive: Path) -> Hit:
        limit = self._tuning.limits.max_stream_bytes
        try:
            self._backend.download(found.hit.url, archive, limit)
        except SignatureRejectedError:
            # The signed URL expired: ask for a fresh one, once.
            fresh = self._backend.lookup(keys, found.version)
            if fresh is None:
                raise ServiceError("the cache entry vanished after its URL expired") from None
            self._backend.download(fresh.url, archive, limit)
            return fresh
        return found.hit

    # -- save ---------------------------------------------------------------------------------

    def save(self, key: str, folder: Path) -> SaveResult:
        """Save ``folder`` as a new immutable entry; an existing key is not saved over."""
        self._check_folder(folder)
        refused = self._refuse_save(key)
        if refused is not None:
            return refused
        try:
            size = self._save(key)
        except WriteDeniedError:
            self._write_denied = True
            return _read_only(key)
        except AlreadyExistsError as exc:
            return self._already_exists(key, exc)
        except (CacheError, OSError) as exc:
            reason = self._safe(f"memory was not saved to the {self.name}: {exc}")
            return SaveResult(saved=False, key=key, reason=reason)
        self._log.info(f"Cache saved with key: {key}")
        return SaveResult(saved=True, key=key, size_bytes=size)

    def _refuse_save(self, key: str) -> SaveResult | None:
        """A result when the save must not even be tried (no request is sent), else None."""
        problem = key_problem(key)
        if problem is not None:
            return SaveResult(saved=False, key=key, reason=f"not saved: {problem}")
        if not self._config.may_write:
            reason = (
                f"ACTIONS_CACHE_MODE={self._config.mode} does not allow writing to the cache; "
                "memory was not saved"
            )
            return SaveResult(saved=False, key=key, reason=reason, write_denied=True)
        if self._write_denied:  # refused before: no second request, no second story
            return _read_only(key)
        return None

    def _save(self, key: str) -> int:
        self._config.temp_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="memory-cache-", dir=self._config.temp_dir) as tmp:
            archive = Path(tmp) / ARCHIVE_NAMES[Compression.ZSTD_WITHOUT_LONG]
            size = create_archive(self._config.workspace, self._relative, archive)
            reservation = self._backend.reserve(key, self.version, size)
            self._backend.upload(reservation, archive, size)
            self._backend.finalize(reservation, size)
        return size

    def _already_exists(self, key: str, exc: AlreadyExistsError) -> SaveResult:
        """A 409: this save did not happen (entries are immutable), whoever made the entry."""
        if exc.after_retry:
            # An earlier attempt may have reserved it and then timed out: nothing was uploaded.
            reason = (
                f"memory was not saved: the {self.name} reports key {key!r} as existing after a "
                "failed attempt to reserve it; the next run saves under a new key"
            )
        else:
            reason = f"an entry with this key exists ({key!r}); nothing was saved over it"
        return SaveResult(saved=False, key=key, reason=reason)

    # -- helpers ------------------------------------------------------------------------------

    def _check_folder(self, folder: Path) -> None:
        expected = self._config.workspace.joinpath(*self._relative.parts)
        if _absolute(folder) != _absolute(expected):
            raise ValueError(f"this store serves {expected}, not {folder}")

    def _safe(self, text: str) -> str:
        return self._log.redact(text)


def _read_only(key: str) -> SaveResult:
    return SaveResult(saved=False, key=key, reason=READ_ONLY_MESSAGE, write_denied=True)


def _absolute(path: Path) -> Path:
    return Path(os.path.abspath(path))  # noqa: PTH100 - resolve() would follow links
