"""ActionsCacheStore over the legacy v1 service (GHES), against the fake service."""

from __future__ import annotations

import json

import pytest

from memory_action import __version__
from memory_action.store.actions_cache import READ_ONLY_MESSAGE
from memory_action.store.base import RestoreKeys
from tests.fakes.cache_harness import CacheHarness
from tests.fakes.cache_service import (
    BLOB_GET,
    DEFAULT_TOKEN,
    V1_API,
    V1_COMMIT,
    V1_LOOKUP,
    V1_RESERVE,
    V1_UPLOAD,
    Fault,
)

VERSION = "83cd1addde378565c03b689736f1fb41bf3e741a39a3e1ad0f69f91e3171d69b"
ACCEPT = "application/json;api-version=6.0-preview.1"


def test_v1_round_trip(cache: CacheHarness) -> None:
    store = cache.store("v1")
    assert store.name == "Actions cache (v1)"
    cache.write_memory({"AGENTS.md": "ghes memory"})
    saved = store.save("mem-run-1", cache.folder)
    assert saved.saved
    cache.clear_memory()

    restored = store.restore(RestoreKeys(primary="mem-run-2", restore=("mem-run-",)), cache.folder)

    assert (restored.hit, restored.matched_key) == (True, "mem-run-1")
    assert cache.read_memory() == {"AGENTS.md": "ghes memory"}
    routes = [request.route for request in cache.service.requests]
    assert routes == [V1_RESERVE, V1_UPLOAD, V1_COMMIT, V1_LOOKUP, BLOB_GET]
    reserve, upload, commit, lookup, _ = cache.service.requests
    assert json.loads(reserve.body) == {
        "key": "mem-run-1",
        "version": VERSION,
        "cacheSize": saved.size_bytes,
    }
    assert reserve.body.startswith(b'{\n  "key"')  # pretty-printed like the JS client
    assert upload.method == "PATCH"
    assert upload.headers["content-type"] == "application/octet-stream"
    assert upload.headers["content-range"] == f"bytes 0-{saved.size_bytes - 1}/*"  # type: ignore[operator]
    assert json.loads(commit.body) == {"size": saved.size_bytes}
    assert lookup.path == V1_API + "cache"
    assert lookup.query == f"keys=mem-run-2%2Cmem-run-&version={VERSION}"


def test_v1_headers(cache: CacheHarness) -> None:
    store = cache.store("v1")
    cache.write_memory({"AGENTS.md": "a"})
    store.save("mem-1", cache.folder)
    store.restore(RestoreKeys(primary="mem-1"), cache.folder)
    for request in cache.service.requests:
        if request.route.startswith("v1."):
            assert request.headers["accept"] == ACCEPT
            assert request.headers["authorization"] == f"Bearer {DEFAULT_TOKEN}"
            assert request.headers["user-agent"] == f"memory-agent/{__version__}"
        else:
            assert "authorization" not in request.headers


def test_v1_uploads_in_chunks(cache: CacheHarness) -> None:
    store = cache.store("v1", v1_chunk_size=100)
    payload = "".join(f"{i:08x}" for i in range(200))
    cache.write_memory({"AGENTS.md": payload})
    saved = store.save("mem-1", cache.folder)
    assert saved.saved
    assert saved.size_bytes is not None
    ranges = [r.headers["content-range"] for r in cache.service.requests_to(V1_UPLOAD)]
    assert len(ranges) == -(-saved.size_bytes // 100)
    assert ranges[0] == "bytes 0-99/*"
    assert ranges[-1] == f"bytes {(len(ranges) - 1) * 100}-{saved.size_bytes - 1}/*"
    cache.clear_memory()
    assert store.restore(RestoreKeys(primary="mem-1"), cache.folder).hit
    assert cache.read_memory() == {"AGENTS.md": payload}


def test_v1_miss_is_204(cache: CacheHarness) -> None:
    result = cache.store("v1").restore(RestoreKeys(primary="nothing"), cache.folder)
    assert (result.hit, result.warning) == (False, None)
    assert len(cache.service.requests_to(V1_LOOKUP)) == 2  # zstd, then gzip


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b'{"archiveLocation":5,"cacheKey":"mem-1"}', "archiveLocation: 5 is not a string"),
        (b'{"archiveLocation":NaN}', "archiveLocation: nan is not a string"),
        (b'{"archiveLocation":"x","cacheKey":false}', "cacheKey: False is not a string"),
        (b"[]", "not a JSON object"),
    ],
)
def test_v1_a_garbled_lookup_answer_is_cache_trouble_not_a_miss(
    cache: CacheHarness, body: bytes, said: str
) -> None:
    store = cache.store("v1")
    cache.write_memory({"AGENTS.md": "saved"})
    assert store.save("mem-1", cache.folder).saved  # the lookup answers 200, not 204
    cache.service.requests.clear()
    cache.service.fail(V1_LOOKUP, Fault.replace_body(body))
    result = store.restore(RestoreKeys(primary="mem-1"), cache.folder)
    assert not result.hit
    assert f"cache lookup sent a garbled answer: {said}" in (result.warning or "")
    assert len(cache.service.requests_to(V1_LOOKUP)) == 1


