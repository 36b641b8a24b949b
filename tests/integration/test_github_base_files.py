"""Files at the base commit in one GraphQL request (``github/base_files.py``), through the fake
GitHub API, whose GraphQL answers are checked against GitHub's published schema: what REST would
give the reader, or a REST read when GraphQL cannot tell."""

from __future__ import annotations

from typing import Any

import pytest

from memory_action.github.api import DEFAULT_API_URL
from memory_action.github.client import GitHubClient
from tests.fakes.github_api import HEAD_SHA, FakeGitHub, FakePullRequest

BLOB = {"__typename": "Blob", "isBinary": False, "isTruncated": False}


def reader_of(fake: FakeGitHub, **options: Any) -> Any:
    client = GitHubClient("ghs_token", DEFAULT_API_URL, "octo-org/octo-repo", retries=0, **options)
    return client.pull_request(7)


def fake_with(base: dict[str, str | bytes]) -> FakeGitHub:
    fake = FakeGitHub()
    fake.add_pull(FakePullRequest(contents={"AGENTS.md": "head\n"}, base_contents=base))
    return fake


def rest_reads(fake: FakeGitHub) -> list[str]:
    return [url for method, url in fake.calls if method == "GET" and "/contents/" in url]


def graphql_calls(fake: FakeGitHub) -> int:
    return sum(url.split("?")[0].endswith("/graphql") for _, url in fake.calls)


def test_several_base_files_are_read_in_one_request_and_not_again() -> None:
    fake = fake_with({"AGENTS.md": "base\n", ".gitattributes": "*.lock linguist-generated\n"})
    with fake.serve():
        reader = reader_of(fake)
        reader.prefetch_base_files(["AGENTS.md", ".gitattributes", "missing.md"])
        assert reader.base_file_content("AGENTS.md") == "base\n"
        assert reader.base_file_content(".gitattributes") == "*.lock linguist-generated\n"
        assert reader.base_file_content("missing.md") is None
        assert reader.file_content("AGENTS.md") == "head\n"  # the head is not the base
    assert graphql_calls(fake) == 1
    (head_read,) = rest_reads(fake)  # the head's copy only
    assert f"ref={HEAD_SHA}" in head_read


def test_when_graphql_fails_every_file_is_read_over_rest() -> None:
    fake = fake_with({"AGENTS.md": "base\n", ".gitattributes": "x linguist-vendored\n"})
    fake.base_files_fail = True
    with fake.serve():
        reader = reader_of(fake)
        reader.prefetch_base_files(["AGENTS.md", ".gitattributes"])
        assert reader.base_file_content("AGENTS.md") == "base\n"
        assert reader.base_file_content(".gitattributes") == "x linguist-vendored\n"
    assert graphql_calls(fake) == 1
    assert len(rest_reads(fake)) == 2


@pytest.mark.parametrize(
    "entry",
    [
        {"mode": 0o120000, "type": "blob", "object": {**BLOB, "byteSize": 9, "text": "OTHER.md"}},
        {"mode": 0o040000, "type": "tree", "object": {"__typename": "Tree"}},
        {"mode": 0o160000, "type": "commit", "object": None},
        {
            "mode": 0o100644,
            "type": "blob",
            "object": {**BLOB, "byteSize": 3, "isBinary": True, "text": None},
        },
    ],
    ids=["symlink", "directory", "submodule", "binary"],
)
def test_what_is_not_a_regular_text_file_is_none_without_a_rest_read(
    entry: dict[str, Any],
) -> None:
    fake = fake_with({})
    fake.base_entries["AGENTS.md"] = entry
    with fake.serve():
        reader = reader_of(fake)
        reader.prefetch_base_files(["AGENTS.md"])
        assert reader.base_file_content("AGENTS.md") is None
    assert rest_reads(fake) == []


def test_a_file_over_the_cap_is_none() -> None:
    fake = fake_with({"AGENTS.md": "x" * 100})
    with fake.serve():
        reader = reader_of(fake, max_file_bytes=10)
        reader.prefetch_base_files(["AGENTS.md"])
        assert reader.base_file_content("AGENTS.md") is None
    assert rest_reads(fake) == []


def test_a_truncated_text_is_read_whole_over_rest() -> None:
    whole = "- a lesson\n" * 10
    fake = fake_with({"AGENTS.md": whole})
    blob = {**BLOB, "byteSize": len(whole), "isTruncated": True, "text": whole[:5]}
    fake.base_entries["AGENTS.md"] = {"mode": 0o100644, "type": "blob", "object": blob}
    with fake.serve():
        reader = reader_of(fake)
        reader.prefetch_base_files(["AGENTS.md"])
        assert reader.base_file_content("AGENTS.md") == whole
    assert len(rest_reads(fake)) == 1
