"""ActionsCacheStore (v2) against the fake cache service: wire format, semantics, masking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_action import __version__
from memory_action.store.actions_cache import READ_ONLY_MESSAGE, ActionsCacheStore
from memory_action.store.archive import Compression, cache_version, create_archive
from memory_action.store.base import RestoreKeys
from memory_action.store.cache_blob import BlobSizes
from memory_action.store.cache_twirp import SERVICE
from tests.fakes.cache_harness import MEMORY, REFS, CacheHarness
from tests.fakes.cache_service import (
    BLOB_GET,
    BLOB_PUT,
    CREATE,
    DEFAULT_TOKEN,
    FINALIZE,
    LOOKUP,
    Fault,
)

VERSION = "83cd1addde378565c03b689736f1fb41bf3e741a39a3e1ad0f69f91e3171d69b"  # §10
GZIP_VERSION = "b7df0e870a8b5d61ad4729ab04a35b7b14e7f66141d37bd814ef48e9e6241833"  # §5.2


def save(cache: CacheHarness, store: ActionsCacheStore, key: str, files: dict[str, str]) -> None:
    cache.clear_memory()
    cache.write_memory(files)
    result = store.save(key, cache.folder)
    assert result.saved, result.reason
    cache.clear_memory()


# -- wire format ------------------------------------------------------------------------------


def test_round_trip_sends_the_js_clients_requests(cache: CacheHarness) -> None:
    store = cache.store()
    cache.write_memory({"AGENTS.md": "# Memory\n- use pytest\n", "notes/x.md": "x"})
    saved = store.save("agent-memory-pr-1-run-101", cache.folder)
    assert saved.saved
    assert saved.size_bytes == len(cache.service.find("agent-memory-pr-1-run-101").data)  # type: ignore[union-attr, arg-type]
    cache.clear_memory()

    keys = RestoreKeys(
        primary="agent-memory-pr-1-run-102", restore=("agent-memory-pr-1-", "agent-memory-")
    )
    restored = store.restore(keys, cache.folder)

    assert restored.hit
    assert restored.matched_key == "agent-memory-pr-1-run-101"
    assert restored.warning is None
    assert cache.read_memory() == {"AGENTS.md": "# Memory\n- use pytest\n", "notes/x.md": "x"}
    routes = [request.route for request in cache.service.requests]
    assert routes == [CREATE, BLOB_PUT, FINALIZE, LOOKUP, BLOB_GET]
    bodies = [r.body for r in cache.service.requests if r.route in (CREATE, FINALIZE, LOOKUP)]
    assert bodies == [
        b'{"key":"agent-memory-pr-1-run-101","version":"' + VERSION.encode() + b'"}',
        b'{"key":"agent-memory-pr-1-run-101","size_bytes":"'
        + str(saved.size_bytes).encode()
        + b'","version":"'
        + VERSION.encode()
        + b'"}',
        json.dumps(
            {
                "key": "agent-memory-pr-1-run-102",
                "restore_keys": ["agent-memory-pr-1-", "agent-memory-"],
                "version": VERSION,
            },
            separators=(",", ":"),
        ).encode(),
    ]


def test_version_is_the_one_actions_cache_computes_for_the_relative_path(
    cache: CacheHarness,
) -> None:
    assert cache.store().version == VERSION


def test_twirp_headers_and_origin(cache: CacheHarness) -> None:
    cache.store().restore(RestoreKeys(primary="k"), cache.folder)
    request = cache.service.requests_to(LOOKUP)[0]
    assert request.path == f"/twirp/{SERVICE}/{LOOKUP}"  # the /results-receiver/ path was dropped
    assert request.headers["content-type"] == "application/json"
    assert request.headers["authorization"] == f"Bearer {DEFAULT_TOKEN}"
    assert request.headers["user-agent"] == f"memory-agent/{__version__}"
    assert "accept" not in request.headers
    assert request.json() == {"key": "k", "version": VERSION}  # no restore_keys, no metadata


def test_blob_upload_is_one_put_blob_without_authorization(cache: CacheHarness) -> None:
    store = cache.store()
    cache.write_memory({"AGENTS.md": "a"})
    store.save("k-1", cache.folder)
    (put,) = cache.service.requests_to(BLOB_PUT)
    assert put.headers["x-ms-blob-type"] == "BlockBlob"
    assert put.headers["content-type"] == "application/octet-stream"
    assert put.headers["content-length"] == str(len(put.body))
    assert "authorization" not in put.headers
    assert "comp" not in put.params


def test_large_archive_goes_up_in_blocks(cache: CacheHarness) -> None:
    store = cache.store(blob_sizes=BlobSizes(single_put_max=256, block_size=200))
    payload = "".join(f"{i:08x}" for i in range(400))  # incompressible enough: > 256 bytes
    save(cache, store, "k-1", {"AGENTS.md": payload})

    puts = cache.service.requests_to(BLOB_PUT)
    blocks = [put for put in puts if put.params.get("comp") == "block"]
    assert len(blocks) >= 2
    assert len({len(block.params["blockid"]) for block in blocks}) == 1  # equal-length ids
    assert all(len(block.body) <= 200 for block in blocks)
    assert puts[-1].params["comp"] == "blocklist"
    assert puts[-1].headers["content-type"] == "application/xml"
    assert store.restore(RestoreKeys(primary="k-1"), cache.folder).hit
    assert cache.read_memory() == {"AGENTS.md": payload}


def test_signed_urls_are_used_verbatim(cache: CacheHarness) -> None:
    store = cache.store()
    save(cache, store, "k-1", {"AGENTS.md": "a"})
    assert store.restore(RestoreKeys(primary="k-1"), cache.folder).hit
    for request in cache.service.requests_to(BLOB_PUT) + cache.service.requests_to(BLOB_GET):
        assert "%3D" in request.query  # the encoded sig arrived as it was handed out
        assert "authorization" not in request.headers


# -- key matching, versions, scopes, immutability ---------------------------------------------


def test_prefix_match_returns_the_newest(cache: CacheHarness) -> None:
    store = cache.store()
    save(cache, store, "mem-run-1", {"AGENTS.md": "one"})
    save(cache, store, "mem-run-2", {"AGENTS.md": "two"})
    result = store.restore(RestoreKeys(primary="mem-run-3", restore=("mem-run-",)), cache.folder)
    assert result.matched_key == "mem-run-2"
    assert cache.read_memory() == {"AGENTS.md": "two"}


def test_exact_primary_beats_a_newer_prefix_match(cache: CacheHarness) -> None:
    store = cache.store()
    save(cache, store, "mem-1", {"AGENTS.md": "exact"})
    save(cache, store, "mem-10", {"AGENTS.md": "newer"})
    assert store.restore(RestoreKeys(primary="mem-1"), cache.folder).matched_key == "mem-1"


def test_restore_keys_are_tried_in_order(cache: CacheHarness) -> None:
    store = cache.store()
    save(cache, store, "a-old", {"AGENTS.md": "a"})
    save(cache, store, "b-new", {"AGENTS.md": "b"})
    result = store.restore(RestoreKeys(primary="zzz", restore=("a-", "b-")), cache.folder)
    assert result.matched_key == "a-old"


def test_an_entry_of_another_version_is_invisible(cache: CacheHarness) -> None:
    other = cache_version(["/github/workspace/.agent-memory"], Compression.ZSTD_WITHOUT_LONG)
    cache.service.seed("mem-1", other, b"whatever")
    result = cache.store().restore(RestoreKeys(primary="mem-1"), cache.folder)
    assert (result.hit, result.warning) == (False, None)
    assert [r.json()["version"] for r in cache.service.requests_to(LOOKUP)] == [
        VERSION,
        GZIP_VERSION,
    ]


def test_gzip_entries_of_other_clients_are_restored(cache: CacheHarness, tmp_path: Path) -> None:
    cache.write_memory({"AGENTS.md": "from a runner without zstd"})
    archive = tmp_path / "cache.tgz"
    create_archive(cache.workspace, MEMORY, archive, Compression.GZIP)
    cache.clear_memory()
    cache.service.seed("mem-1", GZIP_VERSION, archive.read_bytes(), scope="refs/heads/main")

    result = cache.store().restore(RestoreKeys(primary="mem-2", restore=("mem-",)), cache.folder)
    assert result.hit
    assert cache.read_memory() == {"AGENTS.md": "from a runner without zstd"}


def test_scopes_are_searched_in_ref_order(cache: CacheHarness) -> None:
    main_run = cache.service.add_run(["refs/heads/main"])
    pr_store = cache.store()
    main_store = cache.store(token=main_run)
    save(cache, pr_store, "mem-pr", {"AGENTS.md": "pr"})
    save(cache, main_store, "mem-main", {"AGENTS.md": "main"})  # newer, but a later scope

    assert (
        pr_store.restore(RestoreKeys(primary="x", restore=("mem-",)), cache.folder).matched_key
        == "mem-pr"
    )
    # The default branch cannot see the pull request's scope.
    assert not main_store.restore(RestoreKeys(primary="mem-pr"), cache.folder).hit
    assert main_store.restore(RestoreKeys(primary="mem-"), cache.folder).matched_key == "mem-main"
    assert {e.key: e.scope for e in cache.service.visible()} == {
        "mem-pr": "refs/pull/1/merge",
        "mem-main": "refs/heads/main",
    }


def test_a_base_branch_entry_is_restored_in_a_pull_request(cache: CacheHarness) -> None:
    main_store = cache.store(token=cache.service.add_run(["refs/heads/main"]))
    save(cache, main_store, "mem-main-1", {"AGENTS.md": "committed"})
    assert (
        cache.store().restore(RestoreKeys(primary="mem-pr-1", restore=("mem-",)), cache.folder).hit
    )
    assert cache.read_memory() == {"AGENTS.md": "committed"}


def test_keys_are_immutable_and_an_existing_key_is_not_saved(cache: CacheHarness) -> None:
    # Two jobs saving under one key: the second's memory is not in the cache, so it must not
    # be reported as saved.
    store = cache.store()
    save(cache, store, "mem-1", {"AGENTS.md": "first"})
    cache.write_memory({"AGENTS.md": "second"})
    result = store.save("mem-1", cache.folder)

    assert not result.saved
    assert not result.write_denied
    assert result.reason == "an entry with this key exists ('mem-1'); nothing was saved over it"
    assert len(cache.service.requests_to(CREATE)) == 2  # the 409 was not retried
    assert len(cache.service.visible()) == 1
    cache.clear_memory()
    store.restore(RestoreKeys(primary="mem-1"), cache.folder)
    assert cache.read_memory() == {"AGENTS.md": "first"}


def test_restore_replaces_the_folder_on_a_hit(cache: CacheHarness) -> None:
    store = cache.store()
    save(cache, store, "mem-1", {"AGENTS.md": "saved"})
    cache.write_memory({"stale.md": "old"})
    assert store.restore(RestoreKeys(primary="mem-1"), cache.folder).hit
    assert cache.read_memory() == {"AGENTS.md": "saved"}


def test_a_miss_leaves_the_folder_untouched(cache: CacheHarness) -> None:
    cache.write_memory({"AGENTS.md": "checked out"})
    assert not cache.store().restore(RestoreKeys(primary="nothing"), cache.folder).hit
    assert cache.read_memory() == {"AGENTS.md": "checked out"}


# -- read-only tokens and cache modes ----------------------------------------------------------


def test_read_only_token_is_reported_once_and_clearly(cache: CacheHarness) -> None:
    token = cache.service.add_run(["refs/heads/main"], read_only=True)
    store = cache.store(token=token)
    cache.write_memory({"AGENTS.md": "a"})

    first = store.save("mem-1", cache.folder)
    second = store.save("mem-2", cache.folder)

    assert (first.saved, first.write_denied, first.reason) == (False, True, READ_ONLY_MESSAGE)
    assert (second.saved, second.write_denied) == (False, True)
    assert len(cache.service.requests_to(CREATE)) == 1  # the second save sent nothing
    assert not store.may_write
    log = cache.out.getvalue()
    assert "another job" not in log + first.reason
    assert "Cache reservation failed" not in log
    assert cache.service.visible() == []


def test_read_only_token_still_restores(cache: CacheHarness) -> None:
    save(cache, cache.store(), "mem-1", {"AGENTS.md": "a"})
    token = cache.service.add_run(list(REFS), read_only=True)
    assert cache.store(token=token).restore(RestoreKeys(primary="mem-1"), cache.folder).hit


@pytest.mark.parametrize(
    ("mode", "reads", "writes"),
    [("none", False, False), ("read", True, False), ("write-only", False, True), ("x", True, True)],
)
def test_cache_mode_is_respected_without_requests(
    cache: CacheHarness, mode: str, reads: bool, writes: bool
) -> None:
    save(cache, cache.store(), "mem-1", {"AGENTS.md": "a"})
    before = len(cache.service.requests)
    store = cache.store(env={"ACTIONS_CACHE_MODE": mode})

    restored = store.restore(RestoreKeys(primary="mem-1"), cache.folder)
    cache.write_memory({"AGENTS.md": "b"})
    saved = store.save("mem-2", cache.folder)

    assert restored.hit is reads
    assert restored.warning is None
    assert saved.saved is writes
    assert saved.write_denied is not writes
    assert store.may_write is writes
    routes = [r.route for r in cache.service.requests[before:]]
    assert (LOOKUP in routes) is reads
    assert (CREATE in routes) is writes


# -- key rules, folders -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "keys",
    [
        RestoreKeys(primary="k" * 513),
        RestoreKeys(primary="a,b"),
        RestoreKeys(primary=""),
        RestoreKeys(primary="k", restore=tuple(f"r{i}-" for i in range(10))),
        RestoreKeys(primary="k", restore=("ok-", "bad,prefix-")),
    ],
)
def test_restore_refuses_bad_keys_before_any_request(
    cache: CacheHarness, keys: RestoreKeys
) -> None:
    result = cache.store().restore(keys, cache.folder)
    assert not result.hit
    assert result.warning
    assert cache.service.requests == []


@pytest.mark.parametrize("key", ["k" * 513, "a,b", ""])
def test_save_refuses_bad_keys_before_any_request(cache: CacheHarness, key: str) -> None:
    cache.write_memory({"AGENTS.md": "a"})
    result = cache.store().save(key, cache.folder)
    assert not result.saved
    assert "not saved" in result.reason
    assert cache.service.requests == []


def test_a_key_of_512_characters_is_fine(cache: CacheHarness) -> None:
    store = cache.store()
    save(cache, store, "k" * 512, {"AGENTS.md": "a"})
    assert store.restore(RestoreKeys(primary="k" * 512), cache.folder).hit


def test_saving_a_missing_folder_is_a_reason_not_a_request(cache: CacheHarness) -> None:
    result = cache.store().save("mem-1", cache.folder)
    assert not result.saved
    assert result.reason
    assert cache.service.requests == []


def test_the_store_serves_only_its_own_folder(cache: CacheHarness) -> None:
    store = cache.store()
    with pytest.raises(ValueError, match="serves"):
        store.save("k", cache.workspace / "elsewhere")


# -- masking ------------------------------------------------------------------------------------


def test_signatures_and_token_never_reach_the_log(
    cache: CacheHarness, capsys: pytest.CaptureFixture[str]
) -> None:
    store = cache.store()
    save(cache, store, "mem-1", {"AGENTS.md": "a"})
    store.restore(RestoreKeys(primary="mem-1"), cache.folder)
    blob_requests = cache.service.requests_to(BLOB_PUT) + cache.service.requests_to(BLOB_GET)
    secrets = [DEFAULT_TOKEN]
    for request in blob_requests:
        raw_sig = request.query.split("sig=")[1].split("&")[0]
        secrets += [raw_sig, request.params["sig"]]

    captured = capsys.readouterr()
    unmasked = [
        line
        for line in (cache.out.getvalue() + captured.out + captured.err).splitlines()
        if not line.startswith("::add-mask::")
    ]
    for secret in secrets:
        assert not [line for line in unmasked if secret in line]
    masked = {line.removeprefix("::add-mask::") for line in cache.out.getvalue().splitlines()}
    for secret in secrets:
        assert secret.replace("%", "%25") in masked


def test_the_whole_signed_url_is_masked(cache: CacheHarness) -> None:
    store = cache.store()
    save(cache, store, "mem-1", {"AGENTS.md": "a"})
    put = cache.service.requests_to(BLOB_PUT)[0]
    url = f"{cache.service.base_url}{put.path}?{put.query}"
    assert cache.workflow.redact(f"see {url}") == "see ***"


def test_warnings_carry_no_url_or_token(cache: CacheHarness) -> None:
    cache.service.fail(BLOB_PUT, *[Fault.http(500)] * 5)
    cache.write_memory({"AGENTS.md": "a"})
    result = cache.store().save("mem-1", cache.folder)
    assert not result.saved
    assert "127.0.0.1" not in result.reason
    assert DEFAULT_TOKEN not in result.reason
    assert "sig=" not in result.reason
