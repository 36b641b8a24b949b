"""A stateful fake of the few GitHub REST endpoints a run uses.

One repository (``octo-org/octo-repo``), its pull requests, their changed files (paginated as
GitHub does: ``per_page``, ``page``, a ``Link`` header), file contents at the head and base
commits and the issue comments. ``FakeGitHub.answer`` decides every answer, and checks it and
the request against GitHub's published descriptions (``contract``; answers are completed from
GitHub's documented examples). ``http`` serves it over a real socket on 127.0.0.1 (what
``memory-agent eval`` points a run at); the tests also give it to PyGithub in-process through
``responses`` (``tests/fakes/github_api.py``).
``read_only=True`` answers comment writes with 403, like a fork's token. Pull request reviews,
their comments, reactions and threads and commit comparisons are ``github.reviews``
(``reviews``); the git data API and ``createCommitOnBranch`` are
``github.git`` (``git_data``).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit

from memory_action.evaluation.github import contract
from memory_action.evaluation.github.contract import documented
from memory_action.evaluation.github.git_data import FakeGitData
from memory_action.evaluation.github.reviews import FakeReviews
from memory_action.evaluation.github.wire import (
    GITHUB_MAX_PER_PAGE,
    ApiRequest,
    Reply,
    error_reply,
    json_reply,
    paged,
)

CONTENTS = "/repos/{owner}/{repo}/contents/{path}"
COMMENT = "/repos/{owner}/{repo}/issues/comments/{comment_id}"


OWNER, NAME = "octo-org", "octo-repo"
REPOSITORY = f"{OWNER}/{NAME}"
API_URL = "https://api.github.com"
ANSWER_BASE = f"{API_URL}/repos/{REPOSITORY}"
HEAD_SHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
BASE_SHA = "1" * 40
BOT_LOGIN = "github-actions[bot]"
BOT = {"login": BOT_LOGIN, "id": 41898282, "type": "Bot"}
AUTHOR = "mona"
WORKFLOW_PATH = ".github/workflows/review.yml"
WORKFLOW_REF = f"{REPOSITORY}/{WORKFLOW_PATH}@refs/heads/main"
# The change most whole-run tests review: a retry loop added to src/fetch.py.
FETCH_PATCH = (
    "@@ -1,2 +1,3 @@\n def fetch(url):\n+    for attempt in range(3):\n     return get(url)\n"
)
FETCH_SOURCE = "def fetch(url):\n    return get(url)\n"


@dataclass(kw_only=True)
class FakePullRequest:
    number: int = 7
    title: str = "Add a retry to the fetcher"
    body: str = "Retries flaky downloads."
    author: str = AUTHOR
    head_repo: str = REPOSITORY  # another owner/name: a fork
    base_ref: str = "main"
    head_ref: str = "retry-fetcher"
    files: list[dict[str, Any]] = field(default_factory=list)
    # path → text (or bytes) at the head commit, and at the base commit
    contents: Mapping[str, str | bytes] = field(default_factory=dict)
    base_contents: Mapping[str, str | bytes] = field(default_factory=dict)
    merged_in: str | None = None  # the commit sha that merged it (None: open)
    head_sha: str = HEAD_SHA
    base_sha: str = BASE_SHA


@dataclass(kw_only=True)
class FakeGitHub:
    pulls: dict[int, FakePullRequest] = field(default_factory=dict)
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    default_branch: str = "main"
    read_only: bool = False
    next_id: int = 1000
    calls: list[tuple[str, str]] = field(default_factory=list)
    # login → permission (admin | maintain | write | triage | read); others: 404. The author of
    # the fakes' pull requests and comments, mona, has write access unless a test says otherwise.
    permissions: dict[str, str] = field(default_factory=dict)
    # login → what the permission look-up gives instead, as it comes (a broken answer on
    # purpose: the contract check records it), or an exception it raises in the client
    permission_replies: dict[str, Reply | Exception] = field(default_factory=dict)
    # comment id → logins that edited it (besides the bot's own writes)
    edits: dict[int, list[str]] = field(default_factory=dict)
    # issue comment id → the reactions the token added (``eyes``, ``+1``)
    reactions: dict[int, list[str]] = field(default_factory=dict)
    cache: CacheRest | None = None  # answers the cache REST API; None: 403 (no permission)
    api_url: str = API_URL  # the API root that URLs in answers start with
    max_per_page: int = GITHUB_MAX_PER_PAGE  # lower it to make a client follow Link headers
    unknown: list[tuple[str, str]] = field(default_factory=list)  # requests no route answered
    # Every request as it came, body included: what the promise tests read everything sent in.
    received: list[ApiRequest] = field(default_factory=list)

    @property
    def repo_url(self) -> str:
        return f"{self.api_url}/repos/{REPOSITORY}"

    cache_read_only: bool = False  # `actions: read` without `write`: deletes get 403
    # The login GraphQL ``viewer`` names for the token (None: the query fails).
    viewer: str | None = BOT_LOGIN
    # Workflow runs: id → (repository, workflow path), or None for a 404. Any other id is a run
    # of WORKFLOW_PATH in REPOSITORY, as every run of ``ActionRunner`` is.
    runs: dict[int, tuple[str, str] | None] = field(default_factory=dict)
    # The runs that happened, oldest first, as the workflow's run listing answers (the harness
    # that ran them names them); each is what ``runs`` says of it.
    workflow_runs: list[int] = field(default_factory=list)
    runs_listing_fails: bool = False  # listing a workflow's runs answers 403
    base_files_fail: bool = False  # the GraphQL read of base-commit files answers an error
    # path → the tree entry GraphQL answers for it at a base commit (a symlink, a directory, a
    # truncated text), in place of the regular file ``base_contents`` gives
    base_entries: dict[str, dict[str, Any]] = field(default_factory=dict)

    reviews: FakeReviews = field(init=False)
    git: FakeGitData = field(init=False)  # the git data API and createCommitOnBranch

    def __post_init__(self) -> None:
        self.permissions.setdefault(AUTHOR, "write")
        self.reviews = FakeReviews(github=self)
        self.git = FakeGitData(github=self)

    def merge(self, number: int, sha: str) -> None:
        self.pulls[number].merged_in = sha

    def edit_comment_as(self, number: int, login: str, body: str) -> None:
        """A person edits our sticky comment (e.g. unticks an item)."""
        comment = self.comments[number][0]
        comment["body"] = body
        self.edits.setdefault(comment["id"], []).append(login)

    def add_pull(self, pull: FakePullRequest) -> FakePullRequest:
        self.pulls[pull.number] = pull
        return pull

    def answer(self, request: ApiRequest) -> Reply | None:
        """The answer to ``request`` (recorded in ``calls``); None when no route matches it
        (recorded in ``unknown``)."""
        self.calls.append((request.method, request.url))
        self.received.append(request)
        reply = self._route(request)
        if contract.enforced():
            answered = (reply[0], reply[2]) if reply is not None else None
            contract.record(contract.check(request.method, request.url, request.body, answered))
        return reply

    def _route(self, request: ApiRequest) -> Reply | None:
        path = unquote(urlsplit(request.url).path)
        for method, pattern, handler in self._routes():
            match = pattern.fullmatch(path)
            if method == request.method and match is not None:
                return handler(request, *match.groups())
        self.unknown.append((request.method, request.url))
        return None

    def _routes(self) -> list[tuple[str, re.Pattern[str], Callable[..., Reply]]]:
        repo = f"(?:/api/v3)?/repos/{re.escape(REPOSITORY)}"
        routes: list[tuple[str, str, Callable[..., Reply]]] = [
            ("GET", "", self._repo),
            ("GET", r"/pulls/(\d+)", self._pull),
            ("GET", r"/pulls/(\d+)/files", self._files),
            ("GET", r"/contents/(.+)", self._contents),
            ("GET", r"/issues/(\d+)", self._issue),
            ("GET", r"/issues/(\d+)/comments", self._list_comments),
            ("POST", r"/issues/(\d+)/comments", self._create_comment),
            ("PATCH", r"/issues/comments/(\d+)", self._edit_comment),
            ("DELETE", r"/issues/comments/(\d+)", self._delete_comment),
            ("GET", r"/issues/comments/(\d+)", self._get_comment),
            ("POST", r"/issues/comments/(\d+)/reactions", self._create_reaction),
            ("GET", r"/commits/([0-9a-f]+)/pulls", self._commit_pulls),
            ("GET", r"/collaborators/([^/]+)/permission", self._permission),
            ("GET", r"/actions/runs/(\d+)", self._workflow_run),
            ("GET", r"/actions/workflows/([^/]+)/runs", self._list_workflow_runs),
            ("GET", r"/actions/caches", self._list_caches),
            ("DELETE", r"/actions/caches/(\d+)", self._delete_cache),
            *self.reviews.routes(),
            *self.git.routes(),
        ]
        compiled = [(method, re.compile(repo + path), handler) for method, path, handler in routes]
        graphql = re.compile(r"(?:/api)?/graphql")
        return [*compiled, ("POST", graphql, self._graphql)]

    # -- handlers ---------------------------------------------------------------------------------

    def _repo(self, _request: ApiRequest) -> Reply:
        repository = repositoryjson_reply(self.repo_url, default_branch=self.default_branch)
        answer = documented("GET", "/repos/{owner}/{repo}", repository)
        for fork_only in ("parent", "source"):  # GitHub's example is a fork; ours is not
            answer.pop(fork_only, None)
        return json_reply(answer)

    def _pull(self, _request: ApiRequest, number: str) -> Reply:
        pull = self.pulls.get(int(number))
        if pull is None:
            return error_reply(404, "Not Found")
        return json_reply(
            documented(
                "GET",
                "/repos/{owner}/{repo}/pulls/{pull_number}",
                pulljson_reply(pull, self.repo_url),
            )
        )

    def _files(self, request: ApiRequest, number: str) -> Reply:
        files = documented(
            "GET", "/repos/{owner}/{repo}/pulls/{pull_number}/files", self.pulls[int(number)].files
        )
        return self.page(request, files)

    def page(self, request: ApiRequest, items: list[dict[str, Any]]) -> Reply:
        """One page of a list, as GitHub pages it (``github_wire.paged``)."""
        return paged(request, items, self.api_url, self.max_per_page)

    def _contents(self, request: ApiRequest, path: str) -> Reply:
        path = unquote(path)
        ref = request.query.get("ref", [HEAD_SHA])[0]
        # The pull requests at that commit; any other ref reads a head commit.
        at_ref = [p for p in self.pulls.values() if ref in (p.head_sha, p.base_sha)]
        for pull in at_ref or self.pulls.values():
            contents = pull.base_contents if ref == pull.base_sha else pull.contents
            if path in contents:
                text = contents[path]
                data = text.encode() if isinstance(text, str) else text
                return json_reply(
                    documented(
                        "GET",
                        CONTENTS,
                        {
                            "type": "file",
                            "encoding": "base64",
                            "size": len(data),
                            "name": path,
                            "path": path,
                            "sha": "0" * 40,
                            "url": f"{self.repo_url}/contents/{path}",
                            "content": base64.encodebytes(data).decode(),
                        },
                    )
                )
        return error_reply(404, "Not Found")

    def _issue(self, _request: ApiRequest, number: str) -> Reply:
        issue = {"number": int(number), "url": f"{self.repo_url}/issues/{number}"}
        return json_reply(documented("GET", "/repos/{owner}/{repo}/issues/{issue_number}", issue))

    def _list_comments(self, request: ApiRequest, number: str) -> Reply:
        comments = self.comments.get(int(number), [])
        return self.page(
            request,
            documented("GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments", comments),
        )

    def _create_comment(self, request: ApiRequest, number: str) -> Reply:
        if self.read_only:
            return error_reply(403, "Resource not accessible by integration")
        author = self.viewer or BOT_LOGIN
        comment = self.add_comment(int(number), json.loads(request.body or "{}")["body"], author)
        return json_reply(
            documented(
                "POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments", comment, 201
            ),
            201,
        )

    def add_comment(self, number: int, body: str, login: str) -> dict[str, Any]:
        """A comment by ``login`` (a bot when it ends with "[bot]") on pull request ``number``."""
        self.next_id += 1
        kind = "Bot" if login.endswith("[bot]") else "User"
        comment = {
            "id": self.next_id,
            "node_id": f"IC_node{self.next_id}",
            "url": f"{self.repo_url}/issues/comments/{self.next_id}",
            "html_url": f"https://github.com/{REPOSITORY}/pull/{number}#issuecomment-{self.next_id}",
            "body": body,
            "user": {"login": login, "id": 41898282 if kind == "Bot" else 1, "type": kind},
            "created_at": "2026-11-29T10:00:00Z",
            "updated_at": "2026-11-29T10:00:00Z",
        }
        self.comments.setdefault(number, []).append(comment)
        return comment

    def _edit_comment(self, request: ApiRequest, comment_id: str) -> Reply:
        if self.read_only:
            return error_reply(403, "Resource not accessible by integration")
        for comments in self.comments.values():
            for comment in comments:
                if comment["id"] == int(comment_id):
                    comment["body"] = json.loads(request.body or "{}")["body"]
                    return json_reply(documented("PATCH", COMMENT, comment))
        return error_reply(404, "Not Found")

    def _delete_comment(self, _request: ApiRequest, comment_id: str) -> Reply:
        if self.read_only:
            return error_reply(403, "Resource not accessible by integration")
        for number, comments in self.comments.items():
            kept = [comment for comment in comments if comment["id"] != int(comment_id)]
            if len(kept) < len(comments):
                self.comments[number] = kept
                return 204, {}, ""
        return error_reply(404, "Not Found")

    def _get_comment(self, _request: ApiRequest, comment_id: str) -> Reply:
        for comments in self.comments.values():
            for comment in comments:
                if comment["id"] == int(comment_id):
                    return json_reply(documented("GET", COMMENT, comment))
        return error_reply(404, "Not Found")

    def _create_reaction(self, request: ApiRequest, comment_id: str) -> Reply:
        """A reaction to an issue comment: any id is a comment (a person's comment that
        triggered the run need not be in ``comments``)."""
        if self.read_only:
            return error_reply(403, "Resource not accessible by integration")
        content = json.loads(request.body or "{}")["content"]
        self.reactions.setdefault(int(comment_id), []).append(content)
        reaction = {"id": self.next_id, "content": content, "user": BOT}
        return json_reply(documented("POST", COMMENT + "/reactions", reaction, 201), status=201)

    def _commit_pulls(self, _request: ApiRequest, sha: str) -> Reply:
        pulls = [p for p in self.pulls.values() if p.merged_in == sha]
        found = [pulljson_reply(p, self.repo_url) for p in pulls]
        return json_reply(
            documented("GET", "/repos/{owner}/{repo}/commits/{commit_sha}/pulls", found)
        )

    def _permission(self, _request: ApiRequest, login: str) -> Reply:
        given = self.permission_replies.get(unquote(login))
        if isinstance(given, Exception):
            raise given
        if given is not None:
            return given
        permission = self.permissions.get(unquote(login))
        if permission is None:
            return error_reply(404, "Not Found")
        answer = {
            "permission": permission,
            "role_name": permission,
            "user": {"login": login, "role_name": permission},
        }
        return json_reply(
            documented("GET", "/repos/{owner}/{repo}/collaborators/{username}/permission", answer)
        )

    def _workflow_run(self, _request: ApiRequest, run_id: str) -> Reply:
        found = self.runs.get(int(run_id), (REPOSITORY, WORKFLOW_PATH))
        if found is None:
            return error_reply(404, "Not Found")
        repository, path = found
        run = {"id": int(run_id), "path": path, "repository": {"full_name": repository}}
        return json_reply(documented("GET", "/repos/{owner}/{repo}/actions/runs/{run_id}", run))

    def _list_workflow_runs(self, request: ApiRequest, workflow: str) -> Reply:
        """The newest runs of the workflow file ``workflow`` in this repository, one page."""
        if self.runs_listing_fails:
            return error_reply(403, "Resource not accessible by integration")
        per_page = int(request.query.get("per_page", ["30"])[0])
        listed = []
        for run_id in reversed(self.workflow_runs):
            found = self.runs.get(run_id, (REPOSITORY, WORKFLOW_PATH))
            if found is None or found[0] != REPOSITORY or found[1].rsplit("/", 1)[-1] != workflow:
                continue
            listed.append({"id": run_id, "path": found[1], "repository": {"full_name": REPOSITORY}})
        page = listed[:per_page]
        answer = {"total_count": len(listed), "workflow_runs": page}
        template = "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs"
        return json_reply(documented("GET", template, answer))

    def _graphql(self, request: ApiRequest) -> Reply:
        query = json.loads(request.body or "{}")
        if self.git.handles(query["query"]):
            return self.git.graphql(query)
        if "BaseFiles" in query["query"]:
            return self._base_files(query["variables"])
        if "reviewThreads" in query["query"]:
            return self.reviews.threads_graphql(query)
        if "viewer" in query["query"]:
            return self._viewer()
        node_id = query["variables"]["id"]
        for comments in self.comments.values():
            for comment in comments:
                if comment["node_id"] == node_id:
                    return json_reply({"data": {"node": self._edit_history(comment)}})
        return json_reply({"data": {"node": None}})

    def _viewer(self) -> Reply:
        if self.viewer is None:
            return json_reply({"errors": [{"message": "Resource not accessible by integration"}]})
        # The schema types viewer as User!: no other __typename can come back.
        return json_reply({"data": {"viewer": {"__typename": "User", "login": self.viewer}}})

    def _base_files(self, variables: dict[str, Any]) -> Reply:
        """``base_files``' query: each path at a pull request's base commit (``base_contents``),
        as a regular file's tree entry and blob; null for a path not there."""
        if self.base_files_fail:
            return json_reply({"errors": [{"message": "Something went wrong"}]})
        pulls = [p for p in self.pulls.values() if variables["rev"] in (p.base_sha, p.base_ref)]
        if not pulls:
            return json_reply({"data": {"repository": {"object": None}}})
        files: dict[str, Any] = {"__typename": "Commit"}
        for name, path in variables.items():
            if not re.fullmatch(r"p\d+", name):
                continue
            text = pulls[0].base_contents.get(path)
            data = text.encode() if isinstance(text, str) else text
            entry = None if data is None else _tree_entry(data)
            files[f"f{name[1:]}"] = self.base_entries.get(path, entry)
        return json_reply({"data": {"repository": {"object": files}}})

    def _edit_history(self, comment: dict[str, Any]) -> dict[str, Any]:
        editors = self.edits.get(comment["id"], [])
        nodes = [
            {"editor": _actor(login), "editedAt": "2026-11-29T12:00:00Z", "deletedBy": None}
            for login in editors
        ]
        return {
            "__typename": "IssueComment",
            "author": _actor(comment["user"]["login"]),
            "body": comment["body"],
            "editor": _actor(editors[-1]) if editors else None,
            "lastEditedAt": "2026-11-29T12:00:00Z" if editors else None,
            "userContentEdits": {"totalCount": len(nodes), "nodes": nodes},
        }

    def _list_caches(self, request: ApiRequest) -> Reply:
        if self.cache is None:
            return error_reply(403, "Resource not accessible by integration")
        query = request.query
        page, per_page = int(query.get("page", ["1"])[0]), int(query.get("per_page", ["30"])[0])
        entries = self.cache.rest_list(query.get("key", [""])[0], query.get("ref", [""])[0])
        shown = entries[(page - 1) * per_page : page * per_page]
        answer = {"total_count": len(entries), "actions_caches": shown}
        return json_reply(documented("GET", "/repos/{owner}/{repo}/actions/caches", answer))

    def _delete_cache(self, _request: ApiRequest, entry_id: str) -> Reply:
        if self.cache is None or self.cache_read_only:
            return error_reply(403, "Resource not accessible by integration")
        return (
            (204, {}, "")
            if self.cache.rest_delete(int(entry_id))
            else error_reply(404, "Not Found")
        )

    def bodies(self, number: int) -> list[str]:
        return [comment["body"] for comment in self.comments.get(number, [])]


