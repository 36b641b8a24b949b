"""GitHubClient against the REST API as PyGithub really calls it, mocked with ``responses``.

Paths, query strings and payloads follow PyGithub 2.x (``per_page=100`` because the client asks
for it, ``Link`` headers for the next page). Retries are off unless a test is about them.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
import responses
from responses import matchers

from memory_action.errors import GitHubError
from memory_action.github.api import DEFAULT_API_URL
from memory_action.github.client import GitHubClient
from memory_action.github.pull_request import ChangedFile, CommentPermissionError
from memory_action.memory.markers import comment_marker
from memory_action.safety.outgoing import SafeText, gate
from tests.fakes.github_api import FakeGitHub, FakePullRequest

FIXTURES = Path(__file__).parent.parent / "fixtures" / "github"
TOKEN = "ghs_" + "T0k3n" * 7  # looks like an installation token; must never appear in errors
# PyGithub sends every request to host:port, so that is the URL the mocks must match; the URLs
# in GitHub's answers (a comment's "url", Link headers) have no port, as GitHub sends them.
API = f"{DEFAULT_API_URL}:443"
REPO = f"{API}/repos/octo-org/octo-repo"
SERVER_REPO = f"{DEFAULT_API_URL}/repos/octo-org/octo-repo"
HEAD_SHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
MARKER = comment_marker("reviewer")
BOT_LOGIN = "github-actions[bot]"
BOT = {"login": BOT_LOGIN, "id": 41898282, "type": "Bot"}
HUMAN = {"login": "mona", "id": 1, "type": "User"}
GRAPHQL = f"{API}/graphql"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def client(**options: Any) -> GitHubClient:
    """A fresh client, as every workflow run builds one."""
    return GitHubClient(TOKEN, DEFAULT_API_URL, "octo-org/octo-repo", retries=0, **options)


@pytest.fixture
def api() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=True) as mock:
        yield mock


# --- a stateful fake of a pull request's issue comments -----------------------------------------


@dataclass
class FakeComments:
    """The issue comments of pull request 7: listed page by page, created, edited."""

    comments: list[dict[str, Any]] = field(default_factory=list)
    next_id: int = 500
    deleted_elsewhere: set[int] = field(default_factory=set)  # listed, then gone: DELETE 404
    viewer: dict[str, Any] = field(
        default_factory=lambda: {"__typename": "Bot", "login": BOT_LOGIN}
    )
    identity_asked: int = 0

    def add(self, body: str, user: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        comment = {
            "id": self.next_id,
            "url": f"{SERVER_REPO}/issues/comments/{self.next_id}",
            "html_url": f"https://github.com/octo-org/octo-repo/pull/7#issuecomment-{self.next_id}",
            "body": body,
            "user": user,
        }
        self.comments.append(comment)
        return comment

    @contextmanager
    def serve(self) -> Iterator[list[str]]:
        """Answer as GitHub would, for one run; yields the methods called, in order."""
        with responses.RequestsMock(assert_all_requests_are_fired=False) as api:
            self.register(api)
            methods: list[str] = []
            yield methods
            # The REST calls; the token's identity is asked through GraphQL (see its tests).
            methods += [
                str(c.request.method) for c in api.calls if GRAPHQL not in str(c.request.url)
            ]

    def register(self, api: responses.RequestsMock) -> None:
        api.add_callback(responses.GET, f"{REPO}/issues/7/comments", callback=self._list)
        api.add_callback(responses.POST, f"{REPO}/issues/7/comments", callback=self._create)
        edit_url = re.compile(rf"{re.escape(REPO)}/issues/comments/\d+")
        api.add_callback(responses.PATCH, edit_url, callback=self._edit)
        api.add_callback(responses.DELETE, edit_url, callback=self._delete)
        api.add_callback(responses.POST, GRAPHQL, callback=self._viewer)

    def _list(self, request: requests.PreparedRequest) -> tuple[int, dict[str, str], str]:
        query = parse_qs(urlsplit(str(request.url)).query)
        per_page, page = int(query["per_page"][0]), int(query.get("page", ["1"])[0])
        start = (page - 1) * per_page
        headers = {}
        if start + per_page < len(self.comments):
            next_url = f"{SERVER_REPO}/issues/7/comments?per_page={per_page}&page={page + 1}"
            headers["Link"] = f'<{next_url}>; rel="next"'
        return 200, headers, json.dumps(self.comments[start : start + per_page])

    def _viewer(self, _request: requests.PreparedRequest) -> tuple[int, dict[str, str], str]:
        self.identity_asked += 1
        return 200, {}, json.dumps({"data": {"viewer": self.viewer}})

    def _create(self, request: requests.PreparedRequest) -> tuple[int, dict[str, str], str]:
        comment = self.add(json.loads(request.body or "{}")["body"], BOT)
        return 201, {}, json.dumps(comment)

    def _edit(self, request: requests.PreparedRequest) -> tuple[int, dict[str, str], str]:
        comment_id = int(str(request.url).rsplit("/", 1)[1])
        comment = next(c for c in self.comments if c["id"] == comment_id)
        comment["body"] = json.loads(request.body or "{}")["body"]
        return 200, {}, json.dumps(comment)

    def _delete(self, request: requests.PreparedRequest) -> tuple[int, dict[str, str], str]:
        comment_id = int(str(request.url).rsplit("/", 1)[1])
        if comment_id in self.deleted_elsewhere:
            return 404, {}, json.dumps({"message": "Not Found"})
        self.comments = [c for c in self.comments if c["id"] != comment_id]
        return 204, {}, ""


def body(text: str, marker: str = MARKER) -> str:
    return f"{marker}\n{text}"


def sticky(text: str) -> SafeText:
    """Our comment's body as the outgoing gate lets it through (the marker is ours)."""
    return gate(body(text), ours=(MARKER,))


