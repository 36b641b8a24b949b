"""Compatibility with the official client, ``@actions/cache`` 6.3.0, run with node.

Both clients talk to one ``FakeCacheService``: what ``ActionsCacheStore`` saves, the JS client
restores, and the other way round, over v2 (Twirp + blob) and v1, with zstd and with gzip. The
restored trees are compared byte for byte with what was saved: the same names, the same
contents, and nothing else in the workspace.

What these tests pin down (the README builds on it):

- Our per-run keys (``memory-agent/v1/<agent>/repo/committed/<run>-<attempt>``) are found by the
  JS client through the prefix restore key ``memory-agent/v1/<agent>/repo/committed/``; it then
  returns the matched key with ``cache-hit`` false (``actions/cache`` sets ``cache-hit`` only
  when the matched key equals the primary key, case-insensitively).
- A JS client without zstd on ``PATH`` saves gzip under the gzip version; our client restores
  that through its gzip fallback (a second lookup with the gzip version).
- Our client always saves zstd under the ``zstd-without-long`` version; a JS client without zstd
  looks up the gzip version only, so it misses such an entry (no download, the workspace is left
  alone). Runners without zstd therefore cannot read memory our action saved.

Needs node and ``tests/interop/node_modules`` (``npm ci`` there; ``.ci/run`` does it through
``scripts/dev-setup``). Without them the tests skip, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_action.store.actions_cache import ActionsCacheStore
from memory_action.store.archive import Compression, cache_version
from memory_action.store.base import RestoreKeys
from tests.fakes.cache_harness import MEMORY, CacheHarness, tree
from tests.fakes.cache_service import LOOKUP, V1_LOOKUP, FakeCacheService
from tests.fakes.official_client import JsResult, OfficialClient, missing_reason

pytestmark = pytest.mark.interop

PROTOCOLS = ["v2", "v1"]
REFS = ("refs/pull/7/merge", "refs/heads/main")
PATH = str(MEMORY)  # `path: .agent-memory` in the actions/cache step, relative
VERSION = cache_version([PATH], Compression.ZSTD_WITHOUT_LONG)
GZIP_VERSION = cache_version([PATH], Compression.GZIP)
COMMITTED = "memory-agent/v1/memory-agent/repo/committed/"
OVERLAY = "memory-agent/v1/memory-agent/repo/pr-7/"

# A memory folder with what could go wrong in a tar: nesting, a hidden and an empty file, an empty
# directory, non-ASCII and long names (pax path records), bytes that are not text.
MEMORY_FILES: dict[str, bytes] = {
    "AGENTS.md": b"# Conventions\n\n- Network calls retry with tenacity, never a loop.\n",
    "notes/retries.md": b"- fetch() gets 3 attempts\n" * 40,
    "notes/deep/\u00fcn\u00efc\u00f6d\u00e9 \u2014 notes.md": "caf\u00e9 \u2713\n".encode(),
    "notes/" + "a-name-longer-than-a-ustar-field-" * 4 + ".md": b"pax path record\n",
    ".hidden": b"",
    "data/table.bin": bytes(range(256)) * 16,
}
EMPTY_DIRS = ("empty",)


@pytest.fixture(scope="module")
def node_ready() -> None:
    reason = missing_reason()
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(
            f"the @actions/cache compatibility tests cannot run: {reason}. CI must run them "
            "(.ci/run installs node_modules through scripts/dev-setup)."
        )
    pytest.skip(f"the official @actions/cache client is not available: {reason}")


@pytest.fixture
def service() -> Iterator[FakeCacheService]:
    """The fake cache service; its token is a run of pull request 7 (the conftest's: of 1)."""
    with FakeCacheService(REFS) as fake:
        yield fake


def official(
    cache: CacheHarness, protocol: str, *, zstd: bool = True, name: str = "js"
) -> OfficialClient:
    """The JS client in its own, empty workspace, against the same fake service."""
    return OfficialClient(
        service=cache.service,
        workspace=cache.root / f"{name}-workspace",
        temp_dir=cache.root / f"{name}-temp",
        protocol=protocol,
        zstd=zstd,
    )


def write_tree(workspace: Path) -> None:
    folder = workspace / MEMORY
    for name, data in MEMORY_FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for name in EMPTY_DIRS:
        (folder / name).mkdir(parents=True, exist_ok=True)


def expected_tree() -> dict[str, bytes | str]:
    """The workspace after a restore: the memory folder, and nothing else."""
    tree: dict[str, bytes | str] = {PATH: "dir"}
    for name, data in MEMORY_FILES.items():
        parts = name.split("/")
        for end in range(1, len(parts)):
            tree[f"{PATH}/{'/'.join(parts[:end])}"] = "dir"
        tree[f"{PATH}/{name}"] = data
    for name in EMPTY_DIRS:
        tree[f"{PATH}/{name}"] = "dir"
    return tree


def metadata(workspace: Path) -> dict[str, tuple[str, int]]:
    """Mode and mtime (ns) of the memory folder and everything in it."""
    folder = workspace / MEMORY
    return {
        path.relative_to(workspace).as_posix(): (stat.filemode(st.st_mode), st.st_mtime_ns)
        for path in (folder, *folder.rglob("*"))
        for st in (path.lstat(),)
    }


def ours_save(
    cache: CacheHarness, store: ActionsCacheStore, key: str
) -> dict[str, tuple[str, int]]:
    """Save the test tree with our client; the metadata it had."""
    write_tree(cache.workspace)
    (cache.folder / "notes" / "retries.md").chmod(0o755)  # an executable bit to carry over
    saved = metadata(cache.workspace)
    result = store.save(key, cache.folder)
    assert result.saved, result.reason
    cache.clear_memory()
    return saved


def js_ok(result: JsResult) -> JsResult:
    assert result.returncode == 0, result.stdout + result.stderr
    assert not result.log_lines("::warning::"), result.stdout
    assert not result.log_lines("::error::"), result.stdout
    return result


def lookup_versions(service: FakeCacheService, protocol: str) -> list[str]:
    if protocol == "v2":
        return [request.json()["version"] for request in service.requests_to(LOOKUP)]
    return [request.params["version"] for request in service.requests_to(V1_LOOKUP)]


def lookup_keys(service: FakeCacheService, protocol: str) -> list[list[str]]:
    if protocol == "v2":
        bodies = [request.json() for request in service.requests_to(LOOKUP)]
        return [[body["key"], *body.get("restore_keys", [])] for body in bodies]
    return [request.params["keys"].split(",") for request in service.requests_to(V1_LOOKUP)]


def entry_versions(service: FakeCacheService) -> dict[str, str]:
    return {entry.key: entry.version for entry in service.visible()}


# -- ours saves, the official client restores -----------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_official_client_restores_our_entry_through_the_prefix(
    node_ready: None, cache: CacheHarness, protocol: str
) -> None:
    key = f"{COMMITTED}1001-1"
    source = ours_save(cache, cache.store(protocol), key)
    js = official(cache, protocol)

    result = js_ok(js.restore(PATH, f"{COMMITTED}1002-1", COMMITTED))

    assert result.matched_key == key
    assert result.cache_hit is False  # a restore-key match: cache-hit is false in actions/cache
    if protocol == "v2":  # restoreCacheV1 logs no such line
        assert result.log_lines(f"Cache hit for restore-key: {key}")
    assert tree(js.workspace) == expected_tree()
    assert metadata(js.workspace) == source  # GNU tar applies our modes and pax mtimes
    assert lookup_versions(cache.service, protocol) == [VERSION]
    assert lookup_keys(cache.service, protocol) == [[f"{COMMITTED}1002-1", COMMITTED]]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_exact_key_is_a_cache_hit_for_the_official_client(
    node_ready: None, cache: CacheHarness, protocol: str
) -> None:
    key = f"{COMMITTED}1001-1"
    ours_save(cache, cache.store(protocol), key)
    js = official(cache, protocol)

    result = js_ok(js.restore(PATH, key, COMMITTED))

    assert (result.matched_key, result.cache_hit) == (key, True)
    if protocol == "v2":
        assert result.log_lines(f"Cache hit for: {key}")
    assert tree(js.workspace) == expected_tree()


