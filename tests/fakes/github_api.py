"""A stateful fake of the few GitHub REST endpoints a run uses, on ``responses``.

One repository (``octo-org/octo-repo``), its pull requests, their changed files, file contents at
the head commit and the issue comments, answered as PyGithub 2.x requests them (it sends every
request to ``host:443``). ``read_only=True`` answers comment writes with 403, like a fork's token.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import requests
import responses

OWNER, NAME = "octo-org", "octo-repo"
REPOSITORY = f"{OWNER}/{NAME}"
API_URL = "https://api.github.com"
REQUEST_BASE = f"{API_URL}:443/repos/{REPOSITORY}"
ANSWER_BASE = f"{API_URL}/repos/{REPOSITORY}"
HEAD_SHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
BOT = {"login": "github-actions[bot]", "id": 41898282, "type": "Bot"}

Reply = tuple[int, dict[str, str], str]


@dataclass
class FakePullRequest:
    number: int = 7
    title: str = "Add a retry to the fetcher"
    body: str = "Retries flaky downloads."
    author: str = "mona"
    base_ref: str = "main"
    head_ref: str = "retry-fetcher"
    files: list[dict[str, Any]] = field(default_factory=list)
    contents: dict[str, str] = field(default_factory=dict)  # path → text at the head commit


@dataclass
class FakeGitHub:
    pulls: dict[int, FakePullRequest] = field(default_factory=dict)
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    default_branch: str = "main"
    read_only: bool = False
    next_id: int = 1000
    calls: list[tuple[str, str]] = field(default_factory=list)

    def add_pull(self, pull: FakePullRequest) -> FakePullRequest:
        self.pulls[pull.number] = pull
        return pull

    @contextmanager
    def serve(self) -> Iterator[FakeGitHub]:
        """Answer GitHub's API for the duration of the block; any other request fails."""
        with responses.RequestsMock(assert_all_requests_are_fired=False) as api:
            routes: list[tuple[str, str, Any]] = [
                ("GET", r"", self._repo),
                ("GET", r"/pulls/(\d+)", self._pull),
                ("GET", r"/pulls/(\d+)/files", self._files),
                ("GET", r"/contents/(.+)", self._contents),
                ("GET", r"/issues/(\d+)", self._issue),
                ("GET", r"/issues/(\d+)/comments", self._list_comments),
                ("POST", r"/issues/(\d+)/comments", self._create_comment),
                ("PATCH", r"/issues/comments/(\d+)", self._edit_comment),
            ]
            for method, path, handler in routes:
                pattern = re.compile(rf"{re.escape(REQUEST_BASE)}{path}(\?.*)?$")
                api.add_callback(method, pattern, callback=self._recorded(handler, pattern))
            yield self

    def _recorded(self, handler: Any, pattern: re.Pattern[str]) -> Any:
        def callback(request: requests.PreparedRequest) -> Reply:
            url = str(request.url)
            self.calls.append((str(request.method), url))
            match = pattern.match(url)
            assert match is not None
            return handler(request, *match.groups()[:-1])  # type: ignore[no-any-return]

        return callback

    # -- handlers ---------------------------------------------------------------------------------

    def _repo(self, _request: requests.PreparedRequest) -> Reply:
        return _json(
            {
                "id": 1,
                "name": NAME,
                "full_name": REPOSITORY,
                "default_branch": self.default_branch,
                "url": ANSWER_BASE,
                "owner": {"login": OWNER, "type": "Organization"},
            }
        )

    def _pull(self, _request: requests.PreparedRequest, number: str) -> Reply:
        pull = self.pulls.get(int(number))
        if pull is None:
            return 404, {}, json.dumps({"message": "Not Found"})
        return _json(_pull_json(pull))

    def _files(self, request: requests.PreparedRequest, number: str) -> Reply:
        pull = self.pulls[int(number)]
        query = parse_qs(urlsplit(str(request.url)).query)
        page = int(query.get("page", ["1"])[0])
        return _json(pull.files if page == 1 else [])

    def _contents(self, _request: requests.PreparedRequest, path: str) -> Reply:
        path = unquote(path)
        for pull in self.pulls.values():
            if path in pull.contents:
                data = pull.contents[path].encode()
                return _json(
                    {
                        "type": "file",
                        "encoding": "base64",
                        "size": len(data),
                        "name": path,
                        "path": path,
                        "sha": "0" * 40,
                        "url": f"{ANSWER_BASE}/contents/{path}",
                        "content": base64.encodebytes(data).decode(),
                    }
                )
        return 404, {}, json.dumps({"message": "Not Found"})

    def _issue(self, _request: requests.PreparedRequest, number: str) -> Reply:
        return _json({"number": int(number), "url": f"{ANSWER_BASE}/issues/{number}"})

    def _list_comments(self, _request: requests.PreparedRequest, number: str) -> Reply:
        return _json(self.comments.get(int(number), []))

    def _create_comment(self, request: requests.PreparedRequest, number: str) -> Reply:
        if self.read_only:
            return 403, {}, json.dumps({"message": "Resource not accessible by integration"})
        self.next_id += 1
        comment = {
            "id": self.next_id,
            "url": f"{ANSWER_BASE}/issues/comments/{self.next_id}",
            "html_url": f"https://github.com/{REPOSITORY}/pull/{number}#issuecomment-{self.next_id}",
            "body": json.loads(request.body or "{}")["body"],
            "user": BOT,
        }
        self.comments.setdefault(int(number), []).append(comment)
        return 201, {}, json.dumps(comment)

    def _edit_comment(self, request: requests.PreparedRequest, comment_id: str) -> Reply:
        if self.read_only:
            return 403, {}, json.dumps({"message": "Resource not accessible by integration"})
        for comments in self.comments.values():
            for comment in comments:
                if comment["id"] == int(comment_id):
                    comment["body"] = json.loads(request.body or "{}")["body"]
                    return _json(comment)
        return 404, {}, json.dumps({"message": "Not Found"})

    def bodies(self, number: int) -> list[str]:
        return [comment["body"] for comment in self.comments.get(number, [])]


def _json(value: Any) -> Reply:
    return 200, {"Content-Type": "application/json"}, json.dumps(value)


def _pull_json(pull: FakePullRequest) -> dict[str, Any]:
    repo = {"full_name": REPOSITORY, "name": NAME, "owner": {"login": OWNER}}
    return {
        "url": f"{ANSWER_BASE}/pulls/{pull.number}",
        "html_url": f"https://github.com/{REPOSITORY}/pull/{pull.number}",
        "number": pull.number,
        "state": "open",
        "title": pull.title,
        "body": pull.body,
        "draft": False,
        "user": {"login": pull.author, "type": "User"},
        "head": {"ref": pull.head_ref, "sha": HEAD_SHA, "repo": repo},
        "base": {"ref": pull.base_ref, "sha": "1" * 40, "repo": repo},
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
