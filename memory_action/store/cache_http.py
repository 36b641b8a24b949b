"""The HTTP seam of the cache clients: one httpx client, timeouts on every call, masking.

httpx transport failures become ``NetworkError`` here, so the clients above never see httpx
exceptions, and no exception text carries a URL (httpx's transport errors name none).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote

import httpx

from memory_action.store.base import StoreLog
from memory_action.store.cache_protocol import NetworkError, ServiceError


@dataclass(frozen=True, kw_only=True)
class Timeouts:
    """Seconds; ``read`` is the longest silence tolerated while a response arrives."""

    connect: float = 10.0
    rpc: float = 30.0
    blob: float = 60.0

    def for_rpc(self) -> httpx.Timeout:
        return httpx.Timeout(self.rpc, connect=self.connect)

    def for_blob(self) -> httpx.Timeout:
        return httpx.Timeout(self.blob, connect=self.connect)


def describe(exc: httpx.TransportError) -> str:
    text = str(exc) or "no details"
    return f"{type(exc).__name__}: {text}"


class HttpSession:
    """Sends requests through one ``httpx.Client``; the caller owns neither client nor URL logs."""

    def __init__(self, client: httpx.Client, log: StoreLog, timeouts: Timeouts) -> None:
        self._client = client
        self.log = log
        self.timeouts = timeouts

    def send(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str],
        content: bytes | Iterator[bytes] | None = None,
        timeout: httpx.Timeout,
        drop: tuple[str, ...] = (),
    ) -> httpx.Response:
        """Send and read the whole response; ``drop`` removes httpx default headers."""
        with self.stream(
            method, url, headers=headers, content=content, timeout=timeout, drop=drop
        ) as response:
            response.read()
            return response

    @contextmanager
    def stream(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str],
        content: bytes | Iterator[bytes] | None = None,
        timeout: httpx.Timeout,
        drop: tuple[str, ...] = (),
    ) -> Iterator[httpx.Response]:
        try:
            request = self._client.build_request(
                method, url, headers=dict(headers), content=content, timeout=timeout
            )
        except httpx.InvalidURL:
            raise ServiceError("the cache service gave a URL that is not valid") from None
        for name in drop:
            request.headers.pop(name, None)
        try:
            response = self._client.send(request, stream=True)
            try:
                yield response
            finally:
                response.close()
        except httpx.TransportError as exc:
            raise NetworkError(self.log.redact(describe(exc))) from None
        except httpx.HTTPError as exc:  # e.g. a body that fails to decode
            raise ServiceError(self.log.redact(f"{type(exc).__name__}: {exc}")) from None

    def mask_signed_url(self, url: str) -> None:
        """Mask the URL and its ``sig`` value (decoded, encoded, and as written in the URL)."""
        self.log.add_mask(url)
        query = url.partition("?")[2].partition("#")[0]  # no urlsplit: it rejects some URLs
        for raw in query.split("&"):
            name, _, value = raw.partition("=")
            if name == "sig" and value:
                self.log.add_mask(value)
        for name, value in parse_qsl(query, keep_blank_values=True):
            if name == "sig" and value:
                self.log.add_mask(value)
                self.log.add_mask(quote(value, safe=""))
