"""The GitHub calls the git memory store makes: read a folder of a branch, commit to it, create it.

- Reads go through GraphQL: one query answers the branch's head commit and the folder's files at
  that commit, so what is read and the head it was read at always belong together.
- Writes go through GraphQL ``createCommitOnBranch`` with ``expectedHeadOid``: GitHub appends
  the commit only if the branch still points at the head the writer read (else it answers a
  ``STALE_DATA`` error, "Expected branch to point to … but it did not"), and signs it, so every
  memory commit is verified. It never moves a branch anywhere but forward.
- ``createCommitOnBranch`` needs a branch to exist: the memory branch is created once as an
  orphan through the REST git data API (PyGithub: a tree, a commit without parents, a ref).
  Creating the ref fails with 422 when a concurrent run created it first, which is fine.
- ``maintenance_output: pull_request``: a new branch is made at the memory branch's head (REST
  ``POST /git/refs``), the commit goes onto it, and a pull request is opened into the memory
  branch (REST ``POST /pulls``, which needs ``pull-requests: write``).

Every write needs ``contents: write``. A refusal of the token (403, "Resource not accessible by
integration") and a refusal of branch protection or a ruleset ("protected branch", "Repository
rule violations") are told apart, because a run reports them differently. Answers are untrusted
JSON, parsed into pydantic models; trouble is a ``GitRemoteError`` whose message is one line.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from memory_action.errors import MemoryActionException

if TYPE_CHECKING:
    from github.Repository import Repository

    from memory_action.safety.outgoing import SafeText

# PyGithub (and requests) load only when a remote is used: the store and its types are imported
# by runs and commands that never reach GitHub (a local ``memory log``, a cache-only run).

MAX_HISTORY = 100  # GraphQL's largest page
ModelT = TypeVar("ModelT", bound=BaseModel)

_TREE_FIELDS = """
fragment folder on Commit {
  oid
  file(path: $path) {
    object {
      ... on Tree {
        entries {
          name
          object {
            ... on Blob { text }
            ... on Tree { entries { name object { ... on Blob { text } } } }
          }
        }
      }
    }
  }
}
"""
READ_HEAD = (
    "query ReadMemoryFolder($owner: String!, $name: String!, $ref: String!, $path: String!) {\n"
    "  repository(owner: $owner, name: $name) {\n"
    "    ref(qualifiedName: $ref) { target { ...folder } }\n"
    "  }\n"
    "}\n" + _TREE_FIELDS
)
READ_AT = (
    "query ReadMemoryFolderAt($owner: String!, $name: String!, $oid: GitObjectID!, "
    "$path: String!) {\n"
    "  repository(owner: $owner, name: $name) { object(oid: $oid) { ...folder } }\n"
    "}\n" + _TREE_FIELDS
)
HISTORY = """
query MemoryHistory($owner: String!, $name: String!, $ref: String!, $path: String!, $first: Int!) {
  repository(owner: $owner, name: $name) {
    ref(qualifiedName: $ref) {
      target {
        ... on Commit {
          history(first: $first, path: $path) {
            nodes { oid committedDate messageHeadline messageBody }
          }
        }
      }
    }
  }
}
"""
COMMIT = """
mutation CommitMemory($input: CreateCommitOnBranchInput!) {
  createCommitOnBranch(input: $input) { commit { oid } }
}
"""
_STALE = "STALE_DATA"
_PROTECTION_SIGNS = ("protected branch", "repository rule violations", "rule violation")
_PERMISSION_SIGNS = ("resource not accessible", "must have push access", "permission")


class GitRemoteError(MemoryActionException):
    """GitHub did not do what was asked; the message says what and why, in one line."""


class StaleHeadError(GitRemoteError):
    """The branch moved since it was read: re-read and try again."""


class WriteRefusedError(GitRemoteError):
    """The write was refused for good this run: ``protected`` by branch protection or a
    ruleset, else the token may not write contents."""

    def __init__(self, message: str, *, protected: bool) -> None:
        super().__init__(message)
        self.protected = protected


@dataclass(frozen=True, kw_only=True)
class FolderSnapshot:
    """A folder of a branch at one commit: ``head`` None when the branch does not exist;
    ``files`` (relative path → text) None when the folder does not exist."""

    head: str | None
    files: Mapping[str, str] | None


@dataclass(frozen=True, kw_only=True)
class PullRequestLink:
    """A pull request that was opened."""

    number: int
    url: str


@dataclass(frozen=True, kw_only=True)
class Revision:
    """One commit that changed a folder."""

    oid: str
    committed: str  # ISO 8601, as GitHub answers it
    headline: str
    body: str


# -- GraphQL answers, validated ---------------------------------------------------------------


class _Blob(BaseModel):
    text: str | None = None


class _Leaf(BaseModel):
    name: str
    object: _Blob | None = None


class _Node(BaseModel):
    text: str | None = None  # a blob
    entries: list[_Leaf] | None = None  # a tree


class _Entry(BaseModel):
    name: str
    object: _Node | None = None


class _Tree(BaseModel):
    entries: list[_Entry] | None = None


class _File(BaseModel):
    object: _Tree | None = None


class _Commit(BaseModel):
    oid: str
    file: _File | None = None


class _Target(BaseModel):
    target: _Commit | None = None


class _HistoryNode(BaseModel):
    oid: str
    committedDate: str  # noqa: N815 - GitHub's field name
    messageHeadline: str | None = None  # noqa: N815
    messageBody: str | None = None  # noqa: N815


class _History(BaseModel):
    nodes: list[_HistoryNode]


class GitHubGitRemote:
    """One repository's git data through a PyGithub ``Repository`` (its requester sends the
    GraphQL calls). ``calls`` counts the requests sent, for the figures."""

    def __init__(
        self, repository: Repository, full_name: str, redact: Callable[[str], str] = str
    ) -> None:
        self._repository = repository
        self._redact = redact
        owner, _, name = full_name.partition("/")
        self._owner, self._name = owner, name
        self.calls = 0

    @property
    def repository_name(self) -> str:
        return f"{self._owner}/{self._name}"

    # -- reads ------------------------------------------------------------------------------------

    def read(self, branch: str, path: str, at: str | None = None) -> FolderSnapshot:
        """The folder at the branch's head (or at commit ``at``)."""
        variables: dict[str, Any] = {"owner": self._owner, "name": self._name, "path": path}
        if at is None:
            data = self._graphql(READ_HEAD, variables | {"ref": _qualified(branch)}, "reading")
            node = (data.get("repository") or {}).get("ref")
            commit = _parse(_Target, node, "the branch").target if node else None
        else:
            data = self._graphql(READ_AT, variables | {"oid": at}, "reading")
            node = (data.get("repository") or {}).get("object")
            commit = _parse(_Commit, node, "the commit") if node else None
            if commit is None:
                raise GitRemoteError(f"commit {at} is not in {self.repository_name}")
        if commit is None:
            return FolderSnapshot(head=None, files=None)
        tree = commit.file.object if commit.file is not None else None
        if tree is None or tree.entries is None:
            return FolderSnapshot(head=commit.oid, files=None)
        return FolderSnapshot(head=commit.oid, files=dict(_files(tree.entries)))

    def history(self, branch: str, path: str, limit: int = MAX_HISTORY) -> list[Revision]:
        """The commits of ``branch`` that changed ``path``, newest first."""
        variables = {
            "owner": self._owner,
            "name": self._name,
            "ref": _qualified(branch),
            "path": path,
            "first": max(1, min(limit, MAX_HISTORY)),
        }
        data = self._graphql(HISTORY, variables, "reading the history")
        ref = (data.get("repository") or {}).get("ref")
        if not ref or not ref.get("target"):
            return []
        history = _parse(_History, ref["target"].get("history"), "the history")
        return [
            Revision(
                oid=node.oid,
                committed=node.committedDate,
                headline=node.messageHeadline or "",
                body=node.messageBody or "",
            )
            for node in history.nodes
        ]

    # -- writes -----------------------------------------------------------------------------------

    def commit(
        self,
        branch: str,
        expected_head: str,
        additions: Mapping[str, str],
        deletions: tuple[str, ...],
        message: tuple[SafeText, SafeText],
    ) -> str:
        """Append one commit to ``branch`` if it still points at ``expected_head``; its oid.
        The message (headline, body) passed the outgoing gate (``outgoing.gate``)."""
        headline, body = message
        changes = {
            "additions": [
                {"path": path, "contents": base64.b64encode(text.encode()).decode()}
                for path, text in sorted(additions.items())
            ],
            "deletions": [{"path": path} for path in deletions],
        }
        commit_input = {
            "branch": {
                "repositoryNameWithOwner": self.repository_name,
                # GitHub documents CommittableBranch.branchName as the unqualified name.
                "branchName": branch.removeprefix("refs/heads/"),
            },
            "expectedHeadOid": expected_head,
            "fileChanges": changes,
            "message": {"headline": headline.text, "body": body.text},
        }
        data = self._graphql(COMMIT, {"input": commit_input}, "committing memory", write=True)
        try:
            return str(data["createCommitOnBranch"]["commit"]["oid"])
        except (KeyError, TypeError):
            raise GitRemoteError("GitHub's answer to the memory commit has no commit") from None

    def create_branch(self, branch: str, files: Mapping[str, str], message: SafeText) -> bool:
        """Create ``branch`` as an orphan holding ``files``; False when it exists already."""
        from github import InputGitTreeElement  # noqa: PLC0415 - see the imports

        elements = [
            InputGitTreeElement(path, "100644", "blob", content=text)
            for path, text in sorted(files.items())
        ]
        with self._rest(f"creating the branch {branch}"):
            self.calls += 1
            tree = self._repository.create_git_tree(elements)
            self.calls += 1
            commit = self._repository.create_git_commit(message.text, tree, [])
        return self.create_ref(branch, commit.sha)

    def create_ref(self, branch: str, sha: str) -> bool:
        """Point the new ``branch`` at commit ``sha``; False when the branch exists already."""
        from github import GithubException  # noqa: PLC0415 - see the imports

        with self._rest(f"creating the branch {branch}"):
            self.calls += 1
            try:
                self._repository.create_git_ref(_qualified(branch), sha)
            except GithubException as exc:
                if exc.status == 422:  # "Reference already exists"
                    return False
                raise
        return True

    def open_pull_request(
        self, head: str, base: str, title: SafeText, body: SafeText
    ) -> PullRequestLink:
        """Open a pull request from ``head`` into ``base`` (both branches of this repository).
        GitHub answers 422 when one is open for ``head`` already, 403 when the token lacks
        ``pull-requests: write`` or GitHub Actions may not create pull requests."""
        with self._rest(f"opening a pull request from {head} into {base}"):
            self.calls += 1
            pull = self._repository.create_pull(
                base=base, head=head, title=title.text, body=body.text
            )
            return PullRequestLink(number=pull.number, url=pull.html_url)

    # -- plumbing ---------------------------------------------------------------------------------

    def _graphql(
        self, query: str, variables: Mapping[str, Any], action: str, *, write: bool = False
    ) -> dict[str, Any]:
        requester = self._repository.requester
        with self._rest(action, write=write):
            self.calls += 1
            _, answer = requester.requestJsonAndCheck(
                "POST", requester.graphql_url, input={"query": query, "variables": variables}
            )
        if not isinstance(answer, dict):
            raise GitRemoteError(f"{action} failed: GitHub's answer is not a JSON object")
        errors = answer.get("errors")
        if errors:
            raise _graphql_error(action, errors, self._redact, write=write)
        data = answer.get("data")
        if not isinstance(data, dict):
            raise GitRemoteError(f"{action} failed: GitHub's answer has no data")
        return data

    @contextmanager
    def _rest(self, action: str, *, write: bool = True) -> Iterator[None]:
        """GitHub's refusals as ``GitRemoteError``; a 403 refuses a ``write`` for good, but on a
        read it is trouble like any other (a secondary rate limit answers 403 too)."""
        import requests  # noqa: PLC0415 - see the imports
        from github import GithubException  # noqa: PLC0415

        try:
            yield
        except GithubException as exc:
            data = exc.data if isinstance(exc.data, dict) else {}
            message = " ".join(_messages(data, exc.message).split())
            text = self._redact(f"{action} failed: HTTP {exc.status} {message}".strip())
            if exc.status == 403 and write:
                raise WriteRefusedError(text, protected=_protected(message)) from None
            raise GitRemoteError(text) from None
        except requests.RequestException as exc:
            raise GitRemoteError(self._redact(f"{action} failed: {exc}")) from None