# --- sticky comment -----------------------------------------------------------------------------


def test_first_run_creates_the_comment_and_the_second_updates_it() -> None:
    fake = FakeComments()
    with fake.serve() as first_calls:
        first = client().upsert_sticky_comment(7, MARKER, sticky("first review"))
    with fake.serve() as second_calls:
        second = client().upsert_sticky_comment(7, MARKER, sticky("second review"))

    assert (first_calls, second_calls) == (["GET", "POST"], ["GET", "PATCH"])
    assert first.created
    assert not second.created
    assert second.url == first.url
    assert [c["body"] for c in fake.comments] == [body("second review")]


def test_two_comments_of_ours_converge_on_the_oldest() -> None:
    """Two runs of the pull request at once each created a comment: the next write keeps the
    oldest (promotion reads it), writes the newest review there and deletes the other."""
    fake = FakeComments()
    oldest = fake.add(body("run A's review"), BOT)
    fake.add("a person's comment in between", HUMAN)
    fake.add(body("run B's review"), BOT)
    with fake.serve() as calls:
        posted = client().upsert_sticky_comment(7, MARKER, sticky("run C's review"))

    assert calls == ["GET", "PATCH", "DELETE"]
    assert not posted.created
    assert posted.url == oldest["html_url"]
    assert [c["body"] for c in fake.comments] == [
        body("run C's review"),
        "a person's comment in between",
    ]


def test_a_duplicate_another_run_deleted_first_is_no_error() -> None:
    fake = FakeComments()
    fake.add(body("A"), BOT)
    newer = fake.add(body("B"), BOT)
    fake.deleted_elsewhere.add(newer["id"])
    with fake.serve() as calls:
        client().upsert_sticky_comment(7, MARKER, sticky("C"))

    assert calls == ["GET", "PATCH", "DELETE"]


def test_the_comment_is_found_on_a_later_page() -> None:
    fake = FakeComments()
    for n in range(150):
        fake.add(f"comment {n}", HUMAN)
    ours = fake.add(body("old"), BOT)
    with fake.serve() as calls:
        posted = client().upsert_sticky_comment(7, MARKER, sticky("new"))

    assert calls == ["GET", "GET", "PATCH"]
    assert not posted.created
    assert posted.url == ours["html_url"]
    assert ours["body"] == body("new")
    assert len(fake.comments) == 151


