"""What the agent and the report know about a pull request, independent of any client library."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from memory_action.errors import MemoryActionException

if TYPE_CHECKING:
    from collections.abc import Sequence

    from memory_action.safety.outgoing import SafeText

# The reactions the agent adds to a comment with commands: all done, or seen but not all done.
ReactionContent = Literal["+1", "eyes"]
# The side of a diff a review comment points at: RIGHT the new file, LEFT the old one.
Side = Literal["RIGHT", "LEFT"]
MAX_FILE_BYTES = 2 * 1024 * 1024  # larger files are no use to a reviewing model
_BINARY_SNIFF = 8_192  # a NUL byte in the first 8 KiB means binary, as git decides


def decode_text(data: bytes) -> str | None:
    """A file's bytes as text; None when they are binary or not UTF-8 (no use to the model)."""
    if b"\x00" in data[:_BINARY_SNIFF]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


@dataclass(frozen=True, kw_only=True)
class ChangedFile:
    path: str
    status: str  # added | removed | modified | renamed | copied | changed | unchanged
    additions: int
    deletions: int
    patch: str | None  # None when GitHub gives no patch (binary or too large)
    previous_path: str | None = None


@dataclass(frozen=True, kw_only=True)
class PullRequestInfo:
    number: int
    title: str
    body: str
    author: str
    html_url: str
    head_sha: str
    head_ref: str
    base_ref: str
    draft: bool = False
    base_sha: str = ""  # the base branch's commit the pull request is compared with


class PullRequestReader(Protocol):
    """Read access to one pull request, as the agent's tools need it."""

    def info(self) -> PullRequestInfo: ...

    def changed_files(self) -> list[ChangedFile]: ...

    def file_content(self, path: str) -> str | None:
        """The file's text at the head commit; None if it does not exist there or is binary."""
        ...

    def base_file_content(self, path: str) -> str | None:
        """The file's text at the base commit (trusted: the pull request cannot change it)."""
        ...


@runtime_checkable
class PrefetchingReader(Protocol):
    """A reader that can read several files at the base commit in one request (GitHub's)."""

    def prefetch_base_files(self, paths: Sequence[str]) -> None: ...


@dataclass(frozen=True, kw_only=True)
class PostedComment:
    url: str
    created: bool  # False when an earlier comment of this agent was updated


class CommentPermissionError(MemoryActionException):
    """The token may not comment (a fork PR's read-only token); the review goes to the summary."""


class PullRequestCommenter(Protocol):
    """Posts the one sticky comment of an agent on a pull request."""

    def upsert_sticky_comment(self, pr_number: int, marker: str, body: SafeText) -> PostedComment:
        """Update the comment containing ``marker``, or create it; CommentPermissionError on 403."""
        ...

    def find_sticky_comment(self, pr_number: int, marker: str) -> str | None:
        """The body of the comment containing ``marker``, if there is one."""
        ...