def test_the_official_client_takes_the_newest_run_and_the_overlay_first(
    node_ready: None, cache: CacheHarness
) -> None:
    """Our key layout with the JS client's matching: each prefix in order, newest entry first."""
    main_token = cache.service.add_run(["refs/heads/main"])
    main_store = cache.store(token=main_token)
    ours_save(cache, main_store, f"{COMMITTED}1001-1")
    ours_save(cache, main_store, f"{COMMITTED}1003-1")
    js = official(cache, "v2")

    committed = js_ok(js.restore(PATH, COMMITTED, OVERLAY))
    assert committed.matched_key == f"{COMMITTED}1003-1"  # not 1001-1: the newest of the prefix

    # A PR run saves its overlay in refs/pull/7/merge; the PR's next run finds it before main's.
    write_tree(cache.workspace)
    (cache.folder / "AGENTS.md").write_bytes(b"- overlay\n")
    assert cache.store().save(f"{OVERLAY}1004-1", cache.folder).saved
    cache.clear_memory()
    overlay_js = official(cache, "v2", name="js-overlay")
    overlay = js_ok(overlay_js.restore(PATH, OVERLAY, COMMITTED))
    assert (overlay.matched_key, overlay.cache_hit) == (f"{OVERLAY}1004-1", False)
    assert tree(overlay_js.workspace)[f"{PATH}/AGENTS.md"] == b"- overlay\n"

    # main cannot see the PR's overlay: only the committed memory.
    main_js = OfficialClient(
        cache.service, cache.root / "js-main", cache.root / "js-main-temp", token=main_token
    )
    from_main = js_ok(main_js.restore(PATH, OVERLAY, COMMITTED))
    assert from_main.matched_key == f"{COMMITTED}1003-1"


