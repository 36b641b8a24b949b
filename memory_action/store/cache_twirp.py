"""Cache service v2: three Twirp RPCs with JSON bodies (§2), plus the blob transfer.

Requests use proto field names, omit defaults (an empty ``restore_keys``), send int64 as strings
and never send ``metadata``. Responses are parsed leniently into the models of ``cache_answers``:
snake_case or lowerCamel names, int64 as a string or a number, and ``"ok": false`` (or no
``ok``) is "not ok"; a 2xx that is no JSON object, or whose ``ok`` is neither true nor false, is
garbled: cache trouble, never a miss.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

from memory_action.safety import untrusted_json
from memory_action.safety.numbers import ascii_int
from memory_action.store.base import RestoreKeys
from memory_action.store.cache_answers import (
    CreateAnswer,
    FinalizeAnswer,
    LookupAnswer,
    TwirpErrorBody,
    object_or_empty,
    read_answer,
)
from memory_action.store.cache_blob import BlobTransfer
from memory_action.store.cache_http import HttpSession
from memory_action.store.cache_protocol import (
    AlreadyExistsError,
    Attempts,
    Hit,
    Reservation,
    RetryClock,
    ServiceError,
    TransientError,
    WriteDeniedError,
    twirp_retrying,
)
from memory_action.store.secret import Secret
from memory_action.version import USER_AGENT

SERVICE = "github.actions.results.api.v1.CacheService"
RETRYABLE_STATUSES = frozenset({500, 502, 503, 504})
WRITE_DENIED_PREFIX = "cache write denied:"
READ_DENIED_MARK = "cache read denied:"
USAGE_MARK = "insufficient usage"

JsonObject = dict[str, Any]


def compact_json(body: Mapping[str, object]) -> bytes:
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def lookup_body(keys: RestoreKeys, version: str) -> JsonObject:
    body: JsonObject = {"key": keys.primary}
    if keys.restore:
        body["restore_keys"] = list(keys.restore)
    body["version"] = version
    return body


def create_body(key: str, version: str) -> JsonObject:
    return {"key": key, "version": version}


def finalize_body(key: str, version: str, size: int) -> JsonObject:
    return {"key": key, "size_bytes": str(size), "version": version}


def parse_twirp(response: httpx.Response, method: str) -> JsonObject:
    """The JSON body of a 2xx; otherwise the error the JS client would make of it."""
    status = response.status_code
    try:
        body = untrusted_json.loads(response.content)
    except untrusted_json.UntrustedJsonError as exc:  # the service spoke, but nothing readable
        raise ServiceError(f"{method} sent a garbled answer: {exc}", status) from None
    except ValueError:
        # The status decides first: the JS client parses before it looks, so it retries even a
        # plain-text denial or conflict; here only a garbled success or a 5xx is tried again.
        if 200 <= status < 300 or status in RETRYABLE_STATUSES:
            raise TransientError(f"{method}: HTTP {status}, the body is not JSON", status) from None
        raise _twirp_error(method, status, response, "", "") from None
    if 200 <= status < 300:
        if not isinstance(body, dict):  # "[]" or "null": no answer to read a miss from
            raise ServiceError(f"{method} sent a garbled answer: not a JSON object", status)
        return body
    error = TwirpErrorBody.model_validate(object_or_empty(body))
    raise _twirp_error(method, status, response, error.code, error.msg)


def _twirp_error(
    method: str, status: int, response: httpx.Response, code: str, msg: str
) -> ServiceError:
    """The JS client's order: quota, rate limit, retryable 5xx; then what we act on."""
    text = f"{method}: HTTP {status} {response.reason_phrase}" + (f": {msg}" if msg else "")
    if USAGE_MARK in msg:
        return ServiceError(f"the cache storage quota has been reached ({text})", status)
    if status == 429:
        return ServiceError(_rate_limited(text, response.headers.get("Retry-After", "")), status)
    if status in RETRYABLE_STATUSES:
        return TransientError(text, status)
    if status == 409 or code == "already_exists":
        return AlreadyExistsError(text)
    return _denied_error(text, status, msg)


