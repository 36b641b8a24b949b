"""What the trusted ``push`` run asks GitHub before it applies a merged pull request's memory.

After a merge, the run on the base branch finds the merged pull requests of the pushed commits
(``merged_pull_requests``), reads each one's sticky comment of this agent (``sticky_comment``)
and applies only the items checked in it. Anyone who may comment can edit nothing but their own
comments, yet a comment of ours may be edited by everyone with triage or write access, and a
ticked box is an edit. So a comment counts (``trusted_comment``) only when every edit GitHub
recorded for it (GraphQL ``userContentEdits``) was made by our bot or by someone with write
access (``ask_write_access``, asked once per person by ``GitHubClient.write_access``).

Listing the merged pull requests is a call the push run cannot do without: its failures are a
``GitHubError``. The checks of a comment fail closed: when GitHub cannot tell (an error, a missing
permission, more edits than one page), the comment is ignored with a reason, nothing is raised.

``GitHubClient`` exposes these as methods; the functions here take its ``RepositoryApi`` first.
The commits of a push come from its payload (``event_payload.push_commit_shas``).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from github.IssueComment import IssueComment
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memory_action.errors import GitHubError
from memory_action.github.api import RepositoryApi
from memory_action.run.event_payload import distinct_shas
from memory_action.safety.untrusted_json import first_error, location

MAX_CONTENT_EDITS = 100  # one page of userContentEdits; a longer history is not checked
ACTIONS_BOT = "github-actions[bot]"  # the workflow token's author: edits by it are our runs'
TRUSTED_ROLES = frozenset({"admin", "maintain", "write"})

# Bots are "Bot" actors whose GraphQL login lacks the "[bot]" the REST API shows.
_EDIT_HISTORY = """
query CommentEdits($id: ID!, $edits: Int!) {
  node(id: $id) {
    __typename
    ... on IssueComment {
      body
      author { __typename login }
      editor { __typename login }
      lastEditedAt
      userContentEdits(first: $edits) {
        totalCount
        nodes { editedAt editor { __typename login } deletedBy { __typename login } }
      }
    }
  }
}
"""


@dataclass(frozen=True, kw_only=True)
class MergedPullRequest:
    number: int
    merged_at: datetime
    merge_commit_sha: str
    author: str  # "ghost" for a deleted account


@dataclass(frozen=True, kw_only=True)
class StickyComment:
    id: int
    node_id: str  # the GraphQL id, for the edit history
    body: str
    author_login: str  # as the REST API spells it ("github-actions[bot]")
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, kw_only=True)
class WorkflowRun:
    """A run a proposal names, as ``GET /repos/{owner}/{repo}/actions/runs/{id}`` answers."""

    id: int
    repository: str  # owner/name
    path: str  # the workflow file: .github/workflows/review.yml


class _Answer(BaseModel):
    """GitHub's JSON, untrusted: checked as strictly as it is read (no coercion)."""

    model_config = ConfigDict(strict=True, extra="ignore")


class _Permission(_Answer):
    permission: str  # GitHub always sends it: an answer without it is not an answer
    role_name: str | None = None


class _RunRepository(_Answer):
    full_name: str


class _Run(_Answer):
    id: int
    repository: _RunRepository
    path: str


class _RunList(_Answer):
    workflow_runs: list[object]


class _Actor(_Answer):
    typename: object = Field(default=None, alias="__typename")
    login: object = None


class _Edit(_Answer):
    editor: _Actor | None
    deleted_by: _Actor | None = Field(default=None, alias="deletedBy")


class _Edits(_Answer):
    total_count: int = Field(alias="totalCount")
    nodes: list[_Edit]


class _EditedComment(_Answer):
    body: str
    author: _Actor | None
    editor: _Actor | None
    last_edited_at: object = Field(alias="lastEditedAt")
    user_content_edits: _Edits = Field(alias="userContentEdits")


class _Node(_Answer):
    typename: object = Field(default=None, alias="__typename")


class _NodeData(_Answer):
    node: dict[str, object] | None


class _GraphqlErrors(_Answer):
    errors: list[object] | None = None


class _EditHistory(_Answer):
    data: _NodeData


@dataclass(frozen=True, kw_only=True)
class TrustedComment:
    """The comment to apply, or None; ``reason`` says why, for the log, in either case."""

    comment: StickyComment | None
    reason: str


# --- merged pull requests -----------------------------------------------------------------------