def test_only_our_bot_comment_with_our_marker_is_edited() -> None:
    fake = FakeComments()
    quoted = fake.add(f"> {MARKER}\n> why did the bot say this?", HUMAN)
    other_agent = fake.add(body("other agent", comment_marker("reviewer-2")), BOT)
    prefix_agent = fake.add(body("agent 'r'", comment_marker("r")), BOT)
    with fake.serve():
        posted = client().upsert_sticky_comment(7, MARKER, sticky("ours"))

    assert posted.created
    assert quoted["body"].startswith("> ")
    assert other_agent["body"] == body("other agent", comment_marker("reviewer-2"))
    assert prefix_agent["body"] == body("agent 'r'", comment_marker("r"))
    assert fake.comments[-1]["body"] == body("ours")


def test_bot_login_matches_a_personal_access_token_author() -> None:
    fake = FakeComments()
    mine = fake.add(body("old"), HUMAN)
    with fake.serve():
        posted = client(bot_login="mona").upsert_sticky_comment(7, MARKER, sticky("new"))

    assert not posted.created
    assert mine["body"] == body("new")


APP_BOT = {"login": "memory-app[bot]", "id": 7, "type": "Bot"}


@pytest.mark.parametrize("login", ["memory-app", "memory-app[bot]"])
def test_with_an_app_token_only_the_apps_comments_are_ours(login: str) -> None:
    # GraphQL may name the bot with or without the "[bot]" its REST comments show.
    fake = FakeComments(viewer={"__typename": "Bot", "login": login})
    workflow_bots = fake.add(body("another workflow's"), BOT)
    apps = fake.add(body("old"), APP_BOT)
    with fake.serve():
        posted = client().upsert_sticky_comment(7, MARKER, sticky("new"))

    assert not posted.created
    assert apps["body"] == body("new")
    assert workflow_bots["body"] == body("another workflow's")


def test_when_github_does_not_say_who_the_token_is_it_is_the_workflow_bot() -> None:
    fake = FakeComments(viewer={"__typename": "Bot"})  # no login: not an answer
    apps = fake.add(body("an app's"), APP_BOT)
    ours = fake.add(body("old"), BOT)
    with fake.serve():
        posted = client().upsert_sticky_comment(7, MARKER, sticky("new"))

    assert posted.url == ours["html_url"]
    assert apps["body"] == body("an app's")


def test_the_identity_is_asked_once() -> None:
    fake = FakeComments()
    fake.add(body("old"), BOT)
    github = client()
    with fake.serve():
        github.find_sticky_comment(7, MARKER)
        github.upsert_sticky_comment(7, MARKER, sticky("new"))

    assert github.identity == "github-actions[bot]"
    assert fake.identity_asked == 1


def test_an_unchanged_comment_is_not_edited_again() -> None:
    fake = FakeComments()
    fake.add(body("same"), BOT)
    with fake.serve() as calls:
        posted = client().upsert_sticky_comment(7, MARKER, sticky("same"))

    assert not posted.created
    assert calls == ["GET"]


def test_find_sticky_comment_returns_the_body_or_none() -> None:
    fake = FakeComments()
    fake.add(body("remembered"), BOT)
    with fake.serve():
        found = client().find_sticky_comment(7, MARKER)
        missing = client().find_sticky_comment(7, comment_marker("nobody"))

    assert found == body("remembered")
    assert missing is None


def test_a_body_without_the_marker_is_refused() -> None:
    with pytest.raises(ValueError, match="marker"):
        client().upsert_sticky_comment(7, MARKER, gate("no marker here"))


def test_requests_carry_the_token_and_our_user_agent(api: responses.RequestsMock) -> None:
    api.get(
        f"{REPO}/issues/7/comments",
        json=[],
        match=[
            matchers.header_matcher({"Authorization": f"token {TOKEN}"}),
            matchers.query_param_matcher({"per_page": "100"}),
        ],
    )

    assert client().find_sticky_comment(7, MARKER) is None
    assert api.calls[0].request.headers["User-Agent"].startswith("memory-agent/")


