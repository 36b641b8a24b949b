"""One repository's PyGithub handle, and the one place its errors become ours.

``RepositoryApi`` is what the calls of ``promotion``, ``reviews`` and ``base_files`` need: the
PyGithub repository (built on first use, so nothing is sent before the first call) and ``api``,
which turns every PyGithub or transport error raised inside into one line: a ``GitHubError`` with
the HTTP status and GitHub's message (never the token), or a ``CommentPermissionError`` when a
write is refused (a fork pull request's read-only token). ``GitHubClient`` holds one and builds
everything else on it, so these modules need not know the client.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cached_property

import requests
from github import Auth, Github, GithubException, RateLimitExceededException
from github.File import File
from github.Repository import Repository
from urllib3.util import Retry

from memory_action.errors import GitHubError
from memory_action.github.pull_request import ChangedFile, CommentPermissionError
from memory_action.version import USER_AGENT

DEFAULT_API_URL = "https://api.github.com"
_PERMISSION_HINT = (
    "a fork pull request's token is read-only; otherwise grant the workflow "
    "`permissions: pull-requests: write`"
)


class RepositoryApi:
    """PyGithub for one repository. ``retries`` applies to reads only (and to connection
    failures): a retried POST could post the comment twice. ``after_write`` runs after every
    write, failed or not (the client forgets the comments it listed)."""

    def __init__(
        self,
        token: str,
        api_url: str,
        repo: str,
        *,
        retries: int,
        timeout_seconds: int,
        after_write: Callable[[], None] = lambda: None,
    ) -> None:
        self._token = token
        self._api_url = api_url.rstrip("/") or DEFAULT_API_URL
        self.repo_name = repo  # owner/name
        self._retries = retries
        self._timeout = timeout_seconds
        self._after_write = after_write

    @cached_property
    def repository(self) -> Repository:
        """The PyGithub repository, built on first use (building it sends nothing)."""
        client = Github(
            auth=Auth.Token(self._token),
            base_url=self._api_url,
            timeout=self._timeout,
            user_agent=USER_AGENT,
            per_page=100,
            retry=_retry_policy(self._retries),
            # A run makes a handful of requests: PyGithub's pauses between them only add latency.
            seconds_between_requests=None,
            seconds_between_writes=None,
            lazy=True,  # objects are fetched when first read, so a comment needs no PR fetch
        )
        return client.get_repo(self.repo_name)

    @contextmanager
    def api(self, action: str, *, write: bool = False) -> Iterator[None]:
        """Turn PyGithub and transport errors raised inside into our one-line errors."""
        try:
            yield
        except RateLimitExceededException as exc:
            raise GitHubError(self._describe(action, exc)) from exc
        except GithubException as exc:
            if write and exc.status in (403, 404):
                message = f"{self._describe(action, exc)} ({_PERMISSION_HINT})"
                raise CommentPermissionError(message) from exc
            raise GitHubError(self._describe(action, exc)) from exc
        except requests.RequestException as exc:
            raise GitHubError(self.one_line(f"{action} failed: {exc}")) from exc
        except RecursionError as exc:  # PyGithub parses answers with json.loads, which recurses
            raise GitHubError(
                f"{action} failed: GitHub's answer was nested too deeply to read"
            ) from exc
        finally:
            if write:
                self._after_write()

    def _describe(self, action: str, exc: GithubException) -> str:
        data = exc.data if isinstance(exc.data, dict) else {}
        message = data.get("message") or exc.message or ""
        return self.one_line(f"{action} failed: HTTP {exc.status} {message}".strip())

    def one_line(self, text: str) -> str:
        """``text`` on one line, without the token."""
        text = " ".join(text.split())  # one line
        return text.replace(self._token, "***") if self._token else text


def changed_file(found: File) -> ChangedFile:
    """A changed file as GitHub lists it (a pull request's files, a comparison's files)."""
    return ChangedFile(
        path=found.filename,
        status=found.status,
        additions=found.additions,
        deletions=found.deletions,
        patch=found.patch or None,
        previous_path=found.previous_filename or None,
    )


def _retry_policy(retries: int) -> Retry | None:
    if retries <= 0:
        return None
    return Retry(
        total=retries,
        backoff_factor=0.5,
        status_forcelist=(500, 502, 503, 504),
        allowed_methods=frozenset({"GET"}),  # a retried POST could post the comment twice
        raise_on_status=False,  # the last answer reaches PyGithub, which reports its status
    )
