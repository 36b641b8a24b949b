"""GitHubClient's pull request reviews against the GitHub fake, through PyGithub as it really
calls the API: posting inline comments in batches, reading feedback (paged review comments,
reactions, replies, GraphQL review threads) and comparing commits."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import requests

from memory_action.errors import GitHubError
from memory_action.evaluation.github import contract as github_contract
from memory_action.evaluation.github.reviews import (
    NOT_IN_DIFF,
    START_NOT_IN_HUNK,
    SUGGESTION_ON_LEFT,
    Comparison,
)
from memory_action.github.client import GitHubClient
from memory_action.github.pull_request import CommentPermissionError
from memory_action.github.reviews import REVIEW_BATCH, InlineComment
from memory_action.review.anchors import anchor
from memory_action.review.findings import Finding
from memory_action.safety.outgoing import gate
from tests.fakes.github_api import (
    API_URL,
    BOT_LOGIN,
    HEAD_SHA,
    REPOSITORY,
    FakeGitHub,
    FakePullRequest,
    changed_file,
)

NUMBER = 7
# 200 added lines in one hunk: room for many comments.
BIG_PATCH = "@@ -0,0 +1,200 @@\n" + "".join(f"+line {n}\n" for n in range(1, 201))
SMALL_PATCH = "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -20,2 +20,3 @@\n t\n+u\n v\n"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()
    fake.add_pull(
        FakePullRequest(
            number=NUMBER,
            files=[
                changed_file("src/big.py", BIG_PATCH),
                changed_file("src/small.py", SMALL_PATCH),
            ],
        )
    )
    with fake.serve():
        yield fake


def client() -> GitHubClient:
    return GitHubClient("ghs_token", API_URL, REPOSITORY, retries=0)


def inline(
    line: int, path: str = "src/big.py", body: str = "", side: str = "RIGHT"
) -> InlineComment:
    return InlineComment(
        path=path,
        line=line,
        side=side,
        start_line=None,
        start_side=None,
        body=gate(body or f"about line {line}"),
    )


class Pauses(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


# -- posting -------------------------------------------------------------------------------------


def test_a_review_is_one_comment_review_on_the_reviewed_commit(github: FakeGitHub) -> None:
    pauses = Pauses()
    posted = client().post_review(
        NUMBER, HEAD_SHA, gate("Summary"), [inline(3), inline(9)], pause=pauses
    )
    [review] = github.reviews.reviews[NUMBER]
    assert (review["state"], review["commit_id"], review["body"]) == (
        "COMMENTED",
        HEAD_SHA,
        "Summary",
    )
    assert posted.urls == (review["html_url"],)
    made = github.reviews.posted(NUMBER)
    assert posted.comment_ids == tuple(c["id"] for c in made)
    assert [(c["path"], c["line"], c["side"]) for c in made] == [
        ("src/big.py", 3, "RIGHT"),
        ("src/big.py", 9, "RIGHT"),
    ]
    assert pauses == []
    assert len(github.calls) == 2  # the review, and its comments listed back


def test_a_large_review_is_split_into_batches_with_pauses(github: FakeGitHub) -> None:
    pauses = Pauses()
    comments = [inline(n) for n in range(1, 2 * REVIEW_BATCH + 6)]  # 65: three reviews
    github.max_per_page = 20  # the comments of a review come back on two pages
    posted = client().post_review(NUMBER, HEAD_SHA, gate("Summary"), comments, pause=pauses)
    reviews = github.reviews.reviews[NUMBER]
    assert [
        len([c for c in github.reviews.posted(NUMBER) if c["pull_request_review_id"] == r["id"]])
        for r in reviews
    ] == [30, 30, 5]
    assert reviews[0]["body"] == "Summary"
    assert reviews[2]["body"] == "Inline comments of this review, continued (3 of 3)."
    assert pauses == [2.0, 2.0]
    assert len(posted.urls) == 3
    assert posted.comment_ids == tuple(c["id"] for c in github.reviews.posted(NUMBER))
    assert None not in posted.comment_ids
    review_posts = [c for c in github.calls if c[0] == "POST" and c[1].endswith("/reviews")]
    assert len(review_posts) == 3
    # 3 reviews + their comments listed back (2 pages, 2 pages, 1 page)
    assert len(github.calls) == 3 + 5


def test_a_body_without_comments_is_one_review(github: FakeGitHub) -> None:
    posted = client().post_review(NUMBER, HEAD_SHA, gate("Nothing inline."), [], pause=Pauses())
    assert len(posted.urls) == 1
    assert posted.comment_ids == ()
    assert github.reviews.posted(NUMBER) == []


def test_nothing_to_say_posts_nothing(github: FakeGitHub) -> None:
    posted = client().post_review(NUMBER, HEAD_SHA, gate("  "), [], pause=Pauses())
    assert posted.urls == ()
    assert github.calls == []


def test_a_rejected_review_is_one_line_naming_it(github: FakeGitHub) -> None:
    with pytest.raises(GitHubError) as caught:
        client().post_review(
            NUMBER, HEAD_SHA, gate("S"), [inline(150, "src/small.py")], pause=Pauses()
        )
    message = str(caught.value)
    assert message.startswith("posting review 1 of 1 on #7 failed: HTTP 422")
    assert "\n" not in message
    assert github.reviews.reviews.get(NUMBER) is None


def test_a_read_only_token_cannot_review(github: FakeGitHub) -> None:
    github.read_only = True
    with pytest.raises(CommentPermissionError, match="pull-requests: write"):
        client().post_review(NUMBER, HEAD_SHA, gate("S"), [inline(1)], pause=Pauses())


# -- the fake validates anchors as GitHub does ---------------------------------------------------


REJECTED = [
    pytest.param({"path": "src/small.py", "line": 10, "side": "RIGHT"}, NOT_IN_DIFF, id="outside"),
    pytest.param(
        {"path": "src/small.py", "line": 2, "side": "LEFT", "body": "```suggestion\nx\n```"},
        SUGGESTION_ON_LEFT,
        id="suggestion-left",
    ),
    pytest.param(
        {
            "path": "src/small.py",
            "line": 21,
            "side": "RIGHT",
            "start_line": 2,
            "start_side": "RIGHT",
        },
        START_NOT_IN_HUNK,
        id="start-other-hunk",
    ),
    pytest.param(
        {"path": "src/nope.py", "line": 1, "side": "RIGHT"}, "path is invalid", id="unknown-path"
    ),
]


@pytest.mark.parametrize(("entry", "says"), REJECTED)
def test_the_fake_rejects_a_bad_anchor_with_422(
    github: FakeGitHub, entry: dict[str, object], says: str
) -> None:
    good = {"path": "src/big.py", "line": 1, "side": "RIGHT", "body": "fine"}
    body = json.dumps({"event": "COMMENT", "body": "S", "comments": [good, {"body": "x", **entry}]})
    answer = requests.post(
        f"{API_URL}:443/repos/{REPOSITORY}/pulls/{NUMBER}/reviews", data=body, timeout=5
    )
    assert answer.status_code == 422
    assert says in answer.json()["errors"][0]
    assert github.reviews.reviews.get(NUMBER) is None  # all or nothing


def test_the_fake_accepts_left_on_an_unchanged_line_as_github_does(github: FakeGitHub) -> None:
    # GitHub's split view shows unchanged lines on both sides; anchor() is stricter (LEFT only
    # for deleted lines), which only ever moves a finding into the review body.
    client().post_review(
        NUMBER, HEAD_SHA, gate("S"), [inline(1, "src/small.py", side="LEFT")], pause=Pauses()
    )
    assert len(github.reviews.posted(NUMBER)) == 1


# -- feedback ------------------------------------------------------------------------------------


def _post_three(github: FakeGitHub) -> list[int]:
    findings = [Finding(path="src/big.py", line=n, title=f"T{n}", body="b") for n in (5, 6, 7)]
    comments = [
        c
        for f in findings
        if (c := anchor(f, client().pull_request(NUMBER).changed_files(), masked=()))
    ]
    posted = client().post_review(NUMBER, HEAD_SHA, gate("S"), comments, pause=Pauses())
    return [i for i in posted.comment_ids if i is not None]


def test_feedback_reads_reactions_replies_and_threads_over_many_pages(github: FakeGitHub) -> None:
    first, second, third = _post_three(github)
    github.reviews.react(first, "mona", "-1")
    github.reviews.react(first, "hubot", "+1")
    github.reviews.react(first, "octocat", "laugh")
    reply = github.reviews.reply(NUMBER, first, "mona", "Intended, because the caller retries.")
    github.reviews.resolve(second)
    github.reviews.outdate(third)
    for n in range(12):  # someone else's review comments: more pages, none of them ours
        github.reviews.reply(NUMBER, second, "hubot", f"note {n}")
    github.max_per_page = 5
    github.calls.clear()
    feedback = client().review_feedback(NUMBER)
    assert [f.id for f in feedback] == [first, second, third]
    one, two, three = feedback
    assert (one.thumbs_up, one.thumbs_down) == (1, 1)
    assert {(r.content, r.login) for r in one.reactions} == {("-1", "mona"), ("+1", "hubot")}
    assert [(r.id, r.login, r.body) for r in one.replies] == [
        (reply, "mona", "Intended, because the caller retries.")
    ]
    assert one.replies[0].author_association == "MEMBER"
    assert (one.resolved, one.outdated) == (False, False)
    assert (two.resolved, two.outdated, len(two.replies)) == (True, False, 12)
    assert (three.resolved, three.outdated, three.line) == (False, True, None)
    assert (two.reactions, two.thumbs_down) == ((), 0)
    listed = [
        url
        for method, url in github.calls
        if url.split("?")[0].endswith(f"/pulls/{NUMBER}/comments")
    ]
    assert len(listed) == 4  # 3 + 12 comments, five a page
    reaction_reads = [url for _, url in github.calls if "/reactions" in url]
    assert len(reaction_reads) == 1  # only the comment with a thumb


def test_feedback_pages_through_review_threads(github: FakeGitHub) -> None:
    comments = [inline(n) for n in range(1, 121)]
    ids = client().post_review(NUMBER, HEAD_SHA, gate("S"), comments, pause=Pauses()).comment_ids
    last = ids[-1]
    assert last is not None
    github.reviews.resolve(last)  # on the second page of threads (100 a page)
    feedback = client().review_feedback(NUMBER)
    assert len(feedback) == 120
    assert [f.resolved for f in feedback].count(True) == 1
    assert feedback[-1].resolved is True
    threads = [c for c in github.calls if c[1].endswith("/graphql")]
    assert len(threads) == 2 + 1  # two pages, and the identity asked once


def test_feedback_without_graphql_says_it_does_not_know(github: FakeGitHub) -> None:
    _post_three(github)
    github.reviews.threads_fail = True
    feedback = client().review_feedback(NUMBER)
    assert [(f.resolved, f.outdated) for f in feedback] == [(None, None)] * 3


def test_feedback_ignores_other_peoples_threads(github: FakeGitHub) -> None:
    github.viewer = "mona"
    client().post_review(NUMBER, HEAD_SHA, gate("S"), [inline(4)], pause=Pauses())
    github.viewer = BOT_LOGIN
    assert client().review_feedback(NUMBER) == []


def test_feedback_of_a_pull_request_without_review_comments(github: FakeGitHub) -> None:
    assert client().review_feedback(NUMBER) == []
    assert not [c for c in github.calls if c[1].endswith("/graphql")]


# -- compare -------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["ahead", "behind", "diverged", "identical"])
def test_compare_gives_the_status_and_the_files(github: FakeGitHub, status: str) -> None:
    files = [changed_file("src/small.py", SMALL_PATCH)]
    github.reviews.compare_as(
        "a" * 40, "b" * 40, Comparison(status=status, files=files, ahead_by=2, behind_by=1)
    )
    found = client().compare("a" * 40, "b" * 40)
    assert found is not None
    assert (found.status, found.ahead_by, found.behind_by) == (status, 2, 1)
    assert [(f.path, f.patch) for f in found.files] == [("src/small.py", SMALL_PATCH)]


def test_compare_with_a_commit_gone_after_a_force_push_is_none(github: FakeGitHub) -> None:
    assert client().compare("c" * 40, "d" * 40) is None


def test_compare_with_an_unknown_status_is_an_error(github: FakeGitHub) -> None:
    """A status GitHub's description does not list (a future one): the fake's answer breaks the
    contract on purpose, and the contract check says so."""
    github.reviews.compare_as("a" * 40, "b" * 40, Comparison(status="sideways", files=[]))
    with pytest.raises(GitHubError, match="unknown status 'sideways'"):
        client().compare("a" * 40, "b" * 40)
    assert [p for p in github_contract.take() if "'sideways' is not one of" in p]