# --- permissions and errors ---------------------------------------------------------------------

FORBIDDEN = {
    "message": "Resource not accessible by integration",
    "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
}


@pytest.mark.parametrize("status", [403, 404])
def test_a_refused_create_is_a_comment_permission_error(
    api: responses.RequestsMock, status: int
) -> None:
    api.get(f"{REPO}/issues/7/comments", json=[])
    api.post(f"{REPO}/issues/7/comments", status=status, json=FORBIDDEN)

    with pytest.raises(CommentPermissionError, match=f"HTTP {status}") as caught:
        client().upsert_sticky_comment(7, MARKER, sticky("review"))
    assert "pull-requests: write" in str(caught.value)


def test_comments_that_may_not_be_listed_may_not_be_written(api: responses.RequestsMock) -> None:
    api.get(f"{REPO}/issues/7/comments", status=403, json=FORBIDDEN)

    with pytest.raises(CommentPermissionError, match="listing comments of #7 failed: HTTP 403"):
        client().upsert_sticky_comment(7, MARKER, sticky("review"))


def test_a_refused_edit_is_a_comment_permission_error(api: responses.RequestsMock) -> None:
    fake = FakeComments()
    ours = fake.add(body("old"), BOT)
    api.get(f"{REPO}/issues/7/comments", json=fake.comments)
    api.patch(f"{REPO}/issues/comments/{ours['id']}", status=403, json=FORBIDDEN)

    with pytest.raises(CommentPermissionError, match="Resource not accessible by integration"):
        client().upsert_sticky_comment(7, MARKER, sticky("new"))


def test_a_rate_limit_is_not_mistaken_for_a_permission_problem(
    api: responses.RequestsMock,
) -> None:
    api.get(f"{REPO}/issues/7/comments", json=[])
    api.post(
        f"{REPO}/issues/7/comments",
        status=403,
        json={"message": "API rate limit exceeded for installation ID 1."},
    )

    with pytest.raises(GitHubError, match="HTTP 403 API rate limit exceeded"):
        client().upsert_sticky_comment(7, MARKER, sticky("review"))


def test_a_server_error_is_one_line_without_the_token(api: responses.RequestsMock) -> None:
    api.get(
        f"{REPO}/issues/7/comments",
        status=500,
        json={"message": f"Server Error\nwhile handling token {TOKEN}"},
    )

    with pytest.raises(GitHubError) as caught:
        client().find_sticky_comment(7, MARKER)

    message = str(caught.value)
    assert (
        message == "listing comments of #7 failed: HTTP 500 Server Error while handling token ***"
    )
    assert TOKEN not in message
    assert caught.value.exit_code == 6


def test_a_connection_failure_is_a_github_error(api: responses.RequestsMock) -> None:
    api.get(f"{REPO}/pulls/7", body=requests.ConnectionError("connection refused"))

    with pytest.raises(GitHubError, match="reading pull request #7 failed: connection refused"):
        client().pull_request(7).info()


def test_reads_are_retried_but_writes_are_not(api: responses.RequestsMock) -> None:
    api.get(f"{REPO}/issues/7/comments", status=502, json={"message": "Bad Gateway"})
    api.get(f"{REPO}/issues/7/comments", json=[])
    api.post(f"{REPO}/issues/7/comments", status=502, json={"message": "Bad Gateway"})

    github = GitHubClient(TOKEN, DEFAULT_API_URL, "octo-org/octo-repo", retries=1)
    with pytest.raises(GitHubError, match="creating a comment on #7 failed: HTTP 502"):
        github.upsert_sticky_comment(7, MARKER, sticky("review"))

    assert [c.request.method for c in api.calls] == ["GET", "GET", "POST"]


# --- reading the pull request -------------------------------------------------------------------


