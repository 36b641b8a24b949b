"""``GITHUB_*`` variables and the event payload → one typed ``RunContext``.

The context carries the trust decision of the design's table: which runs are trusted, and which
may write memory. Untrusted input (a fork's pull request, a comment by a non-collaborator) never
writes; events whose cache token is read-only (``pull_request_target``, ``issue_comment``) cannot.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_action.errors import EventError, UnsupportedEvent


class Trust(enum.StrEnum):
    TRUSTED = "trusted"  # the run's input comes from people with write access
    UNTRUSTED = "untrusted"  # a fork, or a person without write access, shaped the input


PR_EVENTS = ("pull_request", "pull_request_target")
PR_ACTIONS = ("opened", "synchronize", "reopened", "ready_for_review")
BRANCH_EVENTS = ("push", "schedule", "workflow_dispatch", "repository_dispatch")
# Events that run in the default branch's context with a read-only cache token (2026-06-26).
READ_ONLY_CACHE_EVENTS = ("pull_request_target", "issue_comment", "workflow_run")
WRITE_ASSOCIATIONS = ("OWNER", "MEMBER", "COLLABORATOR")
SUPPORTED = (*PR_EVENTS, *BRANCH_EVENTS, "issue_comment")


@dataclass(frozen=True)
class PullRequestRef:
    number: int
    head_repo: str  # owner/name; for issue_comment unknown until the API is asked ("")
    base_ref: str  # the branch the PR merges into
    head_ref: str
    head_sha: str
    author: str
    author_association: str
    is_fork: bool


@dataclass(frozen=True)
class RunContext:
    event_name: str
    action: str  # the payload's "action" ("" when the event has none)
    repository: str  # owner/name
    server_url: str
    api_url: str
    ref: str  # GITHUB_REF: refs/heads/x, refs/pull/N/merge, refs/tags/x
    sha: str
    default_branch: str
    run_id: str
    run_attempt: str
    actor: str
    workspace: Path
    pull_request: PullRequestRef | None
    comment_body: str  # issue_comment only
    comment_author_association: str  # issue_comment only
    trust: Trust
    may_write: bool
    write_note: str  # why this run may not write ("" when it may)
    commits: tuple[str, ...] = ()  # a push's commits, head first (to find merged PRs)
    job: str = ""  # GITHUB_JOB: the job's id in the workflow (matrix legs share it)

    @property
    def branch(self) -> str | None:
        """The branch a push/schedule/dispatch run is on (None for PR, tag or detached runs)."""
        prefix = "refs/heads/"
        return self.ref[len(prefix) :] if self.ref.startswith(prefix) else None

    @property
    def on_default_branch(self) -> bool:
        return self.branch == self.default_branch

    @property
    def run_url(self) -> str:
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"

    @property
    def owner(self) -> str:
        return self.repository.partition("/")[0]


def read_event(path: str | None) -> dict[str, Any]:
    """Read the event payload; a missing or malformed file is an ``EventError``."""
    if not path:
        raise EventError("GITHUB_EVENT_PATH is not set; run inside GitHub Actions or use the CLI.")
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EventError(f"The event file {path} does not exist.") from None
    except OSError as exc:
        raise EventError(f"The event file {path} cannot be read: {exc.strerror}.") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EventError(f"The event file {path} is not valid JSON: {exc}.") from None
    if not isinstance(payload, dict):
        raise EventError(f"The event file {path} does not hold a JSON object.")
    return payload


def _get(payload: Mapping[str, Any], *path: str) -> Any:
    node: Any = payload
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            raise EventError(f"The event payload has no '{'.'.join(path)}'.")
        node = node[part]
    return node


def _text(payload: Mapping[str, Any], *path: str, default: str | None = None) -> str:
    try:
        value = _get(payload, *path)
    except EventError:
        if default is not None:
            return default
        raise
    if value is None and default is not None:
        return default
    if not isinstance(value, str | int):
        raise EventError(f"The event payload's '{'.'.join(path)}' is not text.")
    return str(value)


def _is_number(value: Any) -> bool:
    """A positive JSON integer (``true`` is an ``int`` in Python, not a number here)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _default_branch(event: str, ref: str, payload: Mapping[str, Any]) -> str:
    """The payload's default branch. A ``schedule`` payload may hold only the cron line, but
    a scheduled run always runs on the default branch, so its ref names it."""
    named = _text(payload, "repository", "default_branch", default="")
    if not named and event == "schedule" and ref.startswith("refs/heads/"):
        return ref.removeprefix("refs/heads/")
    return named or "main"


def _pull_request(payload: Mapping[str, Any]) -> PullRequestRef:
    pr = _get(payload, "pull_request")
    if not isinstance(pr, Mapping):
        raise EventError("The event payload's 'pull_request' is not an object.")
    number = _get(pr, "number")
    if not _is_number(number):
        raise EventError("The event payload's 'pull_request.number' is not a positive number.")
    head_repo = _text(pr, "head", "repo", "full_name", default="")
    base_repo = _text(pr, "base", "repo", "full_name")
    return PullRequestRef(
        number=number,
        head_repo=head_repo,
        base_ref=_text(pr, "base", "ref"),
        head_ref=_text(pr, "head", "ref"),
        head_sha=_text(pr, "head", "sha"),
        author=_text(pr, "user", "login", default=""),
        author_association=_text(pr, "author_association", default="NONE").upper(),
        # A deleted fork has no head repo: treat it as a fork, the safe side.
        is_fork=head_repo.lower() != base_repo.lower(),
    )


