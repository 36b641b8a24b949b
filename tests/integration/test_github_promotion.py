"""What the push run asks GitHub after a merge, mocked with ``responses`` as PyGithub calls it.

The merged pull requests of the pushed commits (``GET .../commits/{sha}/pulls``), the agent's
sticky comment, its edit history (GraphQL ``userContentEdits``) and the editors' permission
(``GET .../collaborators/{login}/permission``). Answers are GitHub's, trimmed (fixtures in
``tests/fixtures/github``). PyGithub sends every request to ``host:443``, the GraphQL one too.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import requests
import responses
from responses import matchers

from memory_action.errors import GitHubError
from memory_action.github.after_merge import MergedPullRequest, StickyComment, TrustedComment
from memory_action.github.api import DEFAULT_API_URL
from memory_action.github.client import GitHubClient
from memory_action.memory.markers import comment_marker
from memory_action.run.event_payload import MAX_PUSH_COMMITS, push_commit_shas

FIXTURES = Path(__file__).parent.parent / "fixtures"
TOKEN = "ghs_" + "T0k3n" * 7
API = f"{DEFAULT_API_URL}:443"
REPO = f"{API}/repos/octo-org/octo-repo"
GRAPHQL = f"{API}/graphql"
MARKER = comment_marker("reviewer")
MERGE_SHA = "9f1c2d3e4b5a69788766554433221100ffeeddcc"
BOT_COMMENT_ID = 1900002


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / "github" / name).read_text())


def client(api_url: str = DEFAULT_API_URL) -> GitHubClient:
    """A client whose token is the workflow's (how GitHub names it is test_github_client's)."""
    return GitHubClient(
        TOKEN, api_url, "octo-org/octo-repo", retries=0, bot_login="github-actions[bot]"
    )


@pytest.fixture
def api() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=True) as mock:
        yield mock


# --- merged pull requests of the pushed commits -------------------------------------------------


def pull(number: int, merged_at: str | None = "2026-11-28T17:41:58Z", base: str = "main") -> Any:
    """A pull request as ``commits/{sha}/pulls`` lists it (no ``merged`` field there)."""
    data = copy.deepcopy(fixture("commit_pulls.json")[0])
    data.update(number=number, merged_at=merged_at)
    data["url"] = data["url"].replace("/12", f"/{number}")
    data["base"].update(ref=base, label=f"octo-org:{base}")
    if merged_at is None:
        data.update(
            state="open",
            closed_at=None,
            merge_commit_sha="e5bd3914e2e596debea16f433f57875b5b90bcd6",
        )
    return data


def commit_pulls(api: responses.RequestsMock, sha: str, pulls: list[Any]) -> None:
    api.get(
        f"{REPO}/commits/{sha}/pulls",
        json=pulls,
        match=[matchers.query_param_matcher({"per_page": "100"})],
    )


def test_the_merged_pull_request_of_a_pushed_commit_is_found(api: responses.RequestsMock) -> None:
    open_one, other_base = pull(13, merged_at=None), pull(14, base="release/1.x")
    commit_pulls(api, MERGE_SHA, [*fixture("commit_pulls.json"), open_one, other_base])

    merged = client().merged_pull_requests([MERGE_SHA], "main")

    assert [(pr.number, pr.merge_commit_sha, pr.author) for pr in merged] == [
        (12, MERGE_SHA, "mona")
    ]
    assert merged[0].merged_at == datetime(2026, 11, 28, 17, 41, 58, tzinfo=UTC)
    assert api.calls[0].request.headers["Authorization"] == f"token {TOKEN}"


def test_an_unmerged_or_other_base_pull_request_is_not_merged(api: responses.RequestsMock) -> None:
    commit_pulls(api, MERGE_SHA, [pull(13, merged_at=None), pull(14, base="release/1.x")])

    assert client().merged_pull_requests([MERGE_SHA], "main") == []


def test_pull_requests_are_deduplicated_and_ordered_by_merge_time(
    api: responses.RequestsMock,
) -> None:
    later, earlier = pull(12), pull(9, merged_at="2026-11-28T09:00:00Z")
    shas = ["a" * 40, "b" * 40, "c" * 40]
    commit_pulls(api, shas[0], [later])
    commit_pulls(api, shas[1], [later, earlier])
    commit_pulls(api, shas[2], [])

    merged = client().merged_pull_requests([*shas, shas[0]], "main")

    assert [pr.number for pr in merged] == [9, 12]
    assert len(api.calls) == 3  # the repeated sha is not asked again
    assert isinstance(merged[0], MergedPullRequest)


def test_at_most_20_commits_are_looked_up(api: responses.RequestsMock) -> None:
    shas = [f"{n:040x}" for n in range(1, 26)]
    for sha in shas[:MAX_PUSH_COMMITS]:
        commit_pulls(api, sha, [])

    assert client().merged_pull_requests(["0" * 40, *shas], "main") == []
    assert len(api.calls) == MAX_PUSH_COMMITS


def test_a_failed_listing_is_a_github_error_without_the_token(
    api: responses.RequestsMock,
) -> None:
    api.get(
        f"{REPO}/commits/{MERGE_SHA}/pulls",
        status=502,
        json={"message": f"Bad Gateway\nfor {TOKEN}"},
    )

    with pytest.raises(GitHubError) as caught:
        client().merged_pull_requests([MERGE_SHA], "main")
    assert str(caught.value) == (
        "listing the pull requests of commit 9f1c2d3 failed: HTTP 502 Bad Gateway for ***"
    )


def test_a_connection_failure_is_a_github_error(api: responses.RequestsMock) -> None:
    api.get(f"{REPO}/commits/{MERGE_SHA}/pulls", body=requests.ConnectionError("reset by peer"))

    with pytest.raises(GitHubError, match="commit 9f1c2d3 failed: reset by peer"):
        client().merged_pull_requests([MERGE_SHA], "main")


def test_push_commit_shas_put_the_head_first() -> None:
    event = json.loads((FIXTURES / "events" / "push_main.json").read_text())
    assert push_commit_shas(event) == [MERGE_SHA]

    many = {
        "after": "f" * 40,
        "head_commit": {"id": "f" * 40},
        "commits": [{"id": f"{n:040x}"} for n in range(1, 21)] + [{"id": "f" * 40}],
    }
    shas = push_commit_shas(many)
    assert shas[:2] == ["f" * 40, f"{20:040x}"]
    assert len(shas) == MAX_PUSH_COMMITS

    deleted: dict[str, Any] = {"after": "0" * 40, "head_commit": None, "commits": []}
    assert push_commit_shas(deleted) == []


# --- the sticky comment and whether to trust it -------------------------------------------------


def comments(api: responses.RequestsMock, base: str = REPO) -> None:
    api.get(f"{base}/issues/12/comments", json=fixture("issue_comments_sticky.json"))


def edits(*editors: tuple[str, str], total: int | None = None, **node: Any) -> Any:
    """The GraphQL answer for the comment, edited by ``(typename, login)`` newest first."""
    answer = copy.deepcopy(fixture("graphql_comment_edits.json"))
    data = answer["data"]["node"]
    history = [{"__typename": t, "login": login} for t, login in editors]
    history.append({"__typename": "Bot", "login": "github-actions"})  # the original version
    data["editor"] = history[0]
    data["userContentEdits"] = {
        "totalCount": len(history) if total is None else total,
        "nodes": [
            {"editedAt": "2026-11-28T09:30:45Z", "editor": e, "deletedBy": None} for e in history
        ],
    }
    data.update(node)
    return answer


def graphql(api: responses.RequestsMock, answer: Any, url: str = GRAPHQL, **kw: Any) -> None:
    api.post(url, json=answer, **kw)


def permission(api: responses.RequestsMock, login: str, role: str, base: str = REPO) -> None:
    legacy = {"admin": "admin", "maintain": "write", "write": "write"}.get(role, "read")
    answer = fixture("collaborator_permission.json")
    answer.update(permission=legacy, role_name=role)
    answer["user"].update(login=login, role_name=role)
    api.get(f"{base}/collaborators/{login}/permission", json=answer)


def test_the_sticky_comment_is_the_bots_with_the_marker(api: responses.RequestsMock) -> None:
    comments(api)

    comment = client().sticky_comment(12, MARKER)

    assert comment == StickyComment(
        id=BOT_COMMENT_ID,
        node_id="IC_kwDOABPHjc5xQnAi",
        body=fixture("issue_comments_sticky.json")[1]["body"],
        author_login="github-actions[bot]",
        created_at=datetime(2026, 11, 27, 10, 6, 12, tzinfo=UTC),
        updated_at=datetime(2026, 11, 28, 9, 30, 45, tzinfo=UTC),
    )
    assert client().sticky_comment(12, comment_marker("other")) is None


def test_a_comment_edited_only_by_the_bot_is_trusted(api: responses.RequestsMock) -> None:
    comments(api)
    graphql(api, edits(("Bot", "github-actions")))

    trusted = client().trusted_comment(12, MARKER)
    comment, reason = trusted.comment, trusted.reason

    assert comment is not None
    assert comment.id == BOT_COMMENT_ID
    assert reason == f"comment {BOT_COMMENT_ID} on #12 has no edits but this agent's"
    assert [c.request.method for c in api.calls] == ["GET", "POST"]  # no permission asked


def test_the_graphql_query_asks_for_the_comments_edit_history(
    api: responses.RequestsMock,
) -> None:
    comments(api)
    graphql(api, edits())

    client().trusted_comment(12, MARKER)

    request = api.calls[1].request
    sent = json.loads(request.body or "{}")
    assert sent["variables"] == {"id": "IC_kwDOABPHjc5xQnAi", "edits": 100}
    assert "node(id: $id)" in sent["query"]
    assert "userContentEdits(first: $edits)" in sent["query"]
    assert request.headers["Authorization"] == f"token {TOKEN}"


def test_a_comment_ticked_by_a_maintainer_is_trusted(api: responses.RequestsMock) -> None:
    comments(api)
    graphql(api, fixture("graphql_comment_edits.json"))  # hubot ticked a box
    permission(api, "hubot", "maintain")

    trusted = client().trusted_comment(12, MARKER)
    comment, reason = trusted.comment, trusted.reason

    assert comment is not None
    assert reason == f"comment {BOT_COMMENT_ID} on #12 was edited by hubot, with write access"


@pytest.mark.parametrize("role", ["read", "triage"])
def test_a_comment_edited_without_write_access_is_ignored(
    api: responses.RequestsMock, role: str
) -> None:
    comments(api)
    graphql(api, edits(("User", "hubot"), ("User", "mallory"), ("Bot", "github-actions")))
    permission(api, "hubot", "write")
    permission(api, "mallory", role)

    trusted = client().trusted_comment(12, MARKER)
    comment, reason = trusted.comment, trusted.reason

    assert comment is None
    assert reason == (
        f"ignored comment {BOT_COMMENT_ID} on #12: edited by mallory, "
        f"who has no write access (permission read, role {role})"
    )


def test_a_history_longer_than_one_page_is_ignored(api: responses.RequestsMock) -> None:
    comments(api)
    graphql(api, edits(("Bot", "github-actions"), total=101))

    trusted = client().trusted_comment(12, MARKER)
    comment, reason = trusted.comment, trusted.reason

    assert comment is None
    assert reason.endswith("it has 101 edits, more than can be checked")


def test_a_graphql_error_leaves_the_comment_ignored(api: responses.RequestsMock) -> None:
    comments(api)
    answer = {
        "data": {"node": None},
        "errors": [
            {
                "type": "FORBIDDEN",
                "path": ["node"],
                "extensions": {"saml_failure": False},
                "locations": [{"line": 3, "column": 3}],
                "message": "Resource not accessible by integration",
            }
        ],
    }
    graphql(api, answer)

    trusted = client().trusted_comment(12, MARKER)
    comment, reason = trusted.comment, trusted.reason

    assert comment is None
    assert reason == (
        f"ignored comment {BOT_COMMENT_ID} on #12: GitHub did not answer for its edit history "
        "(Resource not accessible by integration)"
    )


def test_a_failed_graphql_request_leaves_the_comment_ignored(
    api: responses.RequestsMock,
) -> None:
    comments(api)
    graphql(api, {"message": f"Bad credentials {TOKEN}"}, status=401)

    trusted = client().trusted_comment(12, MARKER)
    comment, reason = trusted.comment, trusted.reason

    assert comment is None
    assert reason.endswith("reading its edit history failed: HTTP 401 Bad credentials ***")


@pytest.mark.parametrize(
    ("node", "why"),
    [
        ({"body": "<!-- memory-agent:sticky agent=reviewer -->\n- [x] more"}, "it changed while"),
        ({"author": {"__typename": "User", "login": "mallory"}}, "its author is not"),
        ({"__typename": "PullRequestReviewComment"}, "knows no such comment"),
    ],
)
def test_an_answer_that_does_not_match_the_comment_is_ignored(
    api: responses.RequestsMock, node: dict[str, Any], why: str
) -> None:
    comments(api)
    graphql(api, edits(**node))

    trusted = client().trusted_comment(12, MARKER)
    comment, reason = trusted.comment, trusted.reason

    assert comment is None
    assert why in reason


def test_an_edit_by_a_deleted_account_is_ignored(api: responses.RequestsMock) -> None:
    comments(api)
    answer = edits(("User", "hubot"))
    answer["data"]["node"]["userContentEdits"]["nodes"][0]["editor"] = None
    graphql(api, answer)

    assert client().trusted_comment(12, MARKER) == TrustedComment(
        comment=None,
        reason=f"ignored comment {BOT_COMMENT_ID} on #12: an edit was made by a deleted account",
    )


def test_whoever_deleted_an_edit_must_have_write_access(api: responses.RequestsMock) -> None:
    comments(api)
    answer = edits(("Bot", "github-actions"))
    answer["data"]["node"]["userContentEdits"]["nodes"][0]["deletedBy"] = {
        "__typename": "User",
        "login": "mallory",
    }
    graphql(api, answer)
    permission(api, "mallory", "triage")

    github = client()
    comment = github.sticky_comment(12, MARKER)
    assert comment is not None
    assert github.comment_editors(comment) == ["github-actions[bot]", "mallory"]
    assert github.trusted_comment(12, MARKER).comment is None


def test_comment_editors_is_none_when_github_cannot_tell(api: responses.RequestsMock) -> None:
    comments(api)
    graphql(api, {"message": "Server Error"}, status=502)

    github = client()
    comment = github.sticky_comment(12, MARKER)
    assert comment is not None
    assert github.comment_editors(comment) is None


def test_no_comment_is_nothing_to_trust(api: responses.RequestsMock) -> None:
    api.get(f"{REPO}/issues/12/comments", json=fixture("issue_comments_sticky.json")[:1])

    assert client().trusted_comment(12, MARKER) == TrustedComment(
        comment=None, reason="#12 has no comment of this agent"
    )


def test_comments_that_cannot_be_listed_are_not_trusted(api: responses.RequestsMock) -> None:
    api.get(f"{REPO}/issues/12/comments", status=403, json={"message": "Forbidden"})

    assert client().trusted_comment(12, MARKER) == TrustedComment(
        comment=None, reason="ignored: listing comments of #12 failed: HTTP 403 Forbidden"
    )


# --- permission ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "expected"),
    [("admin", True), ("maintain", True), ("write", True), ("triage", False), ("read", False)],
)
def test_write_access_follows_the_role(
    api: responses.RequestsMock, role: str, expected: bool
) -> None:
    permission(api, "hubot", role)

    assert client().has_write_access("hubot") is expected


def test_a_custom_role_based_on_write_has_write_access(api: responses.RequestsMock) -> None:
    answer = fixture("collaborator_permission.json")
    answer.update(permission="write", role_name="release-manager")
    api.get(f"{REPO}/collaborators/hubot/permission", json=answer)

    assert client().has_write_access("hubot")


@pytest.mark.parametrize("status", [403, 404])
def test_an_unknown_permission_is_no_write_access(api: responses.RequestsMock, status: int) -> None:
    message = "Not Found" if status == 404 else "Resource not accessible by integration"
    api.get(f"{REPO}/collaborators/ghost-user/permission", status=status, json={"message": message})

    assert client().has_write_access("ghost-user") is False


def test_a_permission_404_leaves_the_comment_ignored(api: responses.RequestsMock) -> None:
    comments(api)
    graphql(api, edits(("User", "gone-user")))
    api.get(f"{REPO}/collaborators/gone-user/permission", status=404, json={"message": "Not Found"})

    trusted = client().trusted_comment(12, MARKER)
    comment, reason = trusted.comment, trusted.reason

    assert comment is None
    assert reason == (
        f"ignored comment {BOT_COMMENT_ID} on #12: edited by gone-user, whose permission GitHub "
        "did not tell (reading the permission of gone-user failed: HTTP 404 Not Found)"
    )


@pytest.mark.parametrize("bot", ["github-actions[bot]", "renovate[bot]"])
def test_a_bot_is_asked_like_anyone(api: responses.RequestsMock, bot: str) -> None:
    # Every workflow of the repository writes as github-actions[bot], not only this one.
    quoted = bot.replace("[", "%5B").replace("]", "%5D")
    api.get(f"{REPO}/collaborators/{quoted}/permission", status=404, json={"message": "Not Found"})

    assert client().has_write_access(bot) is False


def test_a_permission_is_asked_once_per_person(api: responses.RequestsMock) -> None:
    permission(api, "hubot", "write")
    github = client()

    assert github.has_write_access("hubot")
    assert github.write_access("hubot")[0]
    assert len(api.calls) == 1


# --- GitHub Enterprise Server -------------------------------------------------------------------


def test_an_enterprise_server_posts_graphql_to_api_graphql(api: responses.RequestsMock) -> None:
    server = "https://github.example.test:443"
    base = f"{server}/api/v3/repos/octo-org/octo-repo"
    comments(api, base)
    graphql(api, fixture("graphql_comment_edits.json"), url=f"{server}/api/graphql")
    permission(api, "hubot", "write", base)

    comment = client("https://github.example.test/api/v3/").trusted_comment(12, MARKER).comment

    assert comment is not None
    assert [c.request.url for c in api.calls][1] == f"{server}/api/graphql"
