"""Cache hygiene through the REST API (``actions-cache-protocol.md`` §8).

Entries are immutable, so every save adds one; the entries a save supersedes are deleted here.
This uses the workflow's ``GITHUB_TOKEN`` (listing needs ``actions: read``, deleting ``actions:
write``), never the runtime token. Like all cache trouble, a refusal is no error: 403 and 404
are skipped with a debug line.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import requests
from github import Auth, Github, GithubException
from github.Requester import Requester

from memory_action.store.base import StoreLog

API_VERSION = "2022-11-28"
HEADERS = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": API_VERSION}
PER_PAGE = 100
MAX_PAGES = 50  # 5000 entries of one prefix and ref: far more than hygiene ever leaves behind
QUIET_STATUSES = frozenset({403, 404})


@dataclass(frozen=True)
class CacheEntryInfo:
    """One entry as the list API describes it."""

    id: int
    ref: str
    key: str
    version: str
    created_at: datetime
    size_in_bytes: int = 0


def parse_entry(item: dict[str, Any]) -> CacheEntryInfo | None:
    """An entry of ``actions_caches``, or None when a field is missing or malformed."""
    try:
        return CacheEntryInfo(
            id=int(item["id"]),
            ref=str(item["ref"]),
            key=str(item["key"]),
            version=str(item.get("version", "")),
            created_at=_aware(datetime.fromisoformat(str(item["created_at"]))),
            size_in_bytes=int(item.get("size_in_bytes") or 0),
        )
    except (KeyError, TypeError, ValueError):
        return None


class CacheAdmin:
    """Lists and deletes the cache entries of one repository."""

    def __init__(self, requester: Requester, repository: str, log: StoreLog) -> None:
        self._requester = requester
        self._path = f"/repos/{repository}/actions/caches"
        self._log = log
        # Listed once per run: pruning after the save deletes what the restore listed (entries
        # this run merged), so it needs no newer listing; a deletion forgets it.
        self._listed: dict[tuple[str, str], list[CacheEntryInfo] | None] = {}

    @classmethod
    def from_token(cls, token: str, repository: str, log: StoreLog, api_url: str) -> CacheAdmin:
        client = Github(
            auth=Auth.Token(token),
            base_url=api_url,
            api_version=API_VERSION,
            timeout=30,
            retry=None,  # hygiene is best effort: a failed call is skipped, never waited on
            # A run lists once and deletes a few entries: PyGithub's pauses only add latency.
            seconds_between_requests=None,
            seconds_between_writes=None,
        )
        return cls(client.requester, repository, log)

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
            parsed = (parse_entry(item) for item in items if isinstance(item, dict))
            entries += [e for e in parsed if e and e.key.startswith(key_prefix) and e.ref == ref]
            if len(items) < PER_PAGE:
                break
        entries.sort(key=lambda entry: entry.created_at, reverse=True)
        return entries

    def _page(self, key_prefix: str, ref: str, page: int) -> list[Any]:
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
        items = data.get("actions_caches") if isinstance(data, dict) else None
        return items if isinstance(items, list) else []

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


def _aware(moment: datetime) -> datetime:
    """Naive times are taken as UTC, so they compare with the API's."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
