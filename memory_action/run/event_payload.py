"""The fields of the event payload (``GITHUB_EVENT_PATH``) the run reads, parsed with pydantic.

``context.load_context`` reads them one part at a time, in the order it decides in: an event it
ends with a notice is never refused for a field it would not have read. A problem is an
``EventError`` in the words the action has always used: a field the payload does not have
(``has no 'base.ref'``), one that is not text, or not an object, or not a positive number. Paths
inside ``pull_request`` or ``issue`` are named from there (``'number'``), a wrong number from the
payload's top (``'pull_request.number'``).

Text is what JSON gives as a string or an integer (GitHub sends some ids as numbers); a missing
optional field, or a null one, takes its default.

Imported only for the events the action handles: an unhandled event's notice does not wait for
pydantic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, TypeVar

from pydantic import AliasPath, BaseModel, BeforeValidator, Field, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails, PydanticCustomError

from memory_action.errors import EventError
from memory_action.safety.untrusted_json import first_error, location

MAX_PUSH_COMMITS = 20  # a push event lists at most 20 commits
_NULL_SHA = "0" * 40  # "after" of a deleted branch, "before" of a new one

_NOT_TEXT = "not_text"
_NOT_NUMBER = "not_positive_number"


def _as_text(value: object) -> str:
    if not isinstance(value, str | int):  # ``true`` is an ``int``: read as "True", as ever
        raise PydanticCustomError(_NOT_TEXT, "not text")
    return str(value)


def _text_or(default: str) -> Callable[[object], str]:
    return lambda value: default if value is None else _as_text(value)


def _positive_number(value: object) -> int:
    """A positive JSON integer (``true`` is an ``int`` in Python, not a number here)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise PydanticCustomError(_NOT_NUMBER, "not a positive number")
    return value


def _positive_number_or_none(value: object) -> int | None:
    return None if value is None else _positive_number(value)


def _id_or_none(value: object) -> int | None:
    """A positive number, or None for anything else (an id the run can do without)."""
    try:
        return _positive_number(value)
    except PydanticCustomError:
        return None


def _object_or_none(value: object) -> object:
    return value if isinstance(value, Mapping) else None


def _objects(value: object) -> list[object]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


Text = Annotated[str, BeforeValidator(_as_text)]
Number = Annotated[int, BeforeValidator(_positive_number)]
NumberOrNone = Annotated[int | None, BeforeValidator(_positive_number_or_none)]


def _at(*path: str, default: str | None) -> Any:
    """An optional field at ``path`` (``default`` when missing)."""
    return Field(default, validation_alias=AliasPath(*path))


def _required(*path: str) -> Any:
    return Field(validation_alias=AliasPath(*path))


class _Action(BaseModel):
    action: Annotated[str, BeforeValidator(_text_or(""))] = ""


class PullRequestFields(BaseModel):
    """``pull_request`` (checked in this order)."""

    number: Number
    head_repo: Annotated[str, BeforeValidator(_text_or(""))] = _at(
        "head", "repo", "full_name", default=""
    )
    base_repo: Text = _required("base", "repo", "full_name")
    base_ref: Text = _required("base", "ref")
    head_ref: Text = _required("head", "ref")
    head_sha: Text = _required("head", "sha")


class Author(BaseModel):
    """Who opened the pull request or issue, and how they relate to the repository."""

    author: Annotated[str, BeforeValidator(_text_or(""))] = _at("user", "login", default="")
    author_association: Annotated[str, BeforeValidator(_text_or("NONE"))] = "NONE"


class IssueFields(BaseModel):
    number: Number
    pull_request: object = None  # truthy on a pull request's issue


class Writer(BaseModel):
    """The review comment's writer, read leniently: only a bot is told apart."""

    type: object = None
    login: object = None


class _WrittenBy(BaseModel):
    user: Annotated[Writer | None, BeforeValidator(_object_or_none)] = None


class _Reply(BaseModel):
    in_reply_to_id: NumberOrNone = _at("comment", "in_reply_to_id", default=None)


class CommentFields(BaseModel):
    """The comment of a comment event."""

    body: Annotated[str, BeforeValidator(_text_or(""))] = _at("comment", "body", default="")
    author_association: Annotated[str, BeforeValidator(_text_or("NONE"))] = _at(
        "comment", "author_association", default="NONE"
    )
    author: Annotated[str, BeforeValidator(_text_or(""))] = _at(
        "comment", "user", "login", default=""
    )


class _RepositoryName(BaseModel):
    full_name: Text = _required("repository", "full_name")


class _DefaultBranch(BaseModel):
    default_branch: Annotated[str, BeforeValidator(_text_or(""))] = _at(
        "repository", "default_branch", default=""
    )


