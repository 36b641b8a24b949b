"""Cache hygiene through the REST API (``actions-cache-protocol.md`` §8).

Entries are immutable, so every save adds one; the entries a save supersedes are deleted here.
This uses the workflow's ``GITHUB_TOKEN`` (listing needs ``actions: read``, deleting ``actions:
write``), never the runtime token. Like all cache trouble, a refusal is no error: 403 and 404
are skipped with a debug line.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import requests
from github import GithubException
from github.Requester import Requester
from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from memory_action.store.base import StoreLog

API_VERSION = "2022-11-28"
HEADERS = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": API_VERSION}
PER_PAGE = 100
MAX_PAGES = 50  # 5000 entries of one prefix and ref: far more than hygiene ever leaves behind
QUIET_STATUSES = frozenset({403, 404})


def _iso_time(value: object) -> datetime:
    """An ISO 8601 time as the API writes it; a naive one is taken as UTC, so times compare."""
    moment = datetime.fromisoformat(str(value))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class CacheEntryInfo(BaseModel):
    """One entry as the list API describes it (parsed from its untrusted answer)."""

    model_config = ConfigDict(frozen=True)

    id: int
    ref: str
    key: str
    version: str = ""
    created_at: Annotated[datetime, BeforeValidator(_iso_time)]
    size_in_bytes: Annotated[int, BeforeValidator(lambda size: size or 0)] = 0


class _ListedPage(BaseModel):
    """One page of ``GET /repos/{repo}/actions/caches``; each entry is parsed on its own, so one
    malformed entry does not hide the others."""

    actions_caches: list[object] = []


def parse_entry(item: object) -> CacheEntryInfo | None:
    """An entry of ``actions_caches``, or None when a field is missing or malformed."""
    try:
        return CacheEntryInfo.model_validate(item)
    except ValidationError:
        return None


class CacheAdmin:
    """Lists and deletes the cache entries of one repository, through the requester of the
    run's GitHub client (its token, timeout and retries of reads)."""

    def __init__(self, requester: Requester, repository: str, log: StoreLog) -> None:
        self._requester = requester
        self._path = f"/repos/{repository}/actions/caches"
        self._log = log
        # Listed once per run: pruning after the save deletes what the restore listed (entries
        # this run merged), so it needs no newer listing; a deletion forgets it.
        self._listed: dict[tuple[str, str], list[CacheEntryInfo] | None] = {}

    def list_entries(self, key_prefix: str, ref: str) -> list[CacheEntryInfo] | None:
        """Entries whose key starts with ``key_prefix`` in ``ref``, newest first, every page.

        None when the token may not list them (HTTP 403 or 404: no ``actions: read``); after
        other trouble, the entries of the pages read so far. Asked once per prefix and ref.
        """
        if (key_prefix, ref) not in self._listed:
            self._listed[(key_prefix, ref)] = self._list(key_prefix, ref)
        listed = self._listed[(key_prefix, ref)]
        return list(listed) if listed is not None else None

    def _list(self, key_prefix: str, ref: str) -> list[CacheEntryInfo] | None:
        entries: list[CacheEntryInfo] = []
        for page in range(1, MAX_PAGES + 1):
            try:
                items = self._page(key_prefix, ref, page)
            except (GithubException, requests.RequestException) as exc:
                self._skip("listing cache entries", exc)
                if isinstance(exc, GithubException) and exc.status in QUIET_STATUSES:
                    return None
                break
            parsed = (parse_entry(item) for item in items)
            entries += [e for e in parsed if e and e.key.startswith(key_prefix) and e.ref == ref]
            if len(items) < PER_PAGE:
                break
        entries.sort(key=lambda entry: entry.created_at, reverse=True)
        return entries

    def _page(self, key_prefix: str, ref: str, page: int) -> list[object]:
        parameters = {
            "key": key_prefix,
            "ref": ref,
            "sort": "created_at",
            "direction": "desc",
            "per_page": PER_PAGE,
            "page": page,
        }
        _, data = self._requester.requestJsonAndCheck(
            "GET", self._path, parameters=parameters, headers=dict(HEADERS)
        )
        try:
            return _ListedPage.model_validate(data).actions_caches
        except ValidationError:
            return []

    def delete_keys(
        self, prefix: str, ref: str, keys: frozenset[str], *, keep_key: str, version: str | None
    ) -> int:
        """Delete the entries of ``prefix`` in ``ref`` whose key is in ``keys`` (not
        ``keep_key``; only ``version`` when given). Refused (403): stop quietly."""
        deleted = 0
        for entry in self.list_entries(prefix, ref) or []:
            if entry.key not in keys or entry.key == keep_key:
                continue
            if version is not None and entry.version != version:
                continue
            outcome = self._delete(entry)
            self._listed.clear()
            if outcome is None:
                break
            deleted += outcome
        return deleted

    def _delete(self, entry: CacheEntryInfo) -> int | None:
        """1 when deleted, 0 when it was gone already (or failed), None when refused."""
        try:
            self._requester.requestJsonAndCheck(
                "DELETE", f"{self._path}/{entry.id}", headers=dict(HEADERS)
            )
        except GithubException as exc:
            self._skip(f"deleting cache entry {entry.key}", exc)
            return None if exc.status == 403 else 0
        except requests.RequestException as exc:
            self._skip(f"deleting cache entry {entry.key}", exc)
            return 0
        self._log.debug(f"Deleted superseded cache entry {entry.key} ({entry.ref})")
        return 1

    def _skip(self, what: str, exc: Exception) -> None:
        status = exc.status if isinstance(exc, GithubException) else None
        if status in QUIET_STATUSES:
            self._log.debug(f"Cache hygiene skipped: {what} got HTTP {status}")
        else:
            self._log.debug(f"Cache hygiene skipped: {what} failed: {type(exc).__name__}")
