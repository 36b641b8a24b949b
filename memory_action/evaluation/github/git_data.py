"""The repository's git data in the GitHub fake: the REST git data API and GraphQL
``createCommitOnBranch`` with ``expectedHeadOid``, as the git memory store uses them.

Written from GitHub's documented behaviour, not from ``memory_action.store.git_remote``:

- ``POST /git/trees`` (entries with inline ``content``), ``POST /git/commits`` (no ``parents``:
  a root commit, the start of an orphan branch), ``POST /git/refs`` (422 "Reference already
  exists" for a ref that exists), ``GET /git/ref/heads/{branch}``. Every write needs ``contents:
  write``: ``read_only`` answers them 403 "Resource not accessible by integration".
- GraphQL ``createCommitOnBranch``: appends one commit to the branch's head with the file
  additions (base64) and deletions; when ``expectedHeadOid`` is not the head it changes nothing
  and answers a ``STALE_DATA`` error, "Expected branch to point to … but it did not. Pull and try
  again."; a ``protected`` branch answers "Repository rule violations found"; ``read_only`` a
  ``FORBIDDEN`` error. Commits made this way are verified (``verified_commits`` counts them).
- GraphQL reads: the branch's head and a folder's files (``ref.target.file(path)``), a commit's
  (``object(oid)``), and ``history(path)``.
- ``POST /pulls`` (title, head, base, body): 201 with the pull request; 422 "Validation Failed"
  with ``errors[].message`` "A pull request already exists for owner:branch." when one is open
  for that head and base, and ``field: head, code: invalid`` for a head branch that does not
  exist; 403 "Resource not accessible by integration" without ``pull-requests: write``
  (``pulls_read_only``), and 403 "GitHub Actions is not permitted to create or approve pull
  requests." when the repository does not allow it (``actions_may_open_pulls``).

``before_commit`` runs just before a commit is applied (a test makes a rival writer win there).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import threading
from collections.abc import Callable
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

NOT_ACCESSIBLE = "Resource not accessible by integration"
ACTIONS_MAY_NOT_OPEN = "GitHub Actions is not permitted to create or approve pull requests."
_counter = itertools.count(1)


@dataclass(frozen=True, kw_only=True)
class FakeCommit:
    oid: str
    files: dict[str, str]  # path → text: the whole tree, flattened
    parents: tuple[str, ...]
    headline: str
    body: str
    date: str
    verified: bool


@dataclass(frozen=True, kw_only=True)
class OpenedPull:
    """A pull request opened through ``POST /pulls``."""

    number: int
    head: str
    base: str
    title: str
    body: str
    head_sha: str


def _oid(*parts: str) -> str:
    digest = hashlib.sha1(usedforsecurity=False)
    for part in (*parts, str(next(_counter))):
        digest.update(part.encode())
    return digest.hexdigest()


@dataclass(kw_only=True)
class FakeGitData:
    github: Host
    refs: dict[str, str] = field(default_factory=dict)  # "refs/heads/x" → commit oid
    commits: dict[str, FakeCommit] = field(default_factory=dict)
    trees: dict[str, dict[str, str]] = field(default_factory=dict)
    protected: set[str] = field(default_factory=set)  # branch names that refuse commits
    read_only: bool = False  # the token lacks contents: write
    before_commit: Callable[[], None] | None = None
    opened: list[OpenedPull] = field(default_factory=list)
    pulls_read_only: bool = False  # the token lacks pull-requests: write
    actions_may_open_pulls: bool = True  # the repository setting for GitHub Actions
    stale_refusals: int = 0
    verified_commits: int = 0
    # Runs race in threads: each request is answered whole, as GitHub applies a ref update.
    lock: threading.RLock = field(default_factory=threading.RLock)

    def routes(self) -> list[tuple[str, str, Callable[..., Reply]]]:
        return [
            ("POST", r"/git/trees", self._locked(self._create_tree)),
            ("POST", r"/git/commits", self._locked(self._create_commit)),
            ("POST", r"/git/refs", self._locked(self._create_ref)),
            ("GET", r"/git/ref/heads/(.+)", self._locked(self._get_ref)),
            ("POST", r"/pulls", self._locked(self._open_pull)),
        ]

    def _locked(self, handler: Callable[..., Reply]) -> Callable[..., Reply]:
        def answer(*args: Any) -> Reply:
            with self.lock:
                return handler(*args)

        return answer

    def handles(self, query: str) -> bool:
        return any(
            name in query for name in ("createCommitOnBranch", "ReadMemoryFolder", "MemoryHistory")
        )

    def graphql(self, document: dict[str, Any]) -> Reply:
        with self.lock:
            return self._graphql(document)

    def _graphql(self, document: dict[str, Any]) -> Reply:
        query, variables = document["query"], document.get("variables") or {}
        if "createCommitOnBranch" in query:
            return self._commit_on_branch(variables["input"])
        if "MemoryHistory" in query:
            return self._history(variables)
        if "ReadMemoryFolderAt" in query:
            commit = self.commits.get(variables["oid"])
            node = self._folder(commit, variables["path"]) if commit else None
            return json_reply({"data": {"repository": {"object": node}}})
        head = self.refs.get(variables["ref"])
        node = {"target": self._folder(self.commits[head], variables["path"])} if head else None
        return json_reply({"data": {"repository": {"ref": node}}})

    # -- state for tests --------------------------------------------------------------------------

    def head(self, branch: str) -> FakeCommit | None:
        oid = self.refs.get(f"refs/heads/{branch}")
        return self.commits[oid] if oid else None

    def log(self, branch: str) -> list[FakeCommit]:
        """The branch's commits, newest first (first parents)."""
        found, oid = [], self.refs.get(f"refs/heads/{branch}")
        while oid:
            commit = self.commits[oid]
            found.append(commit)
            oid = commit.parents[0] if commit.parents else None
        return found

    def commit_files(self, branch: str, changes: dict[str, str], headline: str = "rival") -> str:
        """A commit by someone else (another run) straight onto ``branch``."""
        ref = f"refs/heads/{branch}"
        parent = self.commits[self.refs[ref]]
        commit = self._add_commit({**parent.files, **changes}, (parent.oid,), headline, "", True)
        self.refs[ref] = commit.oid
        return commit.oid

    # -- REST -------------------------------------------------------------------------------------

    def _refused(self) -> Reply | None:
        if self.read_only:
            return error_reply(403, NOT_ACCESSIBLE)
        return None

    def _create_tree(self, request: ApiRequest) -> Reply:
        refused = self._refused()
        if refused:
            return refused
        body = json.loads(request.body or "{}")
        files = dict(self.trees.get(body.get("base_tree") or "", {}))
        for item in body["tree"]:
            files[item["path"]] = item["content"]
        sha = _oid("tree", json.dumps(files, sort_keys=True))
        self.trees[sha] = files
        url = f"{self.github.repo_url}/git/trees/{sha}"
        entries = [
            {"path": p, "mode": "100644", "type": "blob", "sha": _oid(t)} for p, t in files.items()
        ]
        tree = {"sha": sha, "url": url, "tree": entries, "truncated": False}
        return json_reply(documented("POST", "/repos/{owner}/{repo}/git/trees", tree, 201), 201)

    def _create_commit(self, request: ApiRequest) -> Reply:
        refused = self._refused()
        if refused:
            return refused
        body = json.loads(request.body or "{}")
        tree = self.trees.get(body["tree"])
        if tree is None:
            return error_reply(422, "Tree SHA does not exist")
        headline, _, rest = str(body["message"]).partition("\n")
        commit = self._add_commit(tree, tuple(body.get("parents") or ()), headline, rest, False)
        answer = self._rest_commit(commit, body["tree"])
        return json_reply(documented("POST", "/repos/{owner}/{repo}/git/commits", answer, 201), 201)

    def _rest_commit(self, commit: FakeCommit, tree: str) -> dict[str, Any]:
        person = {"name": "github-actions[bot]", "email": "bot@example.com", "date": commit.date}
        return {
            "sha": commit.oid,
            "url": f"{self.github.repo_url}/git/commits/{commit.oid}",
            "message": commit.headline,
            "tree": {"sha": tree, "url": f"{self.github.repo_url}/git/trees/{tree}"},
            "parents": [{"sha": p} for p in commit.parents],
            "author": person,
            "committer": person,
            "verification": {"verified": False, "reason": "unsigned"},
        }

    def _create_ref(self, request: ApiRequest) -> Reply:
        refused = self._refused()
        if refused:
            return refused
        body = json.loads(request.body or "{}")
        ref, sha = body["ref"], body["sha"]
        if ref in self.refs:
            return error_reply(422, "Reference already exists")
        if sha not in self.commits:
            return error_reply(422, "Object does not exist")
        self.refs[ref] = sha
        return json_reply(
            documented("POST", "/repos/{owner}/{repo}/git/refs", self._rest_ref(ref), 201), 201
        )

    def _get_ref(self, _request: ApiRequest, branch: str) -> Reply:
        ref = f"refs/heads/{branch}"
        if ref not in self.refs:
            return error_reply(404, "Not Found")
        return json_reply(
            documented("GET", "/repos/{owner}/{repo}/git/ref/{ref}", self._rest_ref(ref))
        )

    def _rest_ref(self, ref: str) -> dict[str, Any]:
        sha = self.refs[ref]
        return {
            "ref": ref,
            "url": f"{self.github.repo_url}/git/{ref}",
            "object": {"sha": sha, "type": "commit", "url": f"{self.github.repo_url}/git/{sha}"},
        }

    def _open_pull(self, request: ApiRequest) -> Reply:
        if self.pulls_read_only:
            return error_reply(403, NOT_ACCESSIBLE)
        if not self.actions_may_open_pulls:
            return error_reply(403, ACTIONS_MAY_NOT_OPEN)
        body = json.loads(request.body or "{}")
        head, base = str(body["head"]), str(body["base"])
        if f"refs/heads/{head}" not in self.refs or f"refs/heads/{base}" not in self.refs:
            error = {"resource": "PullRequest", "field": "head", "code": "invalid"}
            return error_reply(422, "Validation Failed", error)
        if any(p.head == head and p.base == base for p in self.opened):
            owner = self._full_name().split("/")[0]
            error = {
                "resource": "PullRequest",
                "code": "custom",
                "message": f"A pull request already exists for {owner}:{head}.",
            }
            return error_reply(422, "Validation Failed", error)
        pull = OpenedPull(
            number=500 + len(self.opened),
            head=head,
            base=base,
            title=str(body.get("title") or ""),
            body=str(body.get("body") or ""),
            head_sha=self.refs[f"refs/heads/{head}"],
        )
        self.opened.append(pull)
        return json_reply(
            documented("POST", "/repos/{owner}/{repo}/pulls", self._rest_pull(pull), 201), 201
        )

    def _rest_pull(self, pull: OpenedPull) -> dict[str, Any]:
        return {
            "id": 90_000 + pull.number,
            "number": pull.number,
            "state": "open",
            "title": pull.title,
            "body": pull.body,
            "url": f"{self.github.repo_url}/pulls/{pull.number}",
            "html_url": f"https://github.com/{self._full_name()}/pull/{pull.number}",
            "head": {"ref": pull.head, "sha": pull.head_sha},
            "base": {"ref": pull.base, "sha": self.refs[f"refs/heads/{pull.base}"]},
            "requested_teams": [],
        }

    def _full_name(self) -> str:
        return "/".join(self.github.repo_url.rsplit("/", 2)[-2:])

    # -- GraphQL ----------------------------------------------------------------------------------

    def _commit_on_branch(self, given: dict[str, Any]) -> Reply:
        branch = given["branch"]
        # CommittableBranch.branchName: "The unqualified name of the branch to append the
        # commit to". GitHub prefixes refs/heads/ to whatever it is given.
        name = branch["branchName"]
        ref = f"refs/heads/{name}"
        if self.read_only:
            return _errors("FORBIDDEN", NOT_ACCESSIBLE)
        if name in self.protected:
            return _errors(
                "UNPROCESSABLE",
                f"Repository rule violations found for {ref}. Changes must be made through a "
                "pull request.",
            )
        if ref not in self.refs:
            return _errors("NOT_FOUND", f'A ref named "{ref}" does not exist.')
        if self.before_commit is not None:
            self.before_commit()
        head = self.refs[ref]
        if given["expectedHeadOid"] != head:
            self.stale_refusals += 1
            return _errors(
                "STALE_DATA",
                f'Expected branch to point to "{given["expectedHeadOid"]}" but it did not.  '
                "Pull and try again.",
            )
        files = dict(self.commits[head].files)
        changes = given["fileChanges"]
        for deletion in changes.get("deletions") or []:
            files.pop(deletion["path"], None)
        for addition in changes.get("additions") or []:
            files[addition["path"]] = base64.b64decode(addition["contents"]).decode()
        message = given["message"]
        commit = self._add_commit(
            files, (head,), message["headline"], message.get("body") or "", True
        )
        self.refs[ref] = commit.oid
        self.verified_commits += 1
        return json_reply({"data": {"createCommitOnBranch": {"commit": {"oid": commit.oid}}}})

    def _history(self, variables: dict[str, Any]) -> Reply:
        head = self.refs.get(variables["ref"])
        if head is None:
            return json_reply({"data": {"repository": {"ref": None}}})
        path = variables["path"].rstrip("/") + "/"
        nodes: list[dict[str, Any]] = []
        oid: str | None = head
        while oid and len(nodes) < variables["first"]:
            commit = self.commits[oid]
            parent = self.commits[commit.parents[0]] if commit.parents else None
            mine = {p: t for p, t in commit.files.items() if p.startswith(path)}
            before = {
                p: t for p, t in (parent.files if parent else {}).items() if p.startswith(path)
            }
            if mine != before:
                nodes.append(
                    {
                        "oid": commit.oid,
                        "committedDate": commit.date,
                        "messageHeadline": commit.headline,
                        "messageBody": commit.body,
                    }
                )
            oid = parent.oid if parent else None
        history = {"history": {"nodes": nodes}}
        return json_reply({"data": {"repository": {"ref": {"target": history}}}})

    def _folder(self, commit: FakeCommit, path: str) -> dict[str, Any]:
        """A commit with ``file(path)`` as GraphQL answers it: a tree two levels deep."""
        prefix = path.rstrip("/") + "/"
        inside = {p[len(prefix) :]: t for p, t in commit.files.items() if p.startswith(prefix)}
        if not inside:
            return {"oid": commit.oid, "file": None}
        entries: dict[str, dict[str, Any]] = {}
        for relative, text in sorted(inside.items()):
            top, _, rest = relative.partition("/")
            if not rest:
                entries[top] = {"name": top, "object": {"text": text}}
                continue
            folder = entries.setdefault(top, {"name": top, "object": {"entries": []}})
            if "/" not in rest:
                folder["object"]["entries"].append({"name": rest, "object": {"text": text}})
        return {"oid": commit.oid, "file": {"object": {"entries": list(entries.values())}}}

    def _add_commit(
        self,
        files: dict[str, str],
        parents: tuple[str, ...],
        headline: str,
        body: str,
        signed: bool,
    ) -> FakeCommit:
        date = f"2026-12-01T10:{len(self.commits) // 60 % 60:02d}:{len(self.commits) % 60:02d}Z"
        commit = FakeCommit(
            oid=_oid("commit", headline, *parents),
            files=dict(files),
            parents=parents,
            headline=headline,
            body=body,
            date=date,
            verified=signed,
        )
        self.commits[commit.oid] = commit
        return commit


def _errors(kind: str, message: str) -> Reply:
    return json_reply(
        {
            "data": {"createCommitOnBranch": None},
            "errors": [{"type": kind, "path": ["createCommitOnBranch"], "message": message}],
        }
    )