class _Before(BaseModel):
    before: Annotated[str, BeforeValidator(_text_or(""))] = ""


class CommentLink(BaseModel):
    """The comment's web address and id (to react and reply to it; None when it has none)."""

    url: Annotated[str, BeforeValidator(_text_or(""))] = _at("comment", "html_url", default="")
    id: Annotated[int | None, BeforeValidator(_id_or_none)] = _at("comment", "id", default=None)


class _Commit(BaseModel):
    id: object = None


class _Push(BaseModel):
    head_commit: Annotated[_Commit | None, BeforeValidator(_object_or_none)] = None
    after: object = None
    commits: Annotated[list[_Commit], BeforeValidator(_objects)] = Field(default_factory=list)


_Model = TypeVar("_Model", bound=BaseModel)
_OBJECT = TypeAdapter(dict[str, Any])


def _read(model: type[_Model], data: object, within: str = "") -> _Model:
    """``data`` as ``model``; its first problem an ``EventError`` (``within``: the top-level
    object ``data`` is, for a wrong number's path)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise EventError(_problem(first_error(exc), within)) from None


def _problem(error: ErrorDetails, within: str) -> str:
    path = location(error, "")
    if error["type"] == "missing":
        return f"The event payload has no '{path}'."
    if error["type"] == _NOT_TEXT:
        return f"The event payload's '{path}' is not text."
    if error["type"] == _NOT_NUMBER:
        named = f"{within}.{path}" if within else path
        return f"The event payload's '{named}' is not a positive number."
    return f"The event payload's '{path}' is not valid: {error['msg']}."  # none of ours


def _object(payload: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The top-level object ``name``, which the event must have."""
    if name not in payload:
        raise EventError(f"The event payload has no '{name}'.")
    try:
        return _OBJECT.validate_python(payload[name])
    except ValidationError:
        raise EventError(f"The event payload's '{name}' is not an object.") from None


def action(payload: Mapping[str, Any]) -> str:
    """The payload's ``action`` ("" when the event has none)."""
    return _read(_Action, payload).action


def pull_request(payload: Mapping[str, Any]) -> tuple[PullRequestFields, Author]:
    found = _object(payload, "pull_request")
    return (
        _read(PullRequestFields, found, within="pull_request"),
        _read(Author, found, within="pull_request"),
    )


def commented_issue(payload: Mapping[str, Any]) -> IssueFields:
    """The issue (or pull request) an ``issue_comment`` is on."""
    return _read(IssueFields, _object(payload, "issue"), within="issue")


def issue_author(payload: Mapping[str, Any]) -> Author:
    return _read(Author, _object(payload, "issue"), within="issue")


def review_comment_writer(payload: Mapping[str, Any]) -> Writer | None:
    """The review comment's writer (None when the payload does not say)."""
    return _read(_WrittenBy, _object(payload, "comment")).user


def reply_to(payload: Mapping[str, Any]) -> int | None:
    """The review comment a review comment answers (None when it opens a thread)."""
    return _read(_Reply, payload).in_reply_to_id


def comment(payload: Mapping[str, Any]) -> CommentFields:
    return _read(CommentFields, payload)


def repository_name(payload: Mapping[str, Any]) -> str:
    return _read(_RepositoryName, payload).full_name


def default_branch(payload: Mapping[str, Any]) -> str:
    """The payload's default branch ("" when it does not say)."""
    return _read(_DefaultBranch, payload).default_branch


def before(payload: Mapping[str, Any]) -> str:
    """A ``synchronize``'s head before the push ("" otherwise)."""
    return _read(_Before, payload).before


def comment_link(payload: Mapping[str, Any]) -> CommentLink:
    return _read(CommentLink, payload)


def push_commit_shas(event: Mapping[str, Any]) -> list[str]:
    """The commits of a push event to look up: the head first, then the rest newest first.

    At most ``MAX_PUSH_COMMITS``, without the all-zero sha of a deleted branch.
    """
    push = _Push.model_validate(event)  # never fails: what is not a commit is left out
    head = push.head_commit.id if push.head_commit is not None else None
    return distinct_shas([head, push.after, *(c.id for c in reversed(push.commits))])


def distinct_shas(shas: Sequence[object]) -> list[str]:
    """The first ``MAX_PUSH_COMMITS`` distinct commit shas of ``shas`` (no all-zero sha)."""
    distinct: list[str] = []
    for sha in shas:
        if isinstance(sha, str) and sha and sha != _NULL_SHA and sha not in distinct:
            distinct.append(sha)
    return distinct[:MAX_PUSH_COMMITS]