def test_info_reads_the_pull_request_once(api: responses.RequestsMock) -> None:
    api.get(f"{REPO}/pulls/7", json=fixture("pull_request.json"))
    pr = client().pull_request(7)

    info = pr.info()

    assert pr.info() is info
    assert (info.number, info.title, info.body, info.author) == (
        7,
        "Add retry to the uploader",
        "",
        "mona",
    )
    assert (info.head_sha, info.head_ref, info.base_ref, info.draft) == (
        HEAD_SHA,
        "retry-uploader",
        "main",
        True,
    )
    assert info.html_url == "https://github.com/octo-org/octo-repo/pull/7"
    assert len(api.calls) == 1


def test_changed_files_follow_every_page(api: responses.RequestsMock) -> None:
    files_url = f"{REPO}/pulls/7/files"
    next_page = f"{SERVER_REPO}/pulls/7/files?per_page=100&page=2"
    api.get(
        files_url,
        json=fixture("pull_request_files_page_1.json"),
        headers={"Link": f'<{next_page}>; rel="next", <{next_page}>; rel="last"'},
        match=[matchers.query_param_matcher({"per_page": "100"})],
    )
    api.get(
        files_url,
        json=fixture("pull_request_files_page_2.json"),
        match=[matchers.query_param_matcher({"per_page": "100", "page": "2"})],
    )

    files = client().pull_request(7).changed_files()

    assert files == [
        ChangedFile(
            path="uploader/retry.py",
            status="added",
            additions=12,
            deletions=0,
            patch="@@ -0,0 +1,12 @@\n+def retry(times):\n+    ...",
        ),
        ChangedFile(
            path="uploader/client.py",
            status="renamed",
            additions=2,
            deletions=3,
            patch="@@ -1,3 +1,2 @@\n-import http\n+import retry",
            previous_path="uploader/http.py",
        ),
        ChangedFile(path="docs/logo.png", status="modified", additions=0, deletions=0, patch=None),
    ]


def test_an_answer_nested_too_deeply_is_one_line(api: responses.RequestsMock) -> None:
    """Issue 26: PyGithub's own json.loads recursed on a 20,000-deep answer."""
    deep = '{"a":' * 20_000 + "1" + "}" * 20_000
    api.get(f"{REPO}/pulls/7", body=deep, content_type="application/json")

    with pytest.raises(GitHubError) as caught:
        client().pull_request(7).info()

    assert str(caught.value) == (
        "reading pull request #7 failed: GitHub's answer was nested too deeply to read"
    )


def test_default_branch(api: responses.RequestsMock) -> None:
    api.get(REPO, json={"full_name": "octo-org/octo-repo", "default_branch": "trunk"})

    assert client().default_branch() == "trunk"


def test_an_enterprise_api_url_is_used_as_the_base(api: responses.RequestsMock) -> None:
    enterprise = "https://github.example.test/api/v3"
    api.get(
        "https://github.example.test:443/api/v3/repos/octo-org/octo-repo",
        json={"default_branch": "main"},
    )

    github = GitHubClient(TOKEN, enterprise + "/", "octo-org/octo-repo", retries=0)

    assert github.default_branch() == "main"


# --- file contents at the head commit -----------------------------------------------------------


def content(path: str, data: bytes, **overrides: Any) -> dict[str, Any]:
    """A contents API answer for a file, as GitHub sends it (base64 with line breaks)."""
    encoded = base64.encodebytes(data).decode("ascii")
    return {
        "type": "file",
        "encoding": "base64",
        "size": len(data),
        "name": path.rsplit("/", 1)[-1],
        "path": path,
        "content": encoded,
        "sha": "3d21ec53a331a6f037a91c368710b99387d012c1",
        "url": f"{SERVER_REPO}/contents/{path}?ref={HEAD_SHA}",
        **overrides,
    }


@pytest.fixture
def pr_api(api: responses.RequestsMock) -> responses.RequestsMock:
    api.get(f"{REPO}/pulls/7", json=fixture("pull_request.json"))
    return api


def contents_url(path: str) -> str:
    return f"{REPO}/contents/{path}"


AT_HEAD = [matchers.query_param_matcher({"ref": HEAD_SHA})]


