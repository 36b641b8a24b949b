"""What every route of the GitHub fakes shares: the request, the reply, JSON and paging.

``paged`` answers one page of a list as GitHub does: ``per_page`` (30 by default, at most 100),
``page``, and a ``Link`` header naming the next and the last page while more follow.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import parse_qs, urlencode, urlsplit

GITHUB_MAX_PER_PAGE = 100  # GitHub's cap on per_page; without per_page it pages by 30
GITHUB_DEFAULT_PER_PAGE = 30

Reply = tuple[int, dict[str, str], str]


@dataclass(frozen=True, kw_only=True)
class ApiRequest:
    """One request to the API, whatever carried it: ``url`` is absolute (query included)."""

    method: str
    url: str
    body: str = ""

    @property
    def query(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.url).query)

    def json(self) -> Any:
        return json.loads(self.body or "{}")


def json_reply(value: Any, status: int = 200) -> Reply:
    return status, {"Content-Type": "application/json"}, json.dumps(value)


def error_reply(status: int, message: str, *errors: str | dict[str, Any]) -> Reply:
    """GitHub's error body: a message, and for a 422 the list of what failed validation."""
    body: dict[str, Any] = {"message": message, "documentation_url": "https://docs.github.com/rest"}
    if errors:
        body["errors"] = list(errors)
    return json_reply(body, status)


def paged(request: ApiRequest, items: list[Any], api_url: str, max_per_page: int) -> Reply:
    """One page of ``items``, with the ``Link`` header GitHub sends when more pages follow."""
    query = {name: values[0] for name, values in request.query.items()}
    per_page = min(int(query.get("per_page", GITHUB_DEFAULT_PER_PAGE)), max_per_page)
    page = int(query.get("page", "1"))
    last = max(1, -(-len(items) // per_page))
    status, headers, body = json_reply(items[(page - 1) * per_page : page * per_page])
    if page < last:
        url = f"{api_url}{urlsplit(request.url).path}"
        links = {"next": page + 1, "last": last}
        headers["Link"] = ", ".join(
            f'<{url}?{urlencode({**query, "page": n})}>; rel="{rel}"' for rel, n in links.items()
        )
    return status, headers, body


class PullShape(Protocol):
    """What the review fake reads of a pull request."""

    @property
    def head_sha(self) -> str: ...

    @property
    def files(self) -> list[dict[str, Any]]: ...


class Host(Protocol):
    """What the review and git-data fakes use of the ``FakeGitHub`` they belong to."""

    read_only: bool
    next_id: int

    @property
    def viewer(self) -> str | None: ...

    @property
    def repo_url(self) -> str: ...

    @property
    def pulls(self) -> Mapping[int, PullShape]: ...

    def page(self, request: ApiRequest, items: list[dict[str, Any]]) -> Reply: ...
