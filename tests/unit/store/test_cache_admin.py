"""Cache hygiene over the REST API, with PyGithub's requester mocked by ``responses``."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import pytest
import responses
from github import Auth, Github

from memory_action.gha import Workflow
from memory_action.github.client import GitHubClient
from memory_action.store.cache_admin import CacheAdmin, parse_entry

API = "https://api.github.test"
CACHES = f"{API}:443/repos/octo/repo/actions/caches"  # PyGithub spells out the port
PR_REF = "refs/pull/7/merge"
PREFIX = "agent-memory-pr-7-"


def _entry(id_: int, key: str, created: str, ref: str = PR_REF, version: str = "v1") -> dict:  # type: ignore[type-arg]
    return {
        "id": id_,
        "ref": ref,
        "key": key,
        "version": version,
        "last_accessed_at": created,
        "created_at": created,
        "size_in_bytes": 300,
    }


OLD = _entry(1, PREFIX + "run-1", "2026-11-01T10:00:00Z")
RESTORED = _entry(2, PREFIX + "run-2", "2026-11-02T10:00:00.000Z")
CONCURRENT = _entry(3, PREFIX + "run-3", "2026-11-03T10:00:00Z")  # another run's unmerged save
NEW = _entry(4, PREFIX + "run-4", "2026-11-04T10:00:00Z")  # this run's save


@pytest.fixture
def mocked() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield mock


@pytest.fixture
def out() -> io.StringIO:
    return io.StringIO()


@pytest.fixture
def admin(out: io.StringIO) -> CacheAdmin:
    client = Github(
        auth=Auth.Token("gh-token"),
        base_url=API,
        retry=None,
        seconds_between_requests=None,
        seconds_between_writes=None,
    )
    workflow = Workflow(env={"GITHUB_ACTIONS": "true"}, out=out)
    return CacheAdmin(client.requester, "octo/repo", workflow)


def _list(mocked: responses.RequestsMock, *entries: dict, status: int = 200) -> None:  # type: ignore[type-arg]
    body = {"total_count": len(entries), "actions_caches": list(entries)}
    mocked.get(CACHES, json=body, status=status)


def _deletes(mocked: responses.RequestsMock, *ids: int, status: int = 204) -> None:
    for id_ in ids:
        mocked.delete(f"{CACHES}/{id_}", status=status)


def _deleted_ids(mocked: responses.RequestsMock) -> list[int]:
    return [
        int(call.request.url.rsplit("/", 1)[1])  # type: ignore[union-attr]
        for call in mocked.calls
        if call.request.method == "DELETE"
    ]


def test_list_sends_the_filters_and_headers(
    admin: CacheAdmin, mocked: responses.RequestsMock
) -> None:
    _list(mocked, NEW, OLD)
    entries = admin.list_entries(PREFIX, PR_REF)
    assert [e.id for e in entries] == [4, 1]
    request = mocked.calls[0].request
    query = parse_qs(urlsplit(str(request.url)).query)
    assert query == {
        "key": [PREFIX],
        "ref": [PR_REF],
        "sort": ["created_at"],
        "direction": ["desc"],
        "per_page": ["100"],
        "page": ["1"],
    }
    assert request.headers["Accept"] == "application/vnd.github+json"
    assert request.headers["X-GitHub-Api-Version"] == "2022-11-28"
    assert "gh-token" in request.headers["Authorization"]


def test_list_follows_pages(admin: CacheAdmin, mocked: responses.RequestsMock) -> None:
    first = [_entry(i, f"{PREFIX}run-{i}", "2026-11-01T10:00:00Z") for i in range(100, 200)]
    mocked.get(CACHES, json={"total_count": 101, "actions_caches": first})
    mocked.get(CACHES, json={"total_count": 101, "actions_caches": [OLD]})
    assert len(admin.list_entries(PREFIX, PR_REF)) == 101
    pages = [parse_qs(urlsplit(str(c.request.url)).query)["page"] for c in mocked.calls]
    assert pages == [["1"], ["2"]]


def test_trouble_on_a_later_page_keeps_the_pages_read(
    admin: CacheAdmin, mocked: responses.RequestsMock
) -> None:
    first = [_entry(i, f"{PREFIX}run-{i}", "2026-11-01T10:00:00Z") for i in range(100, 200)]
    mocked.get(CACHES, json={"total_count": 300, "actions_caches": first})
    mocked.get(CACHES, json={"message": "boom"}, status=500)
    assert len(admin.list_entries(PREFIX, PR_REF) or []) == 100


def test_list_drops_other_refs_and_prefixes(
    admin: CacheAdmin, mocked: responses.RequestsMock
) -> None:
    other_ref = _entry(8, PREFIX + "run-8", "2026-11-01T10:00:00Z", ref="refs/heads/main")
    other_prefix = _entry(9, "agent-memory-pr-70-run-1", "2026-11-01T10:00:00Z")
    _list(mocked, OLD, other_ref, other_prefix, {"id": "broken"})
    assert [e.id for e in admin.list_entries(PREFIX, PR_REF)] == [1]


@pytest.mark.parametrize("status", [403, 404])
def test_list_refused_is_none_and_quiet(
    admin: CacheAdmin, mocked: responses.RequestsMock, out: io.StringIO, status: int
) -> None:
    mocked.get(CACHES, json={"message": "Resource not accessible by integration"}, status=status)
    assert admin.list_entries(PREFIX, PR_REF) is None  # the caller says what it costs
    assert out.getvalue().startswith("::debug::")
    assert "::warning" not in out.getvalue()


HELD = frozenset({OLD["key"], RESTORED["key"]})  # what this run's new save holds


def test_deletes_exactly_the_keys_the_new_save_holds(
    admin: CacheAdmin, mocked: responses.RequestsMock
) -> None:
    _list(mocked, NEW, CONCURRENT, RESTORED, OLD)
    _deletes(mocked, 1, 2)
    count = admin.delete_keys(PREFIX, PR_REF, HELD, keep_key=NEW["key"], version=None)
    assert count == 2
    assert sorted(_deleted_ids(mocked)) == [1, 2]  # never the new entry, never the concurrent one


def test_the_new_entry_is_kept_even_when_named(
    admin: CacheAdmin, mocked: responses.RequestsMock
) -> None:
    _list(mocked, RESTORED, OLD)
    _deletes(mocked, 2)
    assert admin.delete_keys(PREFIX, PR_REF, HELD, keep_key=OLD["key"], version=None) == 1
    assert _deleted_ids(mocked) == [2]


def test_keys_not_in_the_listing_delete_nothing(
    admin: CacheAdmin, mocked: responses.RequestsMock
) -> None:
    _list(mocked, NEW, CONCURRENT)
    assert admin.delete_keys(PREFIX, PR_REF, HELD, keep_key=NEW["key"], version=None) == 0
    assert _deleted_ids(mocked) == []


def test_version_limits_what_is_deleted(admin: CacheAdmin, mocked: responses.RequestsMock) -> None:
    gzip_entry = _entry(5, PREFIX + "run-0", "2026-10-01T10:00:00Z", version="v-gzip")
    _list(mocked, NEW, RESTORED, OLD, gzip_entry)
    _deletes(mocked, 1, 2)
    held = HELD | {gzip_entry["key"]}
    count = admin.delete_keys(PREFIX, PR_REF, held, keep_key=NEW["key"], version="v1")
    assert count == 2
    assert 5 not in _deleted_ids(mocked)


def test_a_403_on_delete_stops_quietly(
    admin: CacheAdmin, mocked: responses.RequestsMock, out: io.StringIO
) -> None:
    _list(mocked, NEW, RESTORED, OLD)
    _deletes(mocked, 2, 1, status=403)
    assert admin.delete_keys(PREFIX, PR_REF, HELD, keep_key=NEW["key"], version=None) == 0
    assert len(_deleted_ids(mocked)) == 1  # the first refusal ends the loop
    assert "::debug::Cache hygiene skipped" in out.getvalue()


def test_a_404_on_delete_is_skipped(admin: CacheAdmin, mocked: responses.RequestsMock) -> None:
    _list(mocked, NEW, RESTORED, OLD)
    mocked.delete(f"{CACHES}/2", status=404)
    mocked.delete(f"{CACHES}/1", status=204)
    assert admin.delete_keys(PREFIX, PR_REF, HELD, keep_key=NEW["key"], version=None) == 1


def test_a_server_error_never_raises(admin: CacheAdmin, mocked: responses.RequestsMock) -> None:
    mocked.get(CACHES, status=500, json={"message": "boom"})
    assert admin.delete_keys(PREFIX, PR_REF, HELD, keep_key=NEW["key"], version=None) == 0


def test_parse_entry_accepts_fractional_times() -> None:
    entry = parse_entry(RESTORED)
    assert entry is not None
    assert entry.created_at == datetime(2026, 11, 2, 10, tzinfo=UTC)
    assert parse_entry({"id": 1}) is None


def test_the_runs_github_client_carries_the_admin(mocked: responses.RequestsMock) -> None:
    _list(mocked, OLD)
    github = GitHubClient("t0k", API, "octo/repo")
    admin = CacheAdmin(github.repository.requester, "octo/repo", Workflow(env={}))
    assert [e.key for e in admin.list_entries(PREFIX, PR_REF)] == [OLD["key"]]