def test_a_text_file_is_read_at_the_head_commit(pr_api: responses.RequestsMock) -> None:
    text = "def retry(times):\n    return times  # ünïcode\n"
    pr_api.get(
        contents_url("uploader/retry.py"),
        json=content("uploader/retry.py", text.encode()),
        match=AT_HEAD,
    )

    assert client().pull_request(7).file_content("uploader/retry.py") == text


def test_a_path_with_spaces_is_quoted(pr_api: responses.RequestsMock) -> None:
    pr_api.get(
        f"{REPO}/contents/docs/read%20me.md",
        json=content("docs/read me.md", b"hi\n"),
        match=AT_HEAD,
    )

    assert client().pull_request(7).file_content("docs/read me.md") == "hi\n"


def test_a_missing_file_is_none(pr_api: responses.RequestsMock) -> None:
    pr_api.get(contents_url("nope.py"), status=404, json={"message": "Not Found"})

    assert client().pull_request(7).file_content("nope.py") is None


@pytest.mark.parametrize(
    "data",
    [b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", b"caf\xe9 latin-1, not UTF-8"],
    ids=["nul-bytes", "not-utf8"],
)
def test_a_binary_file_is_none(pr_api: responses.RequestsMock, data: bytes) -> None:
    pr_api.get(contents_url("docs/logo.png"), json=content("docs/logo.png", data))

    assert client().pull_request(7).file_content("docs/logo.png") is None


def test_a_directory_is_none(pr_api: responses.RequestsMock) -> None:
    listing = [content("docs/a.md", b"a", type="file"), content("docs/b", b"", type="dir")]
    pr_api.get(contents_url("docs"), json=listing)

    assert client().pull_request(7).file_content("docs") is None


def test_a_submodule_is_none(pr_api: responses.RequestsMock) -> None:
    pr_api.get(contents_url("vendor/lib"), json=content("vendor/lib", b"", type="submodule"))

    assert client().pull_request(7).file_content("vendor/lib") is None


def test_a_file_over_1_mb_comes_from_its_blob(pr_api: responses.RequestsMock) -> None:
    text = "x = 1\n" * 200_000  # 1.2 MB: the contents API sends no content
    sha = "5b0c2f6e3a1d4e7f8a9b0c1d2e3f4a5b6c7d8e9f"
    pr_api.get(
        contents_url("big.py"),
        json=content("big.py", b"", size=len(text), encoding="none", content="", sha=sha),
    )
    pr_api.get(
        f"{REPO}/git/blobs/{sha}",
        json={"sha": sha, "size": len(text), "encoding": "base64", "content": b64(text)},
    )

    assert client().pull_request(7).file_content("big.py") == text


def test_a_file_over_the_cap_is_none_without_fetching_it(pr_api: responses.RequestsMock) -> None:
    pr_api.get(
        contents_url("huge.sql"),
        json=content("huge.sql", b"", size=50_000_000, encoding="none", content=""),
    )

    assert client(max_file_bytes=1_000_000).pull_request(7).file_content("huge.sql") is None


def test_the_pull_request_is_read_once_for_many_files(pr_api: responses.RequestsMock) -> None:
    for name in ("a.py", "b.py"):
        pr_api.get(contents_url(name), json=content(name, name.encode()))
    pr = client().pull_request(7)

    assert [pr.file_content("a.py"), pr.file_content("b.py")] == ["a.py", "b.py"]
    assert [c.request.method for c in pr_api.calls] == ["GET"] * 3


def b64(text: str) -> str:
    return base64.encodebytes(text.encode()).decode("ascii")


def test_base_file_content_reads_the_base_commit_not_the_head() -> None:
    """Trusted inputs (.gitattributes, read-only memory) come from the base: the PR cannot
    change them."""
    fake = FakeGitHub()
    fake.add_pull(
        FakePullRequest(
            contents={"AGENTS.md": "head text\n"}, base_contents={"AGENTS.md": "base\n"}
        )
    )
    with fake.serve():
        reader = client().pull_request(7)
        assert reader.base_file_content("AGENTS.md") == "base\n"
        assert reader.file_content("AGENTS.md") == "head text\n"
        assert reader.base_file_content("missing.md") is None
