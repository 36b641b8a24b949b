"""ActionsCacheStore against a misbehaving cache service: retries, timeouts, bad archives.

The retry clock is fake (``cache.sleeps`` records each wait), so nothing here waits on real time
except the short client timeouts of the hang tests.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path
from typing import Any

import pytest
import zstandard

from memory_action.store.archive import ArchiveLimits
from memory_action.store.base import RestoreKeys
from memory_action.store.cache_protocol import RetryClock
from tests.fakes.cache_harness import JS_BACKOFF, CacheHarness
from tests.fakes.cache_service import (
    BLOB_GET,
    BLOB_PUT,
    CREATE,
    FINALIZE,
    LOOKUP,
    Fault,
)

VERSION = "83cd1addde378565c03b689736f1fb41bf3e741a39a3e1ad0f69f91e3171d69b"


@pytest.fixture
def saved(cache: CacheHarness) -> CacheHarness:
    """An entry ``mem-1`` holding AGENTS.md = "saved", and a folder holding "local"."""
    cache.write_memory({"AGENTS.md": "saved"})
    assert cache.store().save("mem-1", cache.folder).saved
    cache.clear_memory()
    cache.write_memory({"AGENTS.md": "local"})
    cache.service.requests.clear()
    return cache


def restore(cache: CacheHarness, timeout: float = 5.0, **tuning: Any) -> tuple[bool, str]:
    result = cache.store(timeout=timeout, **tuning).restore(
        RestoreKeys(primary="mem-1"), cache.folder
    )
    return result.hit, result.warning or ""


# -- retries of the Twirp calls -----------------------------------------------------------------


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_lookup_gets_five_attempts_with_the_js_backoff(saved: CacheHarness, status: int) -> None:
    saved.service.fail(LOOKUP, *[Fault.http(status)] * 5)
    hit, warning = restore(saved)
    assert not hit
    assert "after 5 attempt(s)" in warning
    assert len(saved.service.requests_to(LOOKUP)) == 5
    assert saved.sleeps == JS_BACKOFF
    assert saved.read_memory() == {"AGENTS.md": "local"}


@pytest.mark.parametrize("rand", [0.0, 0.999999])
def test_backoff_stays_in_the_js_ranges(saved: CacheHarness, rand: float) -> None:
    saved.service.fail(LOOKUP, *[Fault.http(503)] * 5)
    clock = RetryClock(sleep=saved.sleeps.append, random=lambda: rand)
    saved.store(clock=clock).restore(RestoreKeys(primary="mem-1"), saved.folder)
    low, high = [4.5, 6.75, 10.125], [6.75, 10.125, 15.1875]
    assert saved.sleeps[0] == 3.0
    assert all(lo <= s < hi for s, lo, hi in zip(saved.sleeps[1:], low, high, strict=True))


def test_a_transient_error_then_success(saved: CacheHarness) -> None:
    saved.service.fail(LOOKUP, Fault.http(503), Fault.http(502))
    assert restore(saved) == (True, "")
    assert saved.sleeps == JS_BACKOFF[:2]
    assert saved.read_memory() == {"AGENTS.md": "saved"}


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        (Fault.http(400, "bad request"), "bad request"),
        (Fault.http(401, "no token"), "no token"),
        (Fault.http(403, "cache read denied: nope"), "reading the cache was denied"),
        (Fault.http(404, "gone"), "gone"),
        (Fault.http(409, "conflict"), "409"),
        (Fault.rate_limit("42"), "42 seconds"),
        (Fault.http(500, "insufficient usage for this repository"), "quota"),
    ],
)
def test_lookup_errors_that_are_not_retried(
    saved: CacheHarness, fault: Fault, expected: str
) -> None:
    saved.service.fail(LOOKUP, fault)
    hit, warning = restore(saved)
    assert not hit
    assert expected in warning
    assert len(saved.service.requests_to(LOOKUP)) == 1
    assert saved.sleeps == []
    assert saved.read_memory() == {"AGENTS.md": "local"}


def test_a_body_that_is_not_json_is_retried_on_a_success_or_a_5xx(saved: CacheHarness) -> None:
    saved.service.fail(LOOKUP, Fault.non_json(502), Fault.non_json(200))
    assert restore(saved) == (True, "")
    assert len(saved.service.requests_to(LOOKUP)) == 3


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        (Fault.plain_text(404, "Not Found"), "HTTP 404"),
        (Fault.plain_text(403, "Forbidden"), "denied"),
        (Fault.plain_text(429, "Too Many Requests"), "rate limited"),
    ],
    ids=["404", "403", "429"],
)
def test_a_plain_text_denial_on_lookup_is_asked_once(
    saved: CacheHarness, fault: Fault, expected: str
) -> None:
    saved.service.fail(LOOKUP, fault)
    hit, warning = restore(saved)
    assert not hit
    assert expected in warning
    assert len(saved.service.requests_to(LOOKUP)) == 1
    assert saved.sleeps == []


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        (Fault.plain_text(409, "Conflict"), "exists"),
        (Fault.plain_text(403, "Forbidden"), "denied"),
        (Fault.plain_text(429, "Too Many Requests"), "rate limited"),
    ],
    ids=["409", "403", "429"],
)
def test_a_plain_text_conflict_or_denial_on_create_is_sent_once(
    cache: CacheHarness, fault: Fault, expected: str
) -> None:
    cache.service.fail(CREATE, fault)
    cache.write_memory({"AGENTS.md": "a"})
    result = cache.store().save("mem-1", cache.folder)
    assert not result.saved
    assert expected in result.reason
    assert len(cache.service.requests_to(CREATE)) == 1
    assert cache.sleeps == []
    assert cache.service.pending_faults(CREATE) == 0


def test_rate_limit_on_create_is_not_retried(cache: CacheHarness) -> None:
    cache.service.fail(CREATE, Fault.rate_limit("30"))
    cache.write_memory({"AGENTS.md": "a"})
    result = cache.store().save("mem-1", cache.folder)
    assert not result.saved
    assert "30 seconds" in result.reason
    assert len(cache.service.requests_to(CREATE)) == 1


def test_quota_on_create_is_not_retried(cache: CacheHarness) -> None:
    cache.service.fail(CREATE, Fault.http(403, "insufficient usage to create cache entry"))
    cache.write_memory({"AGENTS.md": "a"})
    result = cache.store().save("mem-1", cache.folder)
    assert not result.saved
    assert "quota" in result.reason
    assert not result.write_denied
    assert len(cache.service.requests_to(CREATE)) == 1


def test_409_after_a_failed_attempt_is_not_reported_as_saved(saved: CacheHarness) -> None:
    saved.service.fail(CREATE, Fault.http(503))
    result = saved.store().save("mem-1", saved.folder)  # exists: attempt 1 fails, 2 gets 409
    assert not result.saved
    assert "failed attempt" in result.reason
    assert len(saved.service.requests_to(CREATE)) == 2


def test_create_not_ok_is_a_reason_without_another_job_story(cache: CacheHarness) -> None:
    body = json.dumps({"ok": False, "message": "something odd"}).encode()
    cache.service.fail(CREATE, Fault.replace_body(body))
    cache.write_memory({"AGENTS.md": "a"})
    result = cache.store().save("mem-1", cache.folder)
    assert not result.saved
    assert "Cache reservation failed: something odd" in result.reason
    assert "another job" not in result.reason
    assert not result.write_denied


def test_finalize_not_ok_is_a_reason(cache: CacheHarness) -> None:
    cache.service.fail(FINALIZE, Fault.replace_body(b'{"ok":false,"message":"too late"}'))
    cache.write_memory({"AGENTS.md": "a"})
    result = cache.store().save("mem-1", cache.folder)
    assert not result.saved
    assert "too late" in result.reason


def test_an_unfinalized_entry_stays_invisible(cache: CacheHarness) -> None:
    cache.service.fail(FINALIZE, Fault.http(400, "refused"))
    cache.write_memory({"AGENTS.md": "a"})
    assert not cache.store().save("mem-1", cache.folder).saved
    assert len(cache.service.requests_to(FINALIZE)) == 1
    hit, warning = restore(cache)
    assert (hit, warning) == (False, "")


def test_upload_is_retried_on_5xx(cache: CacheHarness) -> None:
    cache.service.fail(BLOB_PUT, Fault.http(503))
    cache.write_memory({"AGENTS.md": "a"})
    assert cache.store().save("mem-1", cache.folder).saved
    assert len(cache.service.requests_to(BLOB_PUT)) == 2


def test_camel_case_and_number_fields_are_understood(saved: CacheHarness) -> None:
    entry = saved.service.find("mem-1")
    assert entry is not None
    url = saved.service.sign(entry, "r")
    body = {"ok": True, "signedDownloadUrl": url, "matchedKey": "mem-1"}
    saved.service.fail(LOOKUP, Fault.replace_body(json.dumps(body).encode()))
    assert restore(saved) == (True, "")


def test_an_invalid_download_url_is_a_miss_with_a_warning(saved: CacheHarness) -> None:
    body = b'{"ok":true,"signed_download_url":"http://[::1","matched_key":"mem-1"}'
    saved.service.fail(LOOKUP, Fault.replace_body(body))
    hit, warning = restore(saved)
    assert not hit
    assert "not valid" in warning


@pytest.mark.parametrize("body", [b"{}", b'{"ok":false}', b'{"ok":null}'])
def test_ok_false_or_absent_is_a_miss(saved: CacheHarness, body: bytes) -> None:
    saved.service.fail(LOOKUP, Fault.replace_body(body), Fault.replace_body(body))
    assert restore(saved) == (False, "")
    assert saved.read_memory() == {"AGENTS.md": "local"}


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b'{"ok":"yes","signed_download_url":"x"}', "ok: 'yes' is neither true nor false"),
        (b'{"ok":NaN}', "ok: nan is neither true nor false"),
        (b'{"ok":"true"}', "ok: 'true' is neither true nor false"),
        (b'{"ok":1}', "ok: 1 is neither true nor false"),
        (b'{"ok":true,"signed_download_url":["x"]}', "signed_download_url: ['x'] is not a"),
        (b"[]", "not a JSON object"),
        (b"null", "not a JSON object"),
        (b"[" * 20_000 + b"]" * 20_000, "JSON nested deeper than 200 levels is refused"),
    ],
)
def test_a_garbled_lookup_answer_is_cache_trouble_not_a_miss(
    saved: CacheHarness, body: bytes, said: str
) -> None:
    """Read as a miss, it would let the run save over memory it never read."""
    saved.service.fail(LOOKUP, Fault.replace_body(body))
    hit, warning = restore(saved)
    assert not hit
    assert f"GetCacheEntryDownloadURL sent a garbled answer: {said}" in warning
    assert "\n" not in warning
    assert len(saved.service.requests_to(LOOKUP)) == 1  # no second lookup reads it as a miss
    assert saved.read_memory() == {"AGENTS.md": "local"}


# -- timeouts, resets, truncation ----------------------------------------------------------------


def test_a_hanging_service_times_out_and_is_tried_twice(saved: CacheHarness) -> None:
    saved.service.fail(LOOKUP, Fault.hang(), Fault.hang())
    hit, warning = restore(saved, timeout=0.3)
    assert not hit
    assert "Timeout" in warning
    assert len(saved.service.requests_to(LOOKUP)) == 2
    assert saved.sleeps == [3.0]


def test_a_hanging_download_is_a_miss_and_the_folder_is_untouched(saved: CacheHarness) -> None:
    saved.service.fail(BLOB_GET, Fault.hang(), Fault.hang())
    hit, warning = restore(saved, timeout=0.3)
    assert not hit
    assert "Timeout" in warning
    assert saved.read_memory() == {"AGENTS.md": "local"}


def test_one_hang_on_create_is_survived(cache: CacheHarness) -> None:
    cache.service.fail(CREATE, Fault.hang())
    cache.write_memory({"AGENTS.md": "a"})
    assert cache.store(timeout=0.3).save("mem-1", cache.folder).saved


def test_a_reset_connection_is_retried_once(cache: CacheHarness) -> None:
    cache.service.fail(CREATE, Fault.reset())
    cache.write_memory({"AGENTS.md": "a"})
    assert cache.store().save("mem-1", cache.folder).saved
    assert len(cache.service.requests_to(CREATE)) == 2


def test_two_resets_give_up(cache: CacheHarness) -> None:
    cache.service.fail(CREATE, Fault.reset(), Fault.reset())
    cache.write_memory({"AGENTS.md": "a"})
    result = cache.store().save("mem-1", cache.folder)
    assert not result.saved
    assert "after 2 attempt(s)" in result.reason


def test_an_unreachable_service_is_a_miss(cache: CacheHarness) -> None:
    store = cache.store(timeout=0.5)
    cache.service.stop()
    result = store.restore(RestoreKeys(primary="mem-1"), cache.folder)
    assert not result.hit
    assert "ConnectError" in (result.warning or "")


def test_a_truncated_download_is_retried_once(saved: CacheHarness) -> None:
    saved.service.fail(BLOB_GET, Fault.truncate())
    assert restore(saved) == (True, "")
    assert saved.read_memory() == {"AGENTS.md": "saved"}


def test_two_truncated_downloads_are_a_miss_and_the_folder_is_untouched(
    saved: CacheHarness,
) -> None:
    saved.service.fail(BLOB_GET, Fault.truncate(), Fault.truncate())
    hit, warning = restore(saved)
    assert not hit
    assert warning
    assert saved.read_memory() == {"AGENTS.md": "local"}


def test_a_restore_after_a_failed_download_downloads_again_cleanly(saved: CacheHarness) -> None:
    # The first restore's download fails on both attempts; the run's next restore from the same
    # store (another layer, or the same entry again) downloads it afresh. It used to fail at
    # once with "[Errno 17] File exists": the failed download's folder was made again.
    saved.service.fail(BLOB_GET, Fault.truncate(), Fault.truncate())
    store = saved.store()
    keys = RestoreKeys(primary="mem-1")

    failed = store.restore(keys, saved.folder)
    assert not failed.hit
    assert "blob download failed after 2 attempt(s)" in (failed.warning or "")

    again = store.restore(keys, saved.folder)
    assert (again.hit, again.warning) == (True, None)
    assert saved.read_memory() == {"AGENTS.md": "saved"}
    assert len(saved.service.requests_to(BLOB_GET)) == 3
    assert "File exists" not in saved.out.getvalue() + (failed.warning or "")
    # The failed download left no partial archive: the one file is the entry kept for the run.
    kept = [p.name for p in (saved.root / "runner_temp").rglob("*") if p.is_file()]
    assert kept == ["cache.tzst"]


def test_a_truncated_twirp_response_is_retried(saved: CacheHarness) -> None:
    saved.service.fail(LOOKUP, Fault.truncate())
    assert restore(saved) == (True, "")


def test_an_expired_download_url_is_asked_for_again_once(saved: CacheHarness) -> None:
    saved.service.fail(BLOB_GET, Fault.http(403))
    assert restore(saved) == (True, "")
    versions = [request.json()["version"] for request in saved.service.requests_to(LOOKUP)]
    assert versions == [VERSION, VERSION]
    assert len(saved.service.requests_to(BLOB_GET)) == 2


def test_a_download_url_refused_twice_is_a_miss(saved: CacheHarness) -> None:
    saved.service.fail(BLOB_GET, Fault.http(403), Fault.http(403))
    hit, warning = restore(saved)
    assert not hit
    assert "403" in warning
    assert len(saved.service.requests_to(LOOKUP)) == 2


# -- bad archives -------------------------------------------------------------------------------


def test_a_corrupt_archive_is_a_miss_and_the_folder_is_untouched(saved: CacheHarness) -> None:
    saved.service.fail(BLOB_GET, Fault.replace_body(os.urandom(300)))
    hit, warning = restore(saved)
    assert not hit
    assert warning
    assert saved.read_memory() == {"AGENTS.md": "local"}


def _tar(*members: tuple[tarfile.TarInfo, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        base = tarfile.TarInfo(".agent-memory")
        base.type = tarfile.DIRTYPE
        tar.addfile(base)
        for info, data in members:
            info.size = len(data) if info.isreg() else 0
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return zstandard.ZstdCompressor(level=3).compress(buffer.getvalue())


def _member(name: str, kind: bytes = tarfile.REGTYPE, target: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


@pytest.mark.parametrize(
    "evil",
    [
        _member("../evil.txt"),
        _member(".agent-memory/../../evil.txt"),
        _member("/tmp/evil-absolute.txt"),
        _member(".agent-memory/link", tarfile.SYMTYPE, "/etc/passwd"),
        _member(".agent-memory/hard", tarfile.LNKTYPE, "/etc/passwd"),
        _member(".agent-memory/fifo", tarfile.FIFOTYPE),
    ],
    ids=["dotdot", "nested-dotdot", "absolute", "symlink", "hardlink", "fifo"],
)
def test_a_malicious_archive_is_a_miss_and_writes_nothing(
    cache: CacheHarness, evil: tarfile.TarInfo
) -> None:
    good = _member(".agent-memory/AGENTS.md")
    data = _tar((good, b"fine"), (evil, b"pwned"))
    cache.service.seed("mem-1", VERSION, data)
    cache.write_memory({"AGENTS.md": "local"})
    hit, warning = restore(cache)
    assert not hit
    assert warning
    assert cache.read_memory() == {"AGENTS.md": "local"}
    assert not (cache.root / "evil.txt").exists()
    assert not (cache.workspace / "evil.txt").exists()
    assert not Path("/tmp/evil-absolute.txt").exists()


def test_an_archive_over_the_limits_is_refused(cache: CacheHarness) -> None:
    big = _member(".agent-memory/AGENTS.md")
    cache.service.seed("mem-1", VERSION, _tar((big, b"a" * 100_000)))  # compresses to ~100 B
    limits = ArchiveLimits(max_total_bytes=10_000, max_file_bytes=10_000, max_members=10)
    hit, warning = restore(cache, limits=limits)
    assert not hit
    assert "10000" in warning
    assert not cache.folder.exists()


def test_a_download_larger_than_allowed_is_refused(cache: CacheHarness) -> None:
    cache.service.seed("mem-1", VERSION, os.urandom(2 * 1024 * 1024))
    limits = ArchiveLimits(max_total_bytes=1000, max_file_bytes=1000, max_members=1)
    hit, warning = restore(cache, limits=limits)
    assert not hit
    assert "too large" in warning