def test_v1_read_only_token(cache: CacheHarness) -> None:
    token = cache.service.add_run(["refs/heads/main"], read_only=True)
    cache.write_memory({"AGENTS.md": "a"})
    result = cache.store("v1", token=token).save("mem-1", cache.folder)
    assert (result.saved, result.write_denied, result.reason) == (False, True, READ_ONLY_MESSAGE)


def test_v1_existing_key_is_not_saved(cache: CacheHarness) -> None:
    store = cache.store("v1")
    cache.write_memory({"AGENTS.md": "a"})
    assert store.save("mem-1", cache.folder).saved
    again = store.save("mem-1", cache.folder)
    assert not again.saved
    assert again.reason.startswith("an entry with this key exists")


def test_v1_does_not_retry_a_500(cache: CacheHarness) -> None:
    cache.service.fail(V1_LOOKUP, Fault.http(500, "boom"))
    result = cache.store("v1").restore(RestoreKeys(primary="mem-1"), cache.folder)
    assert not result.hit
    assert "boom" in (result.warning or "")
    assert len(cache.service.requests_to(V1_LOOKUP)) == 1
    assert cache.sleeps == []


@pytest.mark.parametrize("status", [502, 503, 504])
def test_v1_retries_once_after_five_seconds(cache: CacheHarness, status: int) -> None:
    cache.service.fail(V1_LOOKUP, Fault.http(status), Fault.http(status))
    result = cache.store("v1").restore(RestoreKeys(primary="mem-1"), cache.folder)
    assert not result.hit
    assert "after 2 attempt(s)" in (result.warning or "")
    assert len(cache.service.requests_to(V1_LOOKUP)) == 2
    assert cache.sleeps == [5.0]


def test_v1_read_denied_is_a_miss_with_the_message(cache: CacheHarness) -> None:
    cache.service.read_denied = True
    result = cache.store("v1").restore(RestoreKeys(primary="mem-1"), cache.folder)
    assert not result.hit
    assert "cache read denied:" in (result.warning or "")


def test_v1_upload_chunk_retry_resends_the_same_bytes(cache: CacheHarness) -> None:
    cache.service.fail(V1_UPLOAD, Fault.http(503))
    store = cache.store("v1")
    cache.write_memory({"AGENTS.md": "retry me"})
    assert store.save("mem-1", cache.folder).saved
    first, second = cache.service.requests_to(V1_UPLOAD)
    assert first.body == second.body
    cache.clear_memory()
    assert store.restore(RestoreKeys(primary="mem-1"), cache.folder).hit
    assert cache.read_memory() == {"AGENTS.md": "retry me"}


def test_v1_and_v2_entries_are_the_same_version(cache: CacheHarness) -> None:
    cache.write_memory({"AGENTS.md": "shared"})
    assert cache.store("v2").save("mem-1", cache.folder).saved
    cache.clear_memory()
    assert cache.store("v1").restore(RestoreKeys(primary="mem-1"), cache.folder).hit
    assert cache.read_memory() == {"AGENTS.md": "shared"}