class CacheRest(Protocol):
    """What answers the cache REST API: the fake cache service."""

    def rest_list(self, key_prefix: str, ref: str) -> list[dict[str, Any]]: ...

    def rest_delete(self, entry_id: int) -> bool: ...


def _tree_entry(data: bytes) -> dict[str, Any]:
    """A regular file's tree entry (mode 100644) with its blob, as GraphQL answers."""
    binary = b"\x00" in data
    blob = {
        "__typename": "Blob",
        "byteSize": len(data),
        "isBinary": binary,
        "isTruncated": False,
        "text": None if binary else data.decode("utf-8", errors="replace"),
    }
    return {"mode": 0o100644, "type": "blob", "object": blob}


def _actor(login: str) -> dict[str, str]:
    """A GraphQL actor: bots lose their "[bot]" suffix there."""
    if login.endswith("[bot]"):
        return {"__typename": "Bot", "login": login.removesuffix("[bot]")}
    return {"__typename": "User", "login": login}


def repositoryjson_reply(base: str = ANSWER_BASE, default_branch: str = "main") -> dict[str, Any]:
    """The repository as the API answers it; ``base`` is its API URL."""
    return {
        "id": 1,
        "name": NAME,
        "full_name": REPOSITORY,
        "default_branch": default_branch,
        "url": base,
        "owner": {"login": OWNER, "type": "Organization"},
        "fork": False,
        "language": "Python",  # required, and missing from GitHub's example
    }


