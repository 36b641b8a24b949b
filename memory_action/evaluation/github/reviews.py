"""Pull request reviews in the GitHub fake: anchors validated as GitHub does, review comments,
reactions, replies, GraphQL ``reviewThreads`` and commit comparisons.

``POST /pulls/{n}/reviews`` checks every comment before it creates anything, and answers one bad
anchor with 422 for the whole review without saying which comment (GitHub's messages):

- a path the pull request does not change, or one without a patch (binary, too large);
- ``line`` not part of the diff on ``side``: RIGHT holds the added and the unchanged lines (new
  file numbers), LEFT the deleted and the unchanged ones (old file numbers), as in GitHub's
  split view;
- ``start_line`` not on ``start_side`` in the same hunk as ``line``, or not before it;
- a ```` ```suggestion ```` block on a LEFT line (it replaces lines of the new file).

It is written from GitHub's rules, not from ``memory_action.review.anchors``: a test that posts
what ``anchor()`` returns checks one against the other. Lists page as GitHub pages them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from memory_action.evaluation.github.contract import documented
from memory_action.evaluation.github.wire import (
    ApiRequest,
    Host,
    Reply,
    error_reply,
    json_reply,
)

COMPARE = "/repos/{owner}/{repo}/compare/{basehead}"
# The reaction-rollup counts GitHub sends on every comment.
REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "eyes", "rocket")
REVIEW_EVENTS = ("APPROVE", "REQUEST_CHANGES", "COMMENT")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_SUGGESTION = re.compile(r"^\s*(`{3,}|~{3,})suggestion\b", re.M)
NOT_IN_DIFF = "Pull request review thread line must be part of the diff"
START_NOT_IN_HUNK = (
    "Pull request review thread start line must be part of the same hunk as the line."
)
START_AFTER_LINE = "Pull request review thread start line must precede the line"
PATH_INVALID = "Pull request review thread path is invalid"
HUNK_BLANK = "Pull request review thread diff hunk can't be blank"
SUGGESTION_ON_LEFT = "Suggestions can only be made on the RIGHT side of a diff"


def diff_positions(patch: str) -> dict[tuple[str, int], int]:
    """(side, line) → the index of its hunk, for every line a comment may anchor to."""
    positions: dict[tuple[str, int], int] = {}
    hunk, old, new = -1, 0, 0
    for line in patch.split("\n"):
        header = _HUNK.match(line)
        if header:
            hunk += 1
            old_start, old_count, new_start, new_count = header.groups()
            old = int(old_start) + (old_count == "0")
            new = int(new_start) + (new_count == "0")
            continue
        if hunk < 0 or line.startswith("\\"):
            continue
        kind = line[:1] or " "
        if kind in " -":
            positions[("LEFT", old)] = hunk
            old += 1
        if kind in " +":
            positions[("RIGHT", new)] = hunk
            new += 1
    return positions


@dataclass(kw_only=True)
class Comparison:
    status: str
    files: list[dict[str, Any]]
    ahead_by: int = 1
    behind_by: int = 0


@dataclass(kw_only=True)
class FakeReviews:
    """The review state of a ``FakeGitHub`` (``github.reviews``)."""

    github: Host
    reviews: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # PR → reviews
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # PR → comments
    reactions: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # comment → reactions
    threads: dict[int, dict[str, bool]] = field(default_factory=dict)  # first comment → state
    comparisons: dict[tuple[str, str], Comparison] = field(default_factory=dict)
    rejected: list[list[str]] = field(default_factory=list)  # the errors of each 422
    threads_fail: bool = False  # GraphQL answers reviewThreads with an error

    # -- what people do ---------------------------------------------------------------------------

    def reply(
        self, number: int, to: int, login: str, body: str, association: str = "MEMBER"
    ) -> int:
        """``login`` replies in the thread of comment ``to``; the reply's id."""
        parent = self._comment(to)
        reply = self._new_comment(number, parent["pull_request_review_id"], login, body)
        reply |= {k: parent[k] for k in ("path", "line", "side", "start_line", "start_side")}
        reply |= {"in_reply_to_id": to, "author_association": association}
        return int(reply["id"])

    def react(self, comment_id: int, login: str, content: str) -> None:
        comment = self._comment(comment_id)
        self.reactions.setdefault(comment_id, []).append(
            {"id": self.github.next_id, "content": content, "user": _user(login)}
        )
        counts = comment["reactions"]
        counts[content] = counts.get(content, 0) + 1
        counts["total_count"] += 1

    def resolve(self, comment_id: int) -> None:
        self.threads[comment_id]["isResolved"] = True

    def outdate(self, comment_id: int) -> None:
        self.threads[comment_id]["isOutdated"] = True
        self._comment(comment_id)["line"] = None  # GitHub's answer once the line is gone

    def compare_as(self, base: str, head: str, comparison: Comparison) -> None:
        self.comparisons[(base, head)] = comparison

    def posted(self, number: int) -> list[dict[str, Any]]:
        """The inline comments of the pull request that open a thread (not the replies)."""
        return [c for c in self.comments.get(number, []) if c["in_reply_to_id"] is None]

    # -- routes ----------------------------------------------------------------------------------

    def routes(self) -> list[tuple[str, str, Any]]:
        return [
            ("POST", r"/pulls/(\d+)/reviews", self._create_review),
            ("GET", r"/pulls/(\d+)/reviews/(\d+)/comments", self._review_comments),
            ("GET", r"/pulls/(\d+)/comments", self._pull_comments),
            ("GET", r"/pulls/comments/(\d+)/reactions", self._reactions),
            ("POST", r"/pulls/comments/(\d+)/reactions", self._create_reaction),
            ("POST", r"/pulls/(\d+)/comments/(\d+)/replies", self._create_reply),
            ("GET", r"/pulls/comments/(\d+)", self._get_comment),
            ("GET", r"/compare/([^/]+?)\.\.\.([^/]+)", self._compare),
        ]

    def _create_review(self, request: ApiRequest, number: str) -> Reply:
        if self.github.read_only:
            return error_reply(403, "Resource not accessible by integration")
        pull = self.github.pulls.get(int(number))
        if pull is None:
            return error_reply(404, "Not Found")
        data = request.json()
        errors = _review_errors(data, pull.head_sha)
        files = {f["filename"]: f.get("patch") for f in pull.files}
        errors += sorted({e for c in data.get("comments", []) for e in _anchor_errors(c, files)})
        if errors:
            self.rejected.append(errors)
            # GitHub joins the failures into one sentence and does not say which comment.
            return error_reply(422, "Unprocessable Entity", ", ".join(errors))
        review = self._store_review(int(number), data)
        return json_reply(
            documented("POST", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews", review)
        )

    def _store_review(self, number: int, data: dict[str, Any]) -> dict[str, Any]:
        self.github.next_id += 1
        review_id = self.github.next_id
        review = {
            "id": review_id,
            "node_id": f"PRR_node{review_id}",
            "user": _user(self._login()),
            "body": data.get("body") or "",
            "state": "COMMENTED" if data["event"] == "COMMENT" else data["event"],
            "commit_id": data.get("commit_id") or self.github.pulls[number].head_sha,
            "html_url": f"{self._html(number)}#pullrequestreview-{review_id}",
            "pull_request_url": f"{self.github.repo_url}/pulls/{number}",
            "submitted_at": "2026-11-29T10:00:00Z",
        }
        self.reviews.setdefault(number, []).append(review)
        for entry in data.get("comments", []):
            comment = self._new_comment(number, review_id, self._login(), entry["body"])
            comment |= {
                "path": entry["path"],
                "line": entry["line"],
                "side": entry.get("side", "RIGHT"),
                "start_line": entry.get("start_line"),
                "start_side": entry.get("start_side"),
                "commit_id": review["commit_id"],
            }
            self.threads[comment["id"]] = {"isResolved": False, "isOutdated": False}
        return review

    def _new_comment(self, number: int, review_id: int, login: str, body: str) -> dict[str, Any]:
        self.github.next_id += 1
        comment_id = self.github.next_id
        comment: dict[str, Any] = {
            "id": comment_id,
            "node_id": f"PRRC_node{comment_id}",
            "pull_request_review_id": review_id,
            "url": f"{self.github.repo_url}/pulls/comments/{comment_id}",
            "html_url": f"{self._html(number)}#discussion_r{comment_id}",
            "pull_request_url": f"{self.github.repo_url}/pulls/{number}",
            "body": body,
            "user": _user(login),
            "author_association": "NONE" if login.endswith("[bot]") else "MEMBER",
            "in_reply_to_id": None,
            "path": "",
            "line": None,
            "side": "RIGHT",
            "start_line": None,
            "start_side": None,
            "subject_type": "line",
            "created_at": "2026-11-29T10:00:00Z",
            "updated_at": "2026-11-29T10:00:00Z",
            "reactions": {
                "url": f"{self.github.repo_url}/pulls/comments/{comment_id}/reactions",
                "total_count": 0,
                **dict.fromkeys(REACTIONS, 0),
            },
        }
        self.comments.setdefault(number, []).append(comment)
        return comment

    def _review_comments(self, request: ApiRequest, number: str, review_id: str) -> Reply:
        found = self.comments.get(int(number), [])
        mine = [c for c in found if c["pull_request_review_id"] == int(review_id)]
        template = "/repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/comments"
        return self.github.page(request, documented("GET", template, [_wire(c) for c in mine]))

    def _pull_comments(self, request: ApiRequest, number: str) -> Reply:
        comments = self.comments.get(int(number), [])
        return self.github.page(
            request,
            documented(
                "GET",
                "/repos/{owner}/{repo}/pulls/{pull_number}/comments",
                [_wire(c) for c in comments],
            ),
        )

    def _get_comment(self, _request: ApiRequest, comment_id: str) -> Reply:
        try:
            comment = self._comment(int(comment_id))
            return json_reply(
                documented(
                    "GET", "/repos/{owner}/{repo}/pulls/comments/{comment_id}", _wire(comment)
                )
            )
        except KeyError:
            return error_reply(404, "Not Found")

    def _create_reaction(self, request: ApiRequest, comment_id: str) -> Reply:
        if self.github.read_only:
            return error_reply(403, "Resource not accessible by integration")
        try:
            self.react(int(comment_id), self._login(), request.json()["content"])
        except KeyError:
            return error_reply(404, "Not Found")
        reaction = self.reactions[int(comment_id)][-1]
        template = "/repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions"
        return json_reply(documented("POST", template, reaction, 201), status=201)

    def _create_reply(self, request: ApiRequest, number: str, comment_id: str) -> Reply:
        """A reply in the thread of ``comment_id``, by the token's identity."""
        if self.github.read_only:
            return error_reply(403, "Resource not accessible by integration")
        try:
            reply = self.reply(int(number), int(comment_id), self._login(), request.json()["body"])
        except KeyError:
            return error_reply(404, "Not Found")
        template = "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies"
        return json_reply(
            documented("POST", template, _wire(self._comment(reply)), 201), status=201
        )

    def _reactions(self, request: ApiRequest, comment_id: str) -> Reply:
        reactions = self.reactions.get(int(comment_id), [])
        template = "/repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions"
        return self.github.page(request, documented("GET", template, reactions))

    def _compare(self, _request: ApiRequest, base: str, head: str) -> Reply:
        found = self.comparisons.get((base, head))
        if found is None:
            return error_reply(404, f"No commit found for SHA: {base}")
        return json_reply(
            documented(
                "GET",
                COMPARE,
                {
                    "url": f"{self.github.repo_url}/compare/{base}...{head}",
                    "html_url": f"https://github.com/{self._repo()}/compare/{base}...{head}",
                    "status": found.status,
                    "ahead_by": found.ahead_by,
                    "behind_by": found.behind_by,
                    "total_commits": found.ahead_by,
                    "commits": [],
                    "files": found.files,
                },
            )
        )

    def threads_graphql(self, query: dict[str, Any]) -> Reply:
        """``repository.pullRequest.reviewThreads``, a page of ``first`` after the cursor."""
        if self.threads_fail:
            return json_reply({"errors": [{"message": "Resource not accessible by integration"}]})
        variables = query.get("variables", {})
        first, after = int(variables["first"]), variables.get("after")
        opened = self.posted(int(variables["number"]))
        start = int(after) if after else 0
        shown = opened[start : start + first]
        nodes = [
            {
                **self.threads[c["id"]],
                "comments": {"nodes": [{"databaseId": c["id"]}]},
            }
            for c in shown
        ]
        more = start + first < len(opened)
        page = {"hasNextPage": more, "endCursor": str(start + first) if more else None}
        return json_reply(
            {
                "data": {
                    "repository": {
                        "pullRequest": {"reviewThreads": {"pageInfo": page, "nodes": nodes}}
                    }
                }
            }
        )

    # -- helpers ---------------------------------------------------------------------------------

    def _comment(self, comment_id: int) -> dict[str, Any]:
        for comments in self.comments.values():
            for comment in comments:
                if comment["id"] == comment_id:
                    return comment
        raise KeyError(comment_id)

    def _login(self) -> str:
        return self.github.viewer or "github-actions[bot]"

    def _repo(self) -> str:
        return self.github.repo_url.rsplit("/repos/", 1)[-1]

    def _html(self, number: int) -> str:
        return f"https://github.com/{self._repo()}/pull/{number}"


def _review_errors(data: dict[str, Any], head_sha: str) -> list[str]:
    """What GitHub would say about the review itself (its event, body and commit)."""
    event, body = data.get("event"), data.get("body") or ""
    if event not in REVIEW_EVENTS:
        return ["event is not included in the list"]
    if event in ("COMMENT", "REQUEST_CHANGES") and not body:
        return ["Body is required for this event"]
    if data.get("commit_id") not in (None, head_sha):
        return ["commit_id is not part of the pull request"]
    return []


def _anchor_errors(comment: dict[str, Any], files: dict[str, str | None]) -> list[str]:
    """What GitHub would say about one entry of ``comments[]`` (nothing when it is valid)."""
    path = comment.get("path")
    if path not in files:
        return [PATH_INVALID, HUNK_BLANK]
    patch = files[path]
    if not patch:
        return [HUNK_BLANK]
    positions = diff_positions(patch)
    side, line = comment.get("side", "RIGHT"), comment.get("line")
    hunk = positions.get((side, line)) if isinstance(line, int) else None
    if hunk is None:
        return [NOT_IN_DIFF]
    errors = []
    start = comment.get("start_line")
    if start is not None:
        start_side = comment.get("start_side", side)
        if positions.get((start_side, start)) != hunk:
            errors.append(START_NOT_IN_HUNK)
        elif start_side == side and start >= line:
            errors.append(START_AFTER_LINE)
    if _SUGGESTION.search(comment.get("body", "")) and (
        side == "LEFT" or comment.get("start_side") == "LEFT"
    ):
        errors.append(SUGGESTION_ON_LEFT)
    return errors


def _wire(comment: dict[str, Any]) -> dict[str, Any]:
    """A review comment as GitHub's description has it: ``in_reply_to_id`` only on a reply,
    ``line`` only while the line is in the diff (neither may be null)."""
    return {
        key: value
        for key, value in comment.items()
        if value is not None or key not in ("in_reply_to_id", "line")
    }


def _user(login: str) -> dict[str, Any]:
    bot = login.endswith("[bot]")
    return {"login": login, "id": 41898282 if bot else 1, "type": "Bot" if bot else "User"}