def _messages(data: Mapping[str, Any], fallback: str | None) -> str:
    """A REST error's message and its details: a 422 says what failed only in ``errors``
    ("Validation Failed": "A pull request already exists for owner:branch.")."""
    errors = data.get("errors")
    details = (
        [str(e.get("message")) for e in errors if isinstance(e, dict) and e.get("message")]
        if isinstance(errors, list)
        else []
    )
    return ": ".join(
        part for part in (str(data.get("message") or fallback or ""), *details) if part
    )


def _qualified(branch: str) -> str:
    return branch if branch.startswith("refs/heads/") else f"refs/heads/{branch}"


def _files(entries: list[_Entry]) -> Iterator[tuple[str, str]]:
    """The folder's text files, one level of subfolders deep (the state folder)."""
    for entry in entries:
        node = entry.object
        if node is None:
            continue
        if node.text is not None:
            yield entry.name, node.text
        for leaf in node.entries or []:
            if leaf.object is not None and leaf.object.text is not None:
                yield f"{entry.name}/{leaf.name}", leaf.object.text


def _parse(model: type[ModelT], value: object, what: str) -> ModelT:
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise GitRemoteError(
            f"GitHub's answer about {what} is malformed ({exc.error_count()} problems)"
        ) from None


def _protected(message: str) -> bool:
    lowered = message.lower()
    return any(sign in lowered for sign in _PROTECTION_SIGNS)


def _graphql_error(
    action: str, errors: object, redact: Callable[[str], str], *, write: bool
) -> GitRemoteError:
    items = [e for e in errors if isinstance(e, dict)] if isinstance(errors, list) else []
    messages = "; ".join(" ".join(str(e.get("message", "")).split()) for e in items)
    text = redact(f"{action} failed: {messages or 'GitHub answered an error'}")
    if any(e.get("type") == _STALE for e in items):
        return StaleHeadError(text)
    lowered = messages.lower()
    if write and _protected(messages):
        return WriteRefusedError(text, protected=True)
    if write and (
        any(e.get("type") == "FORBIDDEN" for e in items)
        or any(sign in lowered for sign in _PERMISSION_SIGNS)
    ):
        return WriteRefusedError(text, protected=False)
    return GitRemoteError(text)