def _comment_pull_request(payload: Mapping[str, Any]) -> PullRequestRef:
    issue = _get(payload, "issue")
    if not isinstance(issue, Mapping) or not issue.get("pull_request"):
        raise UnsupportedEvent("issue_comment on an issue, not a pull request")
    number = _get(issue, "number")
    if not _is_number(number):
        raise EventError("The event payload's 'issue.number' is not a positive number.")
    return PullRequestRef(
        number=number,
        head_repo="",
        base_ref="",
        head_ref="",
        head_sha="",
        author=_text(issue, "user", "login", default=""),
        author_association=_text(issue, "author_association", default="NONE").upper(),
        is_fork=False,  # unknown from the payload; this event never writes anyway
    )


def _check_action(event: str, action: str) -> None:
    if event in PR_EVENTS and action not in PR_ACTIONS:
        raise UnsupportedEvent(f"{event} with action '{action}'")
    if event == "issue_comment" and action != "created":
        raise UnsupportedEvent(f"issue_comment with action '{action}'")


def _trust(
    event: str, pr: PullRequestRef | None, comment_association: str
) -> tuple[Trust, bool, str]:
    """The design's table: (trust level, may this run write memory, why not)."""
    if event == "issue_comment":
        trusted = comment_association in WRITE_ASSOCIATIONS
        trust = Trust.TRUSTED if trusted else Trust.UNTRUSTED
        return trust, False, "issue_comment runs get a read-only cache token"
    if pr is not None and (pr.is_fork or pr.author_association not in WRITE_ASSOCIATIONS):
        if event == "pull_request_target":
            return Trust.UNTRUSTED, False, "pull_request_target runs get a read-only cache token"
        who = (
            "a fork" if pr.is_fork else f"an author without write access ({pr.author_association})"
        )
        return Trust.UNTRUSTED, False, f"the pull request comes from {who}"
    if event in READ_ONLY_CACHE_EVENTS:
        return Trust.TRUSTED, False, f"{event} runs get a read-only cache token"
    return Trust.TRUSTED, True, ""


def load_context(env: Mapping[str, str], payload: Mapping[str, Any]) -> RunContext:
    """Build the context; ``UnsupportedEvent`` for events and actions the action ignores."""
    event = env.get("GITHUB_EVENT_NAME", "")
    if event not in SUPPORTED:
        raise UnsupportedEvent(f"the event '{event or 'unknown'}'")
    action = _text(payload, "action", default="")
    _check_action(event, action)
    ref = env.get("GITHUB_REF", "")
    if event in BRANCH_EVENTS and not ref.startswith("refs/heads/"):
        raise UnsupportedEvent(f"{event} on '{ref or 'no ref'}' (only branches are handled)")
    pr: PullRequestRef | None = None
    comment_body = comment_association = ""
    if event in PR_EVENTS:
        pr = _pull_request(payload)
    elif event == "issue_comment":
        pr = _comment_pull_request(payload)
        comment_body = _text(payload, "comment", "body", default="")
        comment_association = _text(payload, "comment", "author_association", default="NONE")
        comment_association = comment_association.upper()
    trust, may_write, note = _trust(event, pr, comment_association)
    repository = env.get("GITHUB_REPOSITORY") or _text(payload, "repository", "full_name")
    return RunContext(
        event_name=event,
        action=action,
        repository=repository,
        server_url=env.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/"),
        api_url=env.get("GITHUB_API_URL", "https://api.github.com").rstrip("/"),
        ref=ref,
        sha=env.get("GITHUB_SHA", ""),
        default_branch=_default_branch(event, ref, payload),
        run_id=env.get("GITHUB_RUN_ID", "0"),
        run_attempt=env.get("GITHUB_RUN_ATTEMPT", "1"),
        actor=env.get("GITHUB_ACTOR", ""),
        workspace=Path(env.get("GITHUB_WORKSPACE") or Path.cwd()),
        pull_request=pr,
        comment_body=comment_body,
        comment_author_association=comment_association,
        trust=trust,
        may_write=may_write,
        write_note=note,
        commits=_pushed_commits(event, payload, env.get("GITHUB_SHA", "")),
        job=env.get("GITHUB_JOB", ""),
    )


def _pushed_commits(event: str, payload: Mapping[str, Any], sha: str) -> tuple[str, ...]:
    """A push's commits, head first; a PR merged by this push is found through them."""
    if event != "push":
        return ()
    from memory_action.github_promotion import push_commit_shas  # noqa: PLC0415 - small, pure

    return tuple(push_commit_shas(payload)) or ((sha,) if sha else ())
