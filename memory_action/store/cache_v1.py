"""Cache service v1 (legacy, GHES): REST calls under ``{ACTIONS_CACHE_URL}_apis/artifactcache/``.

Like ``lib/internal/cacheHttpClient.js``: every call sends ``Accept:
application/json;api-version=6.0-preview.1``; JSON bodies are pretty-printed; the archive goes up
in ``PATCH`` chunks with ``Content-Range``; 2 attempts 5 s apart, retrying network errors and
502/503/504 (not 500).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from memory_action.safety import untrusted_json
from memory_action.store.base import RestoreKeys
from memory_action.store.cache_answers import (
    V1ErrorBody,
    V1Lookup,
    V1Reservation,
    object_or_empty,
    read_answer,
)
from memory_action.store.cache_blob import BlobTransfer, file_slice
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
    v1_retrying,
)
from memory_action.store.cache_twirp import WRITE_DENIED_PREFIX
from memory_action.store.secret import Secret
from memory_action.version import USER_AGENT

ACCEPT = "application/json;api-version=6.0-preview.1"
JSON = {"Content-Type": "application/json"}
RETRYABLE_STATUSES = frozenset({502, 503, 504})
CHUNK_SIZE = 32 * 1024 * 1024  # lib/options.js default upload chunk
URI_COMPONENT_SAFE = "!*'()"  # what encodeURIComponent leaves alone besides [A-Za-z0-9_.~-]


def lookup_resource(keys: RestoreKeys, version: str) -> str:
    return f"cache?keys={quote(','.join(keys.all()), safe=URI_COMPONENT_SAFE)}&version={version}"


def pretty_json(body: dict[str, Any]) -> bytes:
    return json.dumps(body, indent=2, ensure_ascii=False).encode()


def _message(response: httpx.Response) -> str:
    try:
        body = untrusted_json.loads(response.content)
    except ValueError:
        return ""
    return V1ErrorBody.model_validate(object_or_empty(body)).text()


def check_v1(response: httpx.Response, what: str) -> None:
    status = response.status_code
    if 200 <= status < 300:
        return
    message = _message(response)
    text = f"{what}: HTTP {status} {response.reason_phrase}" + (f": {message}" if message else "")
    if status in RETRYABLE_STATUSES:
        raise TransientError(text, status)
    if message.startswith(WRITE_DENIED_PREFIX):
        raise WriteDeniedError(message, status)
    if status == 409:
        raise AlreadyExistsError(text)
    raise ServiceError(text, status)


def _json_object(response: httpx.Response, what: str) -> dict[str, Any]:
    try:
        body = untrusted_json.loads(response.content)
    except ValueError:
        raise ServiceError(f"{what}: the body is not JSON", response.status_code) from None
    if not isinstance(body, dict):  # "[]" or "null": no answer to read a miss from
        raise ServiceError(f"{what} sent a garbled answer: not a JSON object", response.status_code)
    return body


class V1CacheClient:
    """The legacy backend; the interface matches ``TwirpCacheClient``."""

    name = "Actions cache (v1)"

    def __init__(
        self,
        *,
        base_url: str,
        token: Secret,
        http: HttpSession,
        blob: BlobTransfer,
        clock: RetryClock,
        chunk_size: int = CHUNK_SIZE,
    ) -> None:
        self._base = f"{base_url}_apis/artifactcache/"
        self._token = token
        self._http = http
        self._blob = blob
        self._clock = clock
        self._chunk_size = chunk_size

    def _request(
        self,
        method: str,
        resource: str,
        what: str,
        *,
        content: bytes | Callable[[], Iterator[bytes]] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        all_headers = {
            "Accept": ACCEPT,
            "Authorization": f"Bearer {self._token.reveal()}",
            "User-Agent": USER_AGENT,
            **(headers or {}),
        }

        attempts = Attempts(v1_retrying(self._clock))

        def send() -> httpx.Response:
            # A fresh body iterator per attempt.
            body = content() if callable(content) else content
            response = self._http.send(
                method,
                self._base + resource,
                headers=all_headers,
                content=body,
                timeout=self._http.timeouts.for_rpc(),
            )
            try:
                check_v1(response, what)
            except AlreadyExistsError as exc:
                raise AlreadyExistsError(str(exc), after_retry=attempts.count > 1) from None
            return response

        self._http.log.debug(f"Cache service v1: {what}")
        return attempts.run(send, what)

    def lookup(self, keys: RestoreKeys, version: str) -> Hit | None:
        response = self._request("GET", lookup_resource(keys, version), "cache lookup")
        if response.status_code == 204:
            return None
        found = read_answer(V1Lookup, _json_object(response, "cache lookup"), "cache lookup")
        url = found.archive_location
        if not url:
            return None
        self._http.mask_signed_url(url)
        return Hit(matched_key=found.cache_key or keys.primary, url=url)

    def reserve(self, key: str, version: str, size: int) -> Reservation:
        body = pretty_json({"key": key, "version": version, "cacheSize": size})
        response = self._request("POST", "caches", "reserve cache", content=body, headers=JSON)
        cache_id = V1Reservation.model_validate(_json_object(response, "reserve cache")).cache_id
        if cache_id is None:
            raise ServiceError("reserve cache: the service sent no cache id")
        return Reservation(key=key, version=version, cache_id=cache_id)

    def upload(self, reservation: Reservation, archive: Path, size: int) -> None:
        for start in range(0, size, self._chunk_size):
            end = min(start + self._chunk_size, size) - 1
            length = end - start + 1
            headers = {
                "Content-Type": "application/octet-stream",
                "Content-Range": f"bytes {start}-{end}/*",
                "Content-Length": str(length),
            }
            self._request(
                "PATCH",
                f"caches/{reservation.cache_id}",
                f"upload chunk (bytes {start}-{end})",
                content=functools.partial(file_slice, archive, start, length),
                headers=headers,
            )

    def finalize(self, reservation: Reservation, size: int) -> None:
        body = pretty_json({"size": size})
        self._request(
            "POST", f"caches/{reservation.cache_id}", "commit cache", content=body, headers=JSON
        )

    def download(self, url: str, dest: Path, max_bytes: int) -> int:
        return self._blob.download(url, dest, max_bytes)