def _denied_error(text: str, status: int, msg: str) -> ServiceError:
    if msg.startswith(WRITE_DENIED_PREFIX):
        return WriteDeniedError(text, status)
    if status == 403 or READ_DENIED_MARK in msg:
        return ServiceError(f"reading the cache was denied ({text})", status)
    return ServiceError(text, status)


def _rate_limited(text: str, retry_after: str) -> str:
    seconds = ascii_int(retry_after.strip()) or 0
    later = f"; the limit resets in {seconds} seconds" if seconds > 0 else ""
    return f"rate limited by the cache service{later} ({text})"


class TwirpCacheClient:
    """The v2 backend: lookup, reserve, upload, finalize, download."""

    name = "Actions cache (v2)"

    def __init__(
        self,
        *,
        origin: str,
        token: Secret,
        http: HttpSession,
        blob: BlobTransfer,
        clock: RetryClock,
    ) -> None:
        self._origin = origin
        self._token = token
        self._http = http
        self._blob = blob
        self._clock = clock

    def call(self, method: str, body: Mapping[str, object]) -> JsonObject:
        """One RPC with the JS client's retries (5 attempts, 3 s, then jittered x1.5 backoff)."""
        attempts = Attempts(twirp_retrying(self._clock))
        payload = compact_json(body)

        def send() -> JsonObject:
            try:
                return parse_twirp(self._post(method, payload), method)
            except AlreadyExistsError as exc:
                raise AlreadyExistsError(str(exc), after_retry=attempts.count > 1) from None

        self._http.log.debug(f"Cache service v2: {method}")
        return attempts.run(send, method)

    def _post(self, method: str, payload: bytes) -> httpx.Response:
        headers = {
            "Content-Type": "application/json",
            "Authorization": f"Bearer {self._token.reveal()}",
            "User-Agent": USER_AGENT,
        }
        url = f"{self._origin}/twirp/{SERVICE}/{method}"
        timeout = self._http.timeouts.for_rpc()
        # No Accept header, like the JS client; httpx would add "Accept: */*".
        return self._http.send(
            "POST", url, headers=headers, content=payload, timeout=timeout, drop=("Accept",)
        )

    def lookup(self, keys: RestoreKeys, version: str) -> Hit | None:
        method = "GetCacheEntryDownloadURL"
        answer = read_answer(LookupAnswer, self.call(method, lookup_body(keys, version)), method)
        url = answer.signed_download_url
        if not answer.ok or not url:
            return None
        self._http.mask_signed_url(url)
        return Hit(matched_key=answer.matched_key or keys.primary, url=url)

    def reserve(self, key: str, version: str, size: int) -> Reservation:
        method = "CreateCacheEntry"
        answer = read_answer(CreateAnswer, self.call(method, create_body(key, version)), method)
        message = answer.message
        if not answer.ok:
            if message.startswith(WRITE_DENIED_PREFIX):
                raise WriteDeniedError(message)
            raise ServiceError(f"Cache reservation failed: {message or 'no reason given'}")
        url = answer.signed_upload_url
        if not url:
            raise ServiceError("Cache reservation failed: the service sent no upload URL")
        self._http.mask_signed_url(url)
        return Reservation(key=key, version=version, upload_url=url)

    def upload(self, reservation: Reservation, archive: Path, size: int) -> None:
        self._blob.upload(reservation.upload_url, archive, size)

    def finalize(self, reservation: Reservation, size: int) -> None:
        body = finalize_body(reservation.key, reservation.version, size)
        method = "FinalizeCacheEntryUpload"
        answer = read_answer(FinalizeAnswer, self.call(method, body), method)
        if not answer.ok:
            message = answer.message or "no reason given"
            raise ServiceError(f"FinalizeCacheEntryUpload failed: {message}")
        self._http.log.debug(f"Cache entry id: {answer.entry_id}")

    def download(self, url: str, dest: Path, max_bytes: int) -> int:
        return self._blob.download(url, dest, max_bytes)
