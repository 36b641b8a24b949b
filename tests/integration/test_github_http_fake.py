"""The GitHub HTTP fake serving real pull requests, read by the action's own GitHub client."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from memory_action.evaluation.github.http import GitHubHttpServer
from memory_action.github.client import GitHubClient
from memory_action.safety.outgoing import gate
from tests.fakes.click_corpus import ClickCorpus, CorpusPull, git
from tests.fakes.github_api import REPOSITORY, FakeGitHub
from tests.fakes.runner import TOKEN

MANY_FILES = "718485be"  # 34 changed files
ADDED_EMPTY = "0103c957"  # adds the empty src/click/py.typed


@pytest.fixture
def fake(click_corpus: ClickCorpus) -> FakeGitHub:
    fake = FakeGitHub(max_per_page=10)  # 34 files: four pages, through Link headers
    for pull in click_corpus.pulls:
        fake.add_pull(pull.fake())
    return fake


@pytest.fixture
def server(fake: FakeGitHub) -> Iterator[GitHubHttpServer]:
    with GitHubHttpServer(fake) as server:
        yield server


def client(server: GitHubHttpServer) -> GitHubClient:
    return GitHubClient(TOKEN, server.base_url, REPOSITORY, retries=0, timeout_seconds=10)


def git_patch(corpus: ClickCorpus, pull: CorpusPull, path: str) -> str | None:
    """What ``git diff`` shows for one file, without its headers (None: no hunks)."""
    diff = git(corpus.repo, "diff", "-M", f"{pull.base_sha}...{pull.head_sha}", "--", path)
    lines = diff.decode().split("\n")
    first = next((i for i, line in enumerate(lines) if line.startswith("@@")), None)
    return None if first is None else "\n".join(lines[first:]).rstrip("\n")


def test_the_client_reads_every_file_and_patch_of_a_real_pull_request(
    click_corpus: ClickCorpus, server: GitHubHttpServer
) -> None:
    pull = click_corpus.pull(MANY_FILES)
    files = client(server).pull_request(pull.number).changed_files()

    assert [f.path for f in files] == pull.paths
    assert len(files) == 34
    for f in files:
        assert f.patch == git_patch(click_corpus, pull, f.path), f.path
        assert f.additions == sum(1 for line in f.patch.splitlines() if line.startswith("+"))
        assert f.deletions == sum(1 for line in f.patch.splitlines() if line.startswith("-"))
        assert f.status == "modified"
    pages = [url for method, url in server.fake.calls if "/files" in url]
    assert len(pages) == 4


def test_added_and_empty_files_are_as_github_gives_them(
    click_corpus: ClickCorpus, server: GitHubHttpServer
) -> None:
    pull = click_corpus.pull(ADDED_EMPTY)
    files = {f.path: f for f in client(server).pull_request(pull.number).changed_files()}

    empty = files["src/click/py.typed"]
    assert (empty.status, empty.additions, empty.deletions, empty.patch) == ("added", 0, 0, None)
    assert files["MANIFEST.in"].patch == git_patch(click_corpus, pull, "MANIFEST.in")


def test_contents_at_the_head_and_at_the_base_commit(
    click_corpus: ClickCorpus, server: GitHubHttpServer
) -> None:
    pull = click_corpus.pull("3b16957c")
    reader = client(server).pull_request(pull.number)

    for path in ("src/click/types.py", "CHANGES.md"):
        assert reader.file_content(path) == pull.head[path].decode()
        assert reader.base_file_content(path) == pull.base[path].decode()
        assert reader.file_content(path) != reader.base_file_content(path)
    assert reader.file_content("tests/typing/typing_prompt.py") is not None
    assert reader.base_file_content("tests/typing/typing_prompt.py") is None  # added
    info = reader.info()
    assert (info.head_sha, info.base_sha, info.title) == (pull.head_sha, pull.base_sha, pull.title)


def test_the_sticky_comment_is_created_then_edited(
    click_corpus: ClickCorpus, server: GitHubHttpServer
) -> None:
    number = click_corpus.pulls[0].number
    github = client(server)

    first = github.upsert_sticky_comment(
        number, "<!-- m -->", gate("<!-- m --> one", ours=["<!-- m -->"])
    )
    second = github.upsert_sticky_comment(
        number, "<!-- m -->", gate("<!-- m --> two", ours=["<!-- m -->"])
    )

    assert (first.created, second.created) == (True, False)
    assert server.fake.bodies(number) == ["<!-- m --> two"]


def test_pages_carry_a_link_header_and_unknown_routes_answer_404(
    click_corpus: ClickCorpus, server: GitHubHttpServer
) -> None:
    number = click_corpus.pull(MANY_FILES).number
    url = f"{server.base_url}/repos/{REPOSITORY}/pulls/{number}/files?per_page=10&page=2"
    with urllib.request.urlopen(url, timeout=10) as answer:
        link = answer.headers["Link"]
        assert len(json.load(answer)) == 10
    assert 'page=3>; rel="next"' in link
    assert 'page=4>; rel="last"' in link
    assert link.startswith(f"<{server.base_url}/repos/{REPOSITORY}/pulls/{number}/files?")

    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(f"{server.base_url}/repos/{REPOSITORY}/releases", timeout=10)
    assert error.value.code == 404
    assert server.fake.unknown == [("GET", f"{server.base_url}/repos/{REPOSITORY}/releases")]
