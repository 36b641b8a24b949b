"""The fake cache service itself: the parts our client does not exercise but other clients do."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.fakes.cache_service import (
    BLOB_HEAD,
    CREATE,
    DEFAULT_TOKEN,
    LOOKUP,
    TWIRP_PREFIX,
    V1_API,
    FakeCacheService,
)

AUTH = {"Authorization": f"Bearer {DEFAULT_TOKEN}"}


@pytest.fixture
def service() -> Iterator[FakeCacheService]:
    with FakeCacheService(["refs/heads/main"]) as fake:
        yield fake


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=5) as client:
        yield client


def _rpc(
    http: httpx.Client, service: FakeCacheService, method: str, body: object
) -> httpx.Response:
    return http.post(f"{service.base_url}{TWIRP_PREFIX}{method}", json=body, headers=AUTH)


def test_head_and_ranges_on_blobs(service: FakeCacheService, http: httpx.Client) -> None:
    entry = service.seed("k", "v", b"0123456789")
    url = service.sign(entry, "r")
    head = http.head(url)
    assert (head.status_code, head.headers["content-length"]) == (200, "10")
    assert service.requests_to(BLOB_HEAD)
    ranged = http.get(url, headers={"x-ms-range": "bytes=2-5"})
    assert (ranged.status_code, ranged.content) == (206, b"2345")
    assert ranged.headers["content-range"] == "bytes 2-5/10"


def test_a_chunked_upload_body_is_read(service: FakeCacheService, http: httpx.Client) -> None:
    url = _rpc(http, service, CREATE, {"key": "k", "version": "v"}).json()["signed_upload_url"]
    put = http.put(url, content=iter([b"abc", b"def"]), headers={"x-ms-blob-type": "BlockBlob"})
    assert put.status_code == 201
    final = _rpc(
        http, service, "FinalizeCacheEntryUpload", {"key": "k", "size_bytes": "6", "version": "v"}
    )
    assert final.json() == {"ok": True, "entry_id": "1"}
    assert service.find("k").data == b"abcdef"  # type: ignore[union-attr]


def test_a_wrong_signature_or_permission_is_403(
    service: FakeCacheService, http: httpx.Client
) -> None:
    entry = service.seed("k", "v", b"data")
    read_url = service.sign(entry, "r")
    assert (
        http.put(read_url, content=b"x", headers={"x-ms-blob-type": "BlockBlob"}).status_code == 403
    )
    assert http.get(read_url.replace("sig=", "sig=x")).status_code == 403
    service.expire_signatures()
    assert http.get(read_url).status_code == 403


def test_twirp_checks_token_and_fields(service: FakeCacheService, http: httpx.Client) -> None:
    url = f"{service.base_url}{TWIRP_PREFIX}{LOOKUP}"
    assert http.post(url, json={"key": "k", "version": "v"}).status_code == 401
    metadata = {"key": "k", "version": "v", "metadata": {"repository_id": "1"}}
    response = _rpc(http, service, LOOKUP, metadata)
    assert (response.status_code, response.json()["code"]) == (400, "malformed")


def test_miss_body_is_configurable(service: FakeCacheService, http: httpx.Client) -> None:
    assert _rpc(http, service, LOOKUP, {"key": "k", "version": "v"}).json() == {}
    service.miss_body = {"ok": False}
    assert _rpc(http, service, LOOKUP, {"key": "k", "version": "v"}).json() == {"ok": False}


def test_v1_list(service: FakeCacheService, http: httpx.Client) -> None:
    service.seed("k", "v", b"data")
    listing = http.get(f"{service.base_url}{V1_API}caches", params={"key": "k"}, headers=AUTH)
    assert listing.json()["totalCount"] == 1
    assert listing.json()["artifactCaches"][0]["cacheKey"] == "k"
