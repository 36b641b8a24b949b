"""The tools the agent reads the pull request with: the file list, one file's patch, one file.

Every tool returns text, never raises (an error is a string starting with ``Error:``, which the
model can act on) and caps its output at ``max_chars`` with a note saying what was cut. The PR
content is untrusted: the tools return it as data, the prompts tell the model so.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePosixPath

from langchain_core.tools import BaseTool, StructuredTool

from memory_action.github.pull_request import ChangedFile, PullRequestInfo, PullRequestReader

DEFAULT_MAX_CHARS = 60_000
MAX_DESCRIPTION_CHARS = 4_000
NO_PATCH = "no patch: binary or too large"
_DRIVE = re.compile(r"[A-Za-z]:")  # C:/... is absolute on Windows


def make_pr_tools(
    reader: PullRequestReader, *, max_chars: int = DEFAULT_MAX_CHARS, include_listing: bool = True
) -> list[BaseTool]:
    """``list_changed_files``, ``get_file_patch`` and ``read_file`` over one pull request.

    The review engine puts the file list in its first request, so it leaves out the listing;
    then no description or answer names it (a model calls what it is told of).
    """
    listed_by = "list_changed_files" if include_listing else "the request's list of changed files"
    pr = PullRequestTools(reader, max_chars=max_chars, listed_by=listed_by)

    def list_changed_files() -> str:
        return pr.safe(pr.list_changed_files)

    def get_file_patch(path: str) -> str:
        return pr.safe(lambda: pr.get_file_patch(path))

    def read_file(path: str) -> str:
        return pr.safe(lambda: pr.read_file(path))

    listing = StructuredTool.from_function(
        list_changed_files,
        description="List the pull request's changed files (status, +/- lines, renames) "
        "with its title, author, branches and description. Call this first.",
    )
    return [
        *([listing] if include_listing else []),
        StructuredTool.from_function(
            get_file_patch,
            description=f"The unified diff of one changed file, by its path as listed in "
            f"{listed_by}.",
        ),
        StructuredTool.from_function(
            read_file,
            description="The full text of a repository file at the pull request's head commit "
            "(a relative path such as src/app.py), for context around a patch.",
        ),
    ]


class PullRequestTools:
    """The tools' logic; the changed files are fetched once per run and reused."""

    def __init__(
        self,
        reader: PullRequestReader,
        *,
        max_chars: int = DEFAULT_MAX_CHARS,
        listed_by: str = "list_changed_files",
    ) -> None:
        self._reader = reader
        self._max_chars = max_chars
        self._listed_by = listed_by  # where the model finds the changed files' paths
        self._files: list[ChangedFile] | None = None

    @staticmethod
    def safe(action: Callable[[], str]) -> str:
        """Run a tool body; any failure becomes an error string for the model."""
        try:
            return action()
        except Exception as exc:  # a tool must answer, not crash the run
            return f"Error: {type(exc).__name__}: {_first_line(str(exc))}"

    def changed_files(self) -> list[ChangedFile]:
        if self._files is None:
            self._files = list(self._reader.changed_files())
        return self._files

    def list_changed_files(self) -> str:
        files = self.changed_files()
        added = sum(f.additions for f in files)
        removed = sum(f.deletions for f in files)
        lines = [
            _header(self._reader.info()),
            "",
            f"{len(files)} changed file{'s' if len(files) != 1 else ''}, +{added} -{removed}:",
        ]
        lines += [_file_line(f) for f in files]
        return _limit("\n".join(lines), self._max_chars, "the file list")

    def get_file_patch(self, path: str) -> str:
        wanted = _normalize(path)
        found = next((f for f in self.changed_files() if f.path == wanted), None)
        if found is None:
            return f"Error: {wanted!r} is not a changed file; see {self._listed_by}."
        head = f"{found.status} {found.path} (+{found.additions} -{found.deletions})"
        if found.patch is None:
            return (
                f"{head}\nGitHub has no patch for this file ({NO_PATCH}); use read_file to see it."
            )
        return _limit(f"{head}\n{found.patch}", self._max_chars, "the patch")

    def read_file(self, path: str) -> str:
        refusal = _refuse_path(path)
        if refusal:
            return refusal
        wanted = _normalize(path)
        text = self._reader.file_content(wanted)
        if text is None:
            return f"Error: {wanted!r} does not exist at the head commit, or it is binary."
        return _limit(text, self._max_chars, wanted)


def _header(info: PullRequestInfo) -> str:
    draft = " (draft)" if info.draft else ""
    lines = [
        f"Pull request #{info.number}{draft}: {info.title}",
        f"Author: {info.author}; base: {info.base_ref} <- head: {info.head_ref} "
        f"({info.head_sha[:12]})",
    ]
    body = info.body.strip()
    if body:
        lines += [
            "",
            "Description (written by the author):",
            _limit(body, MAX_DESCRIPTION_CHARS, "the description"),
        ]
    return "\n".join(lines)


def _file_line(f: ChangedFile) -> str:
    renamed = f" (from {f.previous_path})" if f.previous_path else ""
    no_patch = f" [{NO_PATCH}]" if f.patch is None else ""
    return f"- {f.status} {f.path}{renamed} +{f.additions} -{f.deletions}{no_patch}"


def _refuse_path(path: str) -> str | None:
    """Only relative paths inside the repository; the reader is never asked for anything else."""
    value = path.strip()
    if not value:
        return "Error: give a file path relative to the repository root."
    if value.startswith(("/", "~")) or "\\" in value or "\x00" in value or _DRIVE.match(value):
        return f"Error: {value!r} is refused: use a relative path such as src/app.py."
    if ".." in PurePosixPath(value).parts:
        return f"Error: {value!r} is refused: '..' is not allowed."
    return None


def _normalize(path: str) -> str:
    return str(PurePosixPath(path.strip()))


def _limit(text: str, max_chars: int, what: str) -> str:
    if len(text) <= max_chars:
        return text
    return (
        f"{text[:max_chars]}\n[truncated: {what} has {len(text)} characters, "
        f"only the first {max_chars} are shown]"
    )


def _first_line(text: str, limit: int = 300) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "no details"
    return line[:limit]
