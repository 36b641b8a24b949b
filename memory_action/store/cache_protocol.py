"""Errors, retry policies and shared types of the Actions cache clients (v1, v2, blob).

Every message of these errors is safe to log: no URL, no token (signed URLs are masked anyway).

    CacheError (memory_action.errors)
    └── ServiceError          a cache call failed; not retried
        ├── TransientError    may succeed when repeated (5xx, a success whose body is not JSON)
        │   └── NetworkError  connection refused or reset, timeout, truncated body
        ├── AlreadyExistsError     the key/version/scope exists (HTTP 409 ``already_exists``)
        ├── WriteDeniedError       ``cache write denied:``: the token of this run is read-only
        └── SignatureRejectedError a signed blob URL was refused (403): it expired, ask again
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from tenacity import RetryCallState, Retrying, retry_if_exception_type, wait_fixed
from tenacity.stop import stop_base

from memory_action.errors import CacheError
from memory_action.store.base import RestoreKeys

T = TypeVar("T")

TWIRP_ATTEMPTS = 5  # lib/internal/shared/cacheTwirpClient.js
NETWORK_ATTEMPTS = 2  # the JS client never retries network errors; one extra try is harmless
V1_ATTEMPTS = 2  # lib/internal/requestUtils.js: 2 attempts, 5 s apart
V1_DELAY_SECONDS = 5.0
BASE_DELAY_SECONDS = 3.0
BACKOFF_MULTIPLIER = 1.5


class ServiceError(CacheError):
    """A cache call failed; ``status`` is the HTTP status when there was one."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class TransientError(ServiceError):
    """Worth repeating: a 5xx, or a body that is not JSON."""


class NetworkError(TransientError):
    """The connection failed, timed out, or the body was cut short."""


class AlreadyExistsError(ServiceError):
    """The entry exists; ``after_retry`` when an earlier attempt of this call may have made it."""

    def __init__(self, message: str, after_retry: bool = False) -> None:
        super().__init__(message, status=409)
        self.after_retry = after_retry


class WriteDeniedError(ServiceError):
    """The service refused a write: the cache token of this run is read-only."""


class SignatureRejectedError(ServiceError):
    """A signed blob URL was refused with 403: its signature expired or is wrong."""


@dataclass(frozen=True, kw_only=True)
class Hit:
    """A lookup that matched: the entry's key and where to download it (a masked URL)."""

    matched_key: str
    url: str


@dataclass(frozen=True, kw_only=True)
class Reservation:
    """A reserved entry: v2 has a signed upload URL, v1 a numeric cache id."""

    key: str
    version: str
    upload_url: str = ""
    cache_id: int | None = None


@dataclass(frozen=True, kw_only=True)
class RetryClock:
    """Sleep and random source of every retry; tests inject fakes so nothing waits."""

    sleep: Callable[[float], None] = time.sleep
    random: Callable[[], float] = random.random


class _JsBackoff:
    """After attempt n (from 0): 3 s, then uniform in [3·1.5^n, 3·1.5^(n+1)) seconds."""

    def __init__(self, rng: Callable[[], float]) -> None:
        self._rng = rng

    def __call__(self, state: RetryCallState) -> float:
        n = state.attempt_number - 1
        if n == 0:
            return BASE_DELAY_SECONDS
        low = BASE_DELAY_SECONDS * BACKOFF_MULTIPLIER**n
        high = BASE_DELAY_SECONDS * BACKOFF_MULTIPLIER ** (n + 1)
        return low + (high - low) * self._rng()


class _StopAfter(stop_base):
    """Stop after ``limit`` attempts, or ``network_limit`` when the last was a NetworkError."""

    def __init__(self, limit: int, network_limit: int) -> None:
        self._limit = limit
        self._network_limit = network_limit

    def __call__(self, state: RetryCallState) -> bool:
        failed = state.outcome is not None and state.outcome.failed
        exc = state.outcome.exception() if failed and state.outcome else None
        limit = self._network_limit if isinstance(exc, NetworkError) else self._limit
        return state.attempt_number >= limit


def twirp_retrying(clock: RetryClock) -> Retrying:
    """The v2 and blob policy: up to 5 attempts with the JS client's backoff."""
    return Retrying(
        stop=_StopAfter(TWIRP_ATTEMPTS, NETWORK_ATTEMPTS),
        wait=_JsBackoff(clock.random),
        sleep=clock.sleep,
        retry=retry_if_exception_type(TransientError),
        reraise=True,
    )


def v1_retrying(clock: RetryClock) -> Retrying:
    """The legacy policy: 2 attempts, 5 s apart."""
    return Retrying(
        stop=_StopAfter(V1_ATTEMPTS, V1_ATTEMPTS),
        wait=wait_fixed(V1_DELAY_SECONDS),
        sleep=clock.sleep,
        retry=retry_if_exception_type(TransientError),
        reraise=True,
    )


class Attempts:
    """Runs a call under a retry policy and counts its attempts, for messages."""

    def __init__(self, retrying: Retrying) -> None:
        self._retrying = retrying
        self.count = 0

    def run(self, call: Callable[[], T], what: str) -> T:
        def attempt() -> T:
            self.count += 1
            return call()

        try:
            return self._retrying(attempt)
        except TransientError as exc:
            raise ServiceError(
                f"{what} failed after {self.count} attempt(s): {exc}", exc.status
            ) from exc


class CacheBackend(Protocol):
    """What the store needs from a cache service; v1 and v2 implement it."""

    name: str

    def lookup(self, keys: RestoreKeys, version: str) -> Hit | None: ...

    def reserve(self, key: str, version: str, size: int) -> Reservation: ...

    def upload(self, reservation: Reservation, archive: Path, size: int) -> None: ...

    def finalize(self, reservation: Reservation, size: int) -> None: ...

    def download(self, url: str, dest: Path, max_bytes: int) -> int: ...