def pulljson_reply(pull: FakePullRequest, base: str = ANSWER_BASE) -> dict[str, Any]:
    """The pull request as the API answers it; ``base`` is the repository's API URL."""
    repo = {"full_name": REPOSITORY, "name": NAME, "owner": {"login": OWNER}}
    owner, name = pull.head_repo.split("/")
    head_repo = {"full_name": pull.head_repo, "name": name, "owner": {"login": owner}}
    return {
        "url": f"{base}/pulls/{pull.number}",
        "html_url": f"https://github.com/{REPOSITORY}/pull/{pull.number}",
        "number": pull.number,
        "state": "open",
        "title": pull.title,
        "body": pull.body,
        "draft": False,
        "user": {"login": pull.author, "type": "User"},
        "head": {"ref": pull.head_ref, "sha": pull.head_sha, "repo": head_repo},
        "base": {"ref": pull.base_ref, "sha": pull.base_sha, "repo": repo},
        "merged_at": "2026-11-29T11:00:00Z" if pull.merged_in else None,
        "merge_commit_sha": pull.merged_in,
        "requested_teams": [],
    }


def changed_file(path: str, patch: str, status: str = "modified") -> dict[str, Any]:
    additions = sum(1 for line in patch.splitlines() if line.startswith("+"))
    deletions = sum(1 for line in patch.splitlines() if line.startswith("-"))
    return {
        "filename": path,
        "status": status,
        "additions": additions,
        "deletions": deletions,
        "changes": additions + deletions,
        "patch": patch,
        "sha": "2" * 40,
    }
