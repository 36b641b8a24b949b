"""Pull request reviews: post inline comments, read what people made of them, compare commits.

- ``post_review`` posts the findings that have a valid anchor (``review.anchors``) as one
  pull request review with ``event: COMMENT`` (never ``APPROVE`` or ``REQUEST_CHANGES``: the bot
  only comments), pinned to the commit the run reviewed. A large review is split into several
  reviews of at most ``REVIEW_BATCH`` comments with a pause between them: each comment notifies
  people, and GitHub's secondary rate limits allow about 80 content-creating requests a minute
  and 500 an hour. GitHub rejects a review with one bad anchor as a whole (422) without saying
  which: anchors are checked before, so a 422 is a bug, reported as a ``GitHubError``.
- ``review_feedback`` reads the bot's own inline comments (``GitHubClient.identity`` wrote them):
  their 👍/👎 (counts are on the comment objects; there is no event for reactions, and who
  reacted is asked only for a comment that has any), the replies people wrote, and from GraphQL
  ``reviewThreads`` whether each thread is resolved or outdated. Resolving a thread needs more
  than the workflow token, so the bot never tries; it only reads.
- ``compare`` says how two commits relate (``ahead``, ``behind``, ``diverged``, ``identical``)
  and which files changed between them, for a review of what changed since the last one.

``GitHubClient`` exposes these as methods; the functions here take its ``RepositoryApi`` first.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from github import GithubException
from github.PullRequest import ReviewComment
from github.PullRequestComment import PullRequestComment

from memory_action.errors import GitHubError
from memory_action.github.api import RepositoryApi, changed_file
from memory_action.github.pull_request import Side
from memory_action.safety.outgoing import SafeText

if TYPE_CHECKING:
    from memory_action.github.pull_request import ChangedFile

REVIEW_BATCH = 30  # inline comments per review
BATCH_PAUSE_SECONDS = 2.0  # between two reviews of one run: far under 80 creations a minute
REVIEW_EVENT = "COMMENT"  # the only event the bot sends
THREADS_PAGE = 100  # GraphQL's largest page
COMPARE_STATUSES = frozenset({"ahead", "behind", "diverged", "identical"})
_REACTIONS_READ = ("+1", "-1")

_REVIEW_THREADS = """
query ReviewThreads($owner: String!, $name: String!, $number: Int!, $first: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: $first, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes { isResolved isOutdated comments(first: 1) { nodes { databaseId } } }
      }
    }
  }
}
"""


@dataclass(frozen=True, kw_only=True)
class InlineComment:
    """One entry of ``comments[]`` of "Create a review for a pull request" (``review.anchors``
    decides where a finding may go)."""

    path: str
    line: int
    side: Side
    start_line: int | None
    start_side: Side | None
    body: SafeText


@dataclass(frozen=True, kw_only=True)
class PostedReview:
    """What ``post_review`` created: one URL per review, one comment id per inline comment
    given (in the same order; None when GitHub did not list it back)."""

    urls: tuple[str, ...]
    comment_ids: tuple[int | None, ...]


@dataclass(frozen=True, kw_only=True)
class Reaction:
    content: str  # "+1" | "-1"
    login: str


@dataclass(frozen=True, kw_only=True)
class Reply:
    id: int
    login: str
    author_association: str  # as GitHub gives it (OWNER, MEMBER, COLLABORATOR, NONE, ...)
    body: str


@dataclass(frozen=True, kw_only=True)
class CommentFeedback:
    """One inline comment of the bot and what people made of it."""

    id: int
    path: str
    line: int | None  # None once the line is gone from the diff
    side: str
    body: str
    url: str
    thumbs_up: int
    thumbs_down: int
    reactions: tuple[Reaction, ...]  # who gave 👍 or 👎
    replies: tuple[Reply, ...]  # oldest first
    resolved: bool | None  # None: GitHub did not say (GraphQL failed or the thread is unlisted)
    outdated: bool | None


@dataclass(frozen=True, kw_only=True)
class Comparison:
    status: str  # ahead | behind | diverged | identical
    ahead_by: int
    behind_by: int
    files: tuple[ChangedFile, ...]


# --- posting ------------------------------------------------------------------------------------


def post_review(
    github: RepositoryApi,
    pr_number: int,
    commit_id: str,
    body: SafeText,
    comments: Sequence[InlineComment],
    *,
    pause: Callable[[float], None] = time.sleep,
) -> PostedReview:
    """Post ``comments`` as reviews of at most ``REVIEW_BATCH`` comments (see the module
    docstring); nothing when there is neither a body nor a comment.

    ``CommentPermissionError`` when the token may not review (a fork's read-only token),
    ``GitHubError`` for any other failure; batches posted before a failure stay posted.
    """
    batches = [list(comments[i : i + REVIEW_BATCH]) for i in range(0, len(comments), REVIEW_BATCH)]
    if not batches and not body.text.strip():
        return PostedReview(urls=(), comment_ids=())
    pull = github.repository.get_pull(pr_number)
    commit = github.repository.get_commit(commit_id)  # lazy: nothing is fetched
    urls: list[str] = []
    ids: list[int | None] = []
    for number, batch in enumerate(batches or [[]], start=1):
        if number > 1:
            pause(BATCH_PAUSE_SECONDS)
        action = f"posting review {number} of {len(batches) or 1} on #{pr_number}"
        with github.api(action, write=True):
            review = pull.create_review(
                commit=commit,
                body=_batch_body(body.text, number, len(batches)),
                event=REVIEW_EVENT,
                comments=[_review_comment(comment) for comment in batch],
            )
        urls.append(review.html_url)
        if batch:
            with github.api(f"listing the comments of review {review.id} on #{pr_number}"):
                listed = list(pull.get_single_review_comments(review.id))
            ids += _match_ids(batch, listed)
    return PostedReview(urls=tuple(urls), comment_ids=tuple(ids))


def _review_comment(comment: InlineComment) -> ReviewComment:
    """The entry of ``comments[]`` GitHub takes (``start_*`` only for a range)."""
    entry = ReviewComment(
        path=comment.path, line=comment.line, side=comment.side, body=comment.body.text
    )
    if comment.start_line is not None and comment.start_side is not None:
        entry["start_line"] = comment.start_line
        entry["start_side"] = comment.start_side
    return entry


def _batch_body(body: str, number: int, total: int) -> str:
    """The first review carries the body; later ones say which part of the review they are."""
    if number == 1:
        return body.strip() or "Inline comments of this review."
    return f"Inline comments of this review, continued ({number} of {total})."


def _match_ids(
    batch: Sequence[InlineComment], listed: Iterable[PullRequestComment]
) -> list[int | None]:
    """The id GitHub gave each comment of ``batch``, matched by where it is and what it says."""
    found: dict[tuple[str, int | None, str], list[int]] = {}
    for created in listed:
        found.setdefault((created.path, created.line, created.body), []).append(created.id)
    ids: list[int | None] = []
    for comment in batch:
        same = found.get((comment.path, comment.line, comment.body.text))
        ids.append(same.pop(0) if same else None)
    return ids


# --- reading feedback ---------------------------------------------------------------------------


def review_feedback(
    github: RepositoryApi, pr_number: int, identity: Callable[[], str]
) -> list[CommentFeedback]:
    """The inline comments the bot wrote on the pull request, oldest first, with their feedback.
    ``identity`` is the bot's login, asked only when there is a comment to tell by it."""
    with github.api(f"listing the review comments of #{pr_number}"):
        comments = list(github.repository.get_pull(pr_number).get_review_comments())
    ours = [
        c
        for c in comments
        if c.in_reply_to_id is None and c.user is not None and c.user.login == identity()
    ]
    replies: dict[int, list[Reply]] = {}
    for comment in comments:
        if comment.in_reply_to_id is not None and comment.user is not None:
            replies.setdefault(comment.in_reply_to_id, []).append(
                Reply(
                    id=comment.id,
                    login=comment.user.login,
                    author_association=comment.author_association or "NONE",
                    body=comment.body or "",
                )
            )
    threads = _thread_states(github, pr_number) if ours else {}
    return [_feedback(github, c, replies.get(c.id, []), threads.get(c.id)) for c in ours]


def _feedback(
    github: RepositoryApi,
    comment: PullRequestComment,
    replies: list[Reply],
    thread: tuple[bool, bool] | None,
) -> CommentFeedback:
    counts = comment.reactions or {}
    up, down = _count(counts, "+1"), _count(counts, "-1")
    return CommentFeedback(
        id=comment.id,
        path=comment.path,
        line=comment.line,
        side=comment.side or "RIGHT",
        body=comment.body or "",
        url=comment.html_url,
        thumbs_up=up,
        thumbs_down=down,
        reactions=_who_reacted(github, comment) if up or down else (),
        replies=tuple(replies),
        resolved=thread[0] if thread else None,
        outdated=thread[1] if thread else None,
    )


def _count(counts: Any, content: str) -> int:
    value = counts.get(content) if isinstance(counts, dict) else None
    return value if isinstance(value, int) and value > 0 else 0


def _who_reacted(github: RepositoryApi, comment: PullRequestComment) -> tuple[Reaction, ...]:
    with github.api(f"listing the reactions to review comment {comment.id}"):
        return tuple(
            Reaction(content=r.content, login=r.user.login)
            for r in comment.get_reactions()
            if r.content in _REACTIONS_READ and r.user is not None
        )


def _thread_states(github: RepositoryApi, pr_number: int) -> dict[int, tuple[bool, bool]]:
    """First comment's id → (resolved, outdated), every page; {} when GraphQL does not answer
    (feedback is a hint: its absence must not fail the run)."""
    owner, _, name = github.repository.full_name.partition("/")
    requester = github.repository.requester
    states: dict[int, tuple[bool, bool]] = {}
    after: str | None = None
    try:
        while True:
            variables = {
                "owner": owner,
                "name": name,
                "number": pr_number,
                "first": THREADS_PAGE,
                "after": after,
            }
            with github.api(f"reading the review threads of #{pr_number}"):
                _, answer = requester.requestJsonAndCheck(
                    "POST",
                    requester.graphql_url,
                    input={"query": _REVIEW_THREADS, "variables": variables},
                )
            threads = answer["data"]["repository"]["pullRequest"]["reviewThreads"]
            for node in threads["nodes"]:
                first = node["comments"]["nodes"]
                if first and isinstance(first[0].get("databaseId"), int):
                    states[first[0]["databaseId"]] = (
                        bool(node["isResolved"]),
                        bool(node["isOutdated"]),
                    )
            if not threads["pageInfo"]["hasNextPage"]:
                return states
            after = threads["pageInfo"]["endCursor"]
    except (GitHubError, KeyError, TypeError, AttributeError):
        return states


# --- comparing commits --------------------------------------------------------------------------


def compare(github: RepositoryApi, base: str, head: str) -> Comparison | None:
    """How ``head`` relates to ``base`` and the files changed between them (GitHub lists at
    most 300); None when GitHub does not know one of them (a commit gone after a force push)."""
    with github.api(f"comparing {base[:7]}...{head[:7]}"):
        try:
            found = github.repository.compare(base, head)
            status = found.status
            files = tuple(changed_file(f) for f in found.files)
        except GithubException as exc:
            if exc.status in (404, 422):  # an unknown commit, or no common history
                return None
            raise
    if status not in COMPARE_STATUSES:
        raise GitHubError(f"comparing {base[:7]}...{head[:7]}: unknown status {status!r}")
    return Comparison(
        status=status, ahead_by=found.ahead_by, behind_by=found.behind_by, files=files
    )
