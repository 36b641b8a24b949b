"""Upload and download of archives through signed URLs (Azure Blob Storage, §4).

Signed URLs are used verbatim (httpx keeps the raw query, so ``sig`` is never re-encoded) and
sent without ``Authorization``. Up to ``single_put_max`` bytes go in one Put Blob; larger
archives as Put Block slices plus one Put Block List. Downloads stream to a file and are checked
against ``Content-Length``.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import httpx

from memory_action.safety.numbers import ascii_int
from memory_action.store.cache_http import HttpSession
from memory_action.store.cache_protocol import (
    Attempts,
    NetworkError,
    RetryClock,
    ServiceError,
    SignatureRejectedError,
    TransientError,
    twirp_retrying,
)
from memory_action.version import USER_AGENT

T = TypeVar("T")

MIB = 1024 * 1024
READ_CHUNK = MIB
RETRYABLE_STATUSES = frozenset({500, 502, 503, 504})
BLOCK_LIST_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><BlockList>'


@dataclass(frozen=True, kw_only=True)
class BlobSizes:
    single_put_max: int = 64 * MIB  # the smallest Put Blob limit of any recent SAS version
    block_size: int = 64 * MIB  # what @actions/cache uses


def block_id(index: int) -> str:
    """Equal-length base64 ids, as Azure requires within one blob."""
    return base64.b64encode(f"memory-agent-block-{index:06d}".encode()).decode()


def block_list_xml(count: int) -> bytes:
    latest = "".join(f"<Latest>{block_id(i)}</Latest>" for i in range(count))
    return f"{BLOCK_LIST_HEAD}{latest}</BlockList>".encode()


def file_slice(path: Path, offset: int, length: int) -> Iterator[bytes]:
    with path.open("rb") as handle:
        handle.seek(offset)
        left = length
        while left > 0:
            chunk = handle.read(min(READ_CHUNK, left))
            if not chunk:
                return
            left -= len(chunk)
            yield chunk


def _check_status(response: httpx.Response, what: str) -> None:
    status = response.status_code
    if 200 <= status < 300:
        return
    if status == 403:
        raise SignatureRejectedError(f"{what}: the signed URL was refused (HTTP 403)", status)
    kind = TransientError if status in RETRYABLE_STATUSES else ServiceError
    raise kind(f"{what}: HTTP {status} {response.reason_phrase}", status)


def _content_length(response: httpx.Response) -> int | None:
    return ascii_int(response.headers.get("Content-Length", "").strip())


class BlobTransfer:
    def __init__(self, http: HttpSession, clock: RetryClock, sizes: BlobSizes) -> None:
        self._http = http
        self._clock = clock
        self._sizes = sizes

    def upload(self, url: str, archive: Path, size: int) -> None:
        if size <= self._sizes.single_put_max:
            self._put(url, archive, (0, size), {"x-ms-blob-type": "BlockBlob"}, "Put Blob")
            return
        count = 0
        for offset in range(0, size, self._sizes.block_size):
            length = min(self._sizes.block_size, size - offset)
            block_url = f"{url}&comp=block&blockid={block_id(count)}"
            self._put(block_url, archive, (offset, length), {}, f"Put Block {count}")
            count += 1
        body = block_list_xml(count)
        headers = {"Content-Type": "application/xml", "Content-Length": str(len(body))}
        self._attempts(
            "Put Block List", lambda: self._send_put(f"{url}&comp=blocklist", body, headers)
        )

    def _put(
        self, url: str, archive: Path, span: tuple[int, int], extra: dict[str, str], what: str
    ) -> None:
        offset, length = span
        headers = {
            "Content-Type": "application/octet-stream",
            "Content-Length": str(length),  # a known length: Azure refuses chunked bodies
            **extra,
        }
        # A fresh iterator per attempt: retrying a Put Blob or Put Block is safe (it overwrites).
        self._attempts(
            what, lambda: self._send_put(url, file_slice(archive, offset, length), headers)
        )

    def _send_put(
        self, url: str, content: bytes | Iterator[bytes], headers: dict[str, str]
    ) -> None:
        response = self._http.send(
            "PUT",
            url,
            headers={"User-Agent": USER_AGENT, **headers},
            content=content,
            timeout=self._http.timeouts.for_blob(),
        )
        _check_status(response, "blob upload")

    def download(self, url: str, dest: Path, max_bytes: int) -> int:
        """Stream ``url`` into ``dest``; the number of bytes, checked against Content-Length."""
        return self._attempts("blob download", lambda: self._get(url, dest, max_bytes))

    def _get(self, url: str, dest: Path, max_bytes: int) -> int:
        headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
        timeout = self._http.timeouts.for_blob()
        with self._http.stream("GET", url, headers=headers, timeout=timeout) as response:
            _check_status(response, "blob download")
            expected = _content_length(response)
            if expected is not None and expected > max_bytes:
                raise ServiceError(f"the cache entry is too large ({expected} bytes)")
            written = _write_stream(response, dest, max_bytes)
        if expected is not None and written != expected:
            raise NetworkError(f"incomplete download: {written} of {expected} bytes")
        return written

    def _attempts(self, what: str, call: Callable[[], T]) -> T:
        return Attempts(twirp_retrying(self._clock)).run(call, what)


def _write_stream(response: httpx.Response, dest: Path, max_bytes: int) -> int:
    written = 0
    with dest.open("wb") as handle:
        for chunk in response.iter_raw():
            written += len(chunk)
            if written > max_bytes:
                raise ServiceError(f"the cache entry is larger than {max_bytes} bytes")
            handle.write(chunk)
    return written
