"""The webhook payloads of an episode's events, as GitHub sends them to a workflow run."""

from __future__ import annotations

from typing import Any

from memory_action.evaluation.github.api import REPOSITORY, FakePullRequest


def _repository() -> dict[str, Any]:
    return {"full_name": REPOSITORY, "default_branch": "main"}


def pull_request_event(
    pull: FakePullRequest, *, action: str, association: str = "MEMBER"
) -> dict[str, Any]:
    """``pull_request`` (``opened``, ``synchronize``) for ``pull`` as the fake holds it."""
    return {
        "action": action,
        "number": pull.number,
        "pull_request": {
            "number": pull.number,
            "title": pull.title,
            "body": pull.body,
            "html_url": f"https://github.com/{REPOSITORY}/pull/{pull.number}",
            "draft": False,
            "author_association": association,
            "user": {"login": pull.author},
            "head": {
                "ref": pull.head_ref,
                "sha": pull.head_sha,
                "repo": {"full_name": pull.head_repo},
            },
            "base": {"ref": pull.base_ref, "sha": pull.base_sha, "repo": {"full_name": REPOSITORY}},
        },
        "repository": _repository(),
    }


def review_reply_event(
    pull: FakePullRequest, *, to: int, reply_id: int, login: str, body: str, association: str
) -> dict[str, Any]:
    """``pull_request_review_comment``: ``login``'s reply ``reply_id`` to review comment ``to``."""
    event = pull_request_event(pull, action="created")
    event["comment"] = {
        "id": reply_id,
        "in_reply_to_id": to,
        "body": body,
        "author_association": association,
        "user": {"login": login, "type": "User"},
    }
    return event


def issue_comment_event(
    pull: FakePullRequest, *, comment_id: int, login: str, body: str, association: str
) -> dict[str, Any]:
    """``issue_comment`` (created): ``login``'s comment ``comment_id`` on pull request ``pull``."""
    return {
        "action": "created",
        "issue": {
            "number": pull.number,
            "pull_request": {
                "url": f"https://api.github.com/repos/{REPOSITORY}/pulls/{pull.number}"
            },
            "user": {"login": pull.author},
        },
        "comment": {
            "id": comment_id,
            "html_url": f"https://github.com/{REPOSITORY}/pull/{pull.number}#issuecomment-{comment_id}",
            "body": body,
            "author_association": association,
            "user": {"login": login, "type": "User"},
        },
        "repository": _repository(),
    }


def push_event(sha: str) -> dict[str, Any]:
    """A push to main whose head commit is ``sha`` (a merge: the merged pull request is found
    through it)."""
    return {
        "ref": "refs/heads/main",
        "after": sha,
        "head_commit": {"id": sha},
        "commits": [{"id": sha}],
        "repository": _repository(),
    }


def schedule_event() -> dict[str, Any]:
    """A scheduled run (maintenance)."""
    return {"schedule": "0 3 * * *", "repository": _repository()}