# -- the official client saves, ours restores -----------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_we_restore_what_the_official_client_saved(
    node_ready: None, cache: CacheHarness, protocol: str
) -> None:
    js = official(cache, protocol)
    write_tree(js.workspace)
    (js.workspace / MEMORY / "notes" / "retries.md").chmod(0o755)
    key = f"{COMMITTED}2001-1"

    saved = js_ok(js.save(PATH, key))

    assert isinstance(saved.cache_id, int)
    assert saved.cache_id > 0
    assert entry_versions(cache.service) == {key: VERSION}
    result = cache.store(protocol).restore(
        RestoreKeys(primary=f"{COMMITTED}2002-1", restore=(COMMITTED,)), cache.folder
    )
    assert (result.hit, result.matched_key, result.warning) == (True, key, None)
    assert tree(cache.workspace) == expected_tree() == tree(js.workspace)
    assert metadata(cache.workspace) == metadata(js.workspace)  # modes, mtimes to the ns
    assert lookup_versions(cache.service, protocol) == [VERSION]  # zstd: no gzip fallback needed


# -- gzip: the official client on a runner without zstd ------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_we_restore_a_gzip_entry_through_the_fallback(
    node_ready: None, cache: CacheHarness, protocol: str
) -> None:
    js = official(cache, protocol, zstd=False)
    write_tree(js.workspace)
    key = f"{COMMITTED}3001-1"

    saved = js_ok(js.save(PATH, key))

    assert saved.log_lines("[command]")[0].endswith(" -z")  # tar ... -z: gzip, not zstdmt
    assert entry_versions(cache.service) == {key: GZIP_VERSION}
    entry = cache.service.find(key)
    assert entry is not None
    assert entry.data is not None
    assert entry.data[:2] == b"\x1f\x8b"  # a gzip stream
    result = cache.store(protocol).restore(
        RestoreKeys(primary=f"{COMMITTED}3002-1", restore=(COMMITTED,)), cache.folder
    )
    assert (result.hit, result.matched_key, result.warning) == (True, key, None)
    assert tree(cache.workspace) == expected_tree()
    assert lookup_versions(cache.service, protocol) == [VERSION, GZIP_VERSION]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_official_client_without_zstd_misses_our_entry(
    node_ready: None, cache: CacheHarness, protocol: str
) -> None:
    """What really happens: it asks for the gzip version only, finds nothing, writes nothing."""
    key = f"{COMMITTED}4001-1"
    ours_save(cache, cache.store(protocol), key)
    js = official(cache, protocol, zstd=False)

    result = js_ok(js.restore(PATH, key, COMMITTED))

    assert (result.matched_key, result.cache_hit) == (None, False)
    assert lookup_versions(cache.service, protocol) == [GZIP_VERSION]
    assert entry_versions(cache.service) == {key: VERSION}
    assert tree(js.workspace) == {}  # nothing downloaded, nothing extracted


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_official_client_without_zstd_reads_its_own_gzip_entries(
    node_ready: None, cache: CacheHarness, protocol: str
) -> None:
    """The control for the miss above: the gzip path itself works on that PATH."""
    js = official(cache, protocol, zstd=False)
    write_tree(js.workspace)
    js_ok(js.save(PATH, f"{COMMITTED}5001-1"))
    reader = official(cache, protocol, zstd=False, name="js-reader")

    result = js_ok(reader.restore(PATH, f"{COMMITTED}5002-1", COMMITTED))

    assert result.matched_key == f"{COMMITTED}5001-1"
    assert tree(reader.workspace) == expected_tree()