def merged_pull_requests(
    github: RepositoryApi, commit_shas: Sequence[str], base_branch: str
) -> list[MergedPullRequest]:
    """The pull requests merged into ``base_branch`` that the pushed commits belong to.

    One ``GET /repos/{owner}/{repo}/commits/{sha}/pulls`` per commit (the first
    ``MAX_PUSH_COMMITS`` distinct ones), each pull request once, in the order they were merged.
    A failed call is a ``GitHubError``.
    """
    merged: dict[int, MergedPullRequest] = {}
    for sha in distinct_shas(commit_shas):
        with github.api(f"listing the pull requests of commit {sha[:7]}"):
            for pull in github.repository.get_commit(sha).get_pulls():
                if pull.number in merged or pull.merged_at is None:
                    continue
                if pull.base.ref != base_branch or not pull.merge_commit_sha:
                    continue
                merged[pull.number] = MergedPullRequest(
                    number=pull.number,
                    merged_at=pull.merged_at,
                    merge_commit_sha=pull.merge_commit_sha,
                    author=pull.user.login if pull.user is not None else "ghost",
                )
    return sorted(merged.values(), key=lambda pr: (pr.merged_at, pr.number))


# --- the sticky comment and who edited it -------------------------------------------------------


def sticky_comment(
    github: RepositoryApi, pr_number: int, found: IssueComment | None
) -> StickyComment | None:
    """``found``, the oldest comment of ours holding the marker (as ``find_sticky_comment`` finds
    it), with what the trust checks need."""
    if found is None:
        return None
    with github.api(f"reading comment {found.id} on #{pr_number}"):
        return StickyComment(
            id=found.id,
            node_id=found.node_id,
            body=found.body or "",
            author_login=found.user.login,
            created_at=found.created_at,
            updated_at=found.updated_at,
        )


def comment_editors(github: RepositoryApi, comment: StickyComment) -> list[str] | None:
    """Everyone GitHub recorded as editing the comment, or deleting an edit from its history.

    REST logins ("github-actions[bot]"), each once, the last editor first.

    None when GitHub cannot tell: an API error, no permission, a deleted account among the
    editors, more than ``MAX_CONTENT_EDITS`` edits, or a body that changed meanwhile.
    """
    return _editors(github, comment)[0]


class CommentLookup(Protocol):
    """What the trust check asks besides the edit history (``GitHubClient`` answers, once per
    comment or person)."""

    def sticky_comment(self, pr_number: int, marker: str) -> StickyComment | None: ...

    def write_access(self, login: str) -> tuple[bool, str]: ...


def trusted_comment(
    github: RepositoryApi, lookup: CommentLookup, pr_number: int, marker: str
) -> TrustedComment:
    """The sticky comment, if everyone but our bot who edited it has write access."""
    try:
        comment = lookup.sticky_comment(pr_number, marker)
    except GitHubError as exc:
        return TrustedComment(comment=None, reason=f"ignored: {exc}")
    if comment is None:
        return TrustedComment(comment=None, reason=f"#{pr_number} has no comment of this agent")
    name = f"comment {comment.id} on #{pr_number}"
    editors, why = _editors(github, comment)
    if editors is None:
        return TrustedComment(comment=None, reason=f"ignored {name}: {why}")
    # The author is this client's identity (``sticky_comment``): its edits are our runs'. Any
    # other account, github-actions[bot] included, needs write access.
    people = [login for login in editors if login != comment.author_login]
    for login in people:
        allowed, access = lookup.write_access(login)
        if not allowed:
            return TrustedComment(
                comment=None, reason=f"ignored {name}: edited by {login}, {access}"
            )
    if not people:
        return TrustedComment(comment=comment, reason=f"{name} has no edits but this agent's")
    return TrustedComment(
        comment=comment, reason=f"{name} was edited by {', '.join(people)}, with write access"
    )


def _editors(github: RepositoryApi, comment: StickyComment) -> tuple[list[str] | None, str]:
    """The editors, or None and why GitHub cannot tell."""
    requester = github.repository.requester
    variables = {"id": comment.node_id, "edits": MAX_CONTENT_EDITS}
    query = {"query": _EDIT_HISTORY, "variables": variables}
    try:
        with github.api("reading its edit history"):
            _, answer = requester.requestJsonAndCheck("POST", requester.graphql_url, input=query)
    except GitHubError as exc:
        return None, str(exc)
    try:
        editors, why = _editors_of(answer, comment)
    except ValidationError as exc:
        where = location(first_error(exc), "the answer")
        return None, f"GitHub's answer about its edit history is malformed ({where})"
    return editors, github.one_line(why)  # GraphQL's messages are GitHub's, in one line


def _editors_of(answer: object, comment: StickyComment) -> tuple[list[str] | None, str]:
    """The editors the answer names; ``ValidationError`` for an answer of another shape."""
    errors = _GraphqlErrors.model_validate(answer).errors
    if errors:
        messages = "; ".join(
            str(error.get("message", error)) for error in errors if isinstance(error, dict)
        )
        return None, f"GitHub did not answer for its edit history ({messages or errors})"
    raw = _EditHistory.model_validate(answer).data.node
    if raw is None or _Node.model_validate(raw).typename != "IssueComment":
        return None, "GitHub knows no such comment any more"
    node = _EditedComment.model_validate(raw)
    if _login(node.author) != comment.author_login:
        return None, "its author is not the one the REST API names"
    if node.body != comment.body:
        return None, "it changed while it was being checked"
    edits = node.user_content_edits
    if edits.total_count > len(edits.nodes):
        return None, f"it has {edits.total_count} edits, more than can be checked"
    return _edit_logins(node)


