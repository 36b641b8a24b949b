"""The evaluation's GitHub fake (``memory_action.evaluation.github.api``), served to PyGithub
in-process through ``responses`` for the tests (PyGithub 2.x sends every request to
``host:443``); ``memory-agent eval`` serves the same fake over a socket instead."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import requests
import responses

from memory_action.evaluation.github import api
from memory_action.evaluation.github.api import *  # noqa: F403 - the fake's names, for the tests
from memory_action.evaluation.github.api import (
    API_URL,
    FETCH_PATCH,
    FETCH_SOURCE,
    ApiRequest,
    FakePullRequest,
    Reply,
    changed_file,
)


class FakeGitHub(api.FakeGitHub):
    @contextmanager
    def serve(self) -> Iterator[FakeGitHub]:
        """Answer GitHub's API in-process for the duration of the block; a request no route
        answers fails with a ConnectionError."""
        with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
            everything = re.compile(rf"{re.escape(API_URL)}:443/.*")
            for method in ("GET", "POST", "PATCH", "DELETE"):
                mock.add_callback(method, everything, callback=self._in_process)
            yield self

    def _in_process(self, request: requests.PreparedRequest) -> Reply:
        body = request.body.decode() if isinstance(request.body, bytes) else request.body or ""
        reply = self.answer(ApiRequest(method=str(request.method), url=str(request.url), body=body))
        if reply is None:
            raise requests.ConnectionError(
                f"FakeGitHub: no route for {request.method} {request.url}"
            )
        return reply


@contextmanager
def serve_fetch_pull(patch: str = FETCH_PATCH) -> Iterator[FakeGitHub]:
    """A ``FakeGitHub`` answering for pull request 7, which changes ``src/fetch.py`` by
    ``patch``; the file at the head commit is ``FETCH_SOURCE``."""
    fake = FakeGitHub()
    fake.add_pull(
        FakePullRequest(
            files=[changed_file("src/fetch.py", patch)], contents={"src/fetch.py": FETCH_SOURCE}
        )
    )
    with fake.serve():
        yield fake
