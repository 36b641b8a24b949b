"""Several files of one commit in one GraphQL request, where REST reads them one call each.

``repository.object(expression: <commit>)`` and, per file, ``Commit.file(path:)``: its tree
entry (mode, type) and, for a blob, its size and text. Only what the REST contents API would
give the reader is taken: a regular file (not a directory, symlink or submodule), no larger
than the reader takes, not binary. What this request cannot tell (a truncated text, a failed
request, an answer of another shape) is left out, and the reader asks REST for it.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field, ValidationError

from memory_action.errors import GitHubError
from memory_action.github.api import RepositoryApi

MAX_FILES_PER_REQUEST = 50  # well inside GitHub's GraphQL node limits
_FILE_TYPE_BITS, _REGULAR_FILE = 0o170000, 0o100000  # git's mode: 100644 and 100755
_MISSING = object()  # an alias the answer lacks


class _Blob(BaseModel):
    typename: str = Field(alias="__typename")
    byte_size: int | None = Field(default=None, alias="byteSize")
    is_binary: bool | None = Field(default=None, alias="isBinary")
    is_truncated: bool | None = Field(default=None, alias="isTruncated")
    text: str | None = None


class _TreeEntry(BaseModel):
    mode: int
    type: str
    object: _Blob | None = None


def query_for(count: int) -> str:
    """The query document for ``count`` files (variables ``$p0`` … ``$p<count-1>``)."""
    paths = "".join(f", $p{i}: String!" for i in range(count))
    blob = "__typename ... on Blob { byteSize isBinary isTruncated text }"
    files = " ".join(
        f"f{i}: file(path: $p{i}) {{ mode type object {{ {blob} }} }}" for i in range(count)
    )
    return (
        f"query BaseFiles($owner: String!, $name: String!, $rev: String!{paths}) "
        "{ repository(owner: $owner, name: $name) "
        f"{{ object(expression: $rev) {{ __typename ... on Commit {{ {files} }} }} }} }}"
    )


def read_files(
    github: RepositoryApi, repo: str, rev: str, paths: Sequence[str], max_bytes: int
) -> dict[str, bytes | None]:
    """The bytes of each of ``paths`` at ``rev`` that GraphQL could tell (None: not a file the
    reader takes); a path it could not tell, or every path when the request fails, is absent."""
    paths = list(paths)[:MAX_FILES_PER_REQUEST]
    owner, _, name = repo.partition("/")
    if not paths or not owner or not name:
        return {}
    variables = {"owner": owner, "name": name, "rev": rev}
    variables |= {f"p{i}": path for i, path in enumerate(paths)}
    requester = github.repository.requester
    body = {"query": query_for(len(paths)), "variables": variables}
    try:
        with github.api(f"reading {len(paths)} files at {rev[:12]}"):
            _, answer = requester.requestJsonAndCheck("POST", requester.graphql_url, input=body)
    except GitHubError:
        return {}
    commit = _commit_of(answer)
    if commit is None:
        return {}
    found: dict[str, bytes | None] = {}
    for i, path in enumerate(paths):
        entry = commit.get(f"f{i}", _MISSING)
        if entry is _MISSING:
            continue
        if entry is None:  # no such path at that commit
            found[path] = None
            continue
        try:
            known, data = _file_bytes(_TreeEntry.model_validate(entry), max_bytes)
        except ValidationError:
            continue
        if known:
            found[path] = data
    return found


def _commit_of(answer: object) -> dict[str, object] | None:
    """The commit object of a whole answer; None on errors, or when ``rev`` is no commit."""
    if not isinstance(answer, dict) or answer.get("errors"):
        return None
    data = answer.get("data")
    repository = data.get("repository") if isinstance(data, dict) else None
    commit = repository.get("object") if isinstance(repository, dict) else None
    if not isinstance(commit, dict) or commit.get("__typename") != "Commit":
        return None
    return commit


def _file_bytes(entry: _TreeEntry, max_bytes: int) -> tuple[bool, bytes | None]:
    """(whether the entry tells, its bytes or None), as the REST contents read would have it."""
    blob = entry.object
    regular = entry.mode & _FILE_TYPE_BITS == _REGULAR_FILE and entry.type == "blob"
    if not regular or blob is None or blob.typename != "Blob":
        return True, None  # a directory, a symlink, a submodule
    if blob.byte_size is not None and blob.byte_size > max_bytes:
        return True, None
    if blob.is_binary:
        return True, None
    if blob.is_truncated or blob.text is None:
        return False, None  # REST reads the whole file
    return True, blob.text.encode("utf-8")