def _edit_logins(node: _EditedComment) -> tuple[list[str] | None, str]:
    actors = [node.editor] if node.last_edited_at is not None else []
    for edit in node.user_content_edits.nodes:
        actors += [edit.editor] + ([edit.deleted_by] if edit.deleted_by else [])
    editors: list[str] = []
    for actor in actors:
        login = _login(actor)
        if login is None:
            return None, "an edit was made by a deleted account"
        if login not in editors:
            editors.append(login)
    return editors, ""


def _login(actor: _Actor | None) -> str | None:
    """The REST login of a GraphQL actor: bots get their "[bot]" back. None for a ghost."""
    if actor is None or not actor.login:
        return None
    login = str(actor.login)
    return f"{login}[bot]" if actor.typename == "Bot" else login


# --- permission ---------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class WriteAccess:
    """What GitHub said of a person's repository permission, for a reason."""

    allowed: bool  # admin, maintain or write
    reason: str  # "permission write, role write", or why it is not allowed
    problem: str = ""  # how the look-up failed ("" when GitHub answered); then never allowed


def _untold(problem: str) -> WriteAccess:
    return WriteAccess(
        allowed=False, reason=f"whose permission GitHub did not tell ({problem})", problem=problem
    )


def ask_write_access(github: RepositoryApi, login: str) -> WriteAccess:
    """Whether ``login`` may write to the repository (admin, maintain or write), and how GitHub
    answered; not allowed when the look-up fails in any way (an HTTP error, a transport error,
    an answer that is not JSON or not of GitHub's shape). No login is trusted without asking:
    ``github-actions[bot]`` is every workflow of the repository, not only this one."""
    path = f"/collaborators/{urllib.parse.quote(login, safe='')}/permission"
    repository = github.repository
    try:
        with github.api(f"reading the permission of {login}"):
            _, data = repository.requester.requestJsonAndCheck("GET", repository.url + path)
    except GitHubError as exc:
        return _untold(str(exc))
    except Exception as exc:  # a trust look-up fails closed, whatever failed
        return _untold(github.one_line(f"reading the permission of {login} failed: {exc!r}"))
    try:
        answer = _Permission.model_validate(data)
    except ValidationError as exc:
        error = first_error(exc)
        where = location(error, "the answer")
        return _untold(f"GitHub's answer is not a permission: {where}: {error['msg']}")
    permission, role = answer.permission, answer.role_name
    if permission in TRUSTED_ROLES or role in TRUSTED_ROLES:
        return WriteAccess(allowed=True, reason=f"permission {permission}, role {role}")
    return WriteAccess(
        allowed=False, reason=f"who has no write access (permission {permission}, role {role})"
    )


# --- workflow runs ------------------------------------------------------------------------------


def workflow_run(github: RepositoryApi, run_id: int) -> WorkflowRun:
    """The run with this id in the repository; ``GitHubError`` when GitHub does not say
    (no such run, or a token without ``actions: read``) or answers with something else."""
    repository = github.repository
    with github.api(f"reading workflow run {run_id}"):
        _, data = repository.requester.requestJsonAndCheck(
            "GET", f"{repository.url}/actions/runs/{run_id}"
        )
    run = _run_of(data)
    if run is None or run.id != run_id:
        raise GitHubError(f"reading workflow run {run_id}: GitHub's answer is not a run")
    return run


def recent_workflow_runs(github: RepositoryApi, workflow_path: str) -> list[WorkflowRun]:
    """The newest runs (one page) of the workflow file ``workflow_path`` in the
    repository, each as ``workflow_run`` has it; ``GitHubError`` when GitHub does not say."""
    repository = github.repository
    workflow = workflow_path.rsplit("/", 1)[-1]  # the API names a workflow by its file name
    url = f"{repository.url}/actions/workflows/{urllib.parse.quote(workflow, safe='')}/runs"
    parameters = {"per_page": 100, "exclude_pull_requests": "true"}  # one page, the most
    with github.api(f"listing the runs of {workflow}"):
        _, data = repository.requester.requestJsonAndCheck("GET", url, parameters=parameters)
    try:
        listed = _RunList.model_validate(data).workflow_runs
    except ValidationError:
        raise GitHubError(
            f"listing the runs of {workflow}: GitHub's answer is not a list of runs"
        ) from None
    return [run for run in map(_run_of, listed) if run is not None]


def _run_of(data: object) -> WorkflowRun | None:
    """A run as GitHub's JSON has it (its id, repository and workflow file); None if not."""
    try:
        run = _Run.model_validate(data)
    except ValidationError:
        return None
    return WorkflowRun(
        id=run.id, repository=run.repository.full_name, path=run.path.partition("@")[0]
    )
