"""Which changed files a review reads, in which order, and why the others are left out.

Files are ordered by review value (source, tests, docs, config), then by size of change. Files
nobody reviews by hand (lock files, minified or generated code, vendored folders), files the
user excludes, and files GitHub gives no diff for are skipped, each with a short reason.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from memory_action.github.pull_request import ChangedFile
from memory_action.review.gitattributes import generated_or_vendored, matches_path_or_folder


class Category(enum.IntEnum):
    """Kinds of file, in the order a review reads them."""

    SOURCE = 0
    TEST = 1
    DOCS = 2
    CONFIG = 3


@dataclass(frozen=True, kw_only=True)
class Skipped:
    path: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class ReviewFile:
    file: ChangedFile
    category: Category


_TEST_FOLDERS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs", "e2e"})
_TEST_NAMES = (
    "test_*.py", "*_test.py", "conftest.py", "*_test.go", "*.test.[jt]s", "*.test.[jt]sx",
    "*.spec.[jt]s", "*.spec.[jt]sx", "*Test.java", "*Tests.java", "*Test.kt", "*_spec.rb",
    "*_test.rb", "test_*.rb", "*_test.rs", "*Tests.cs", "*Test.php",
)  # fmt: skip
_DOCS_FOLDERS = frozenset({"docs", "doc", "documentation"})
_DOCS_NAMES = (
    "*.md", "*.markdown", "*.rst", "*.adoc", "*.txt", "changes", "changes.*", "changelog",
    "changelog.*", "history", "history.*", "news", "news.*", "readme", "readme.*", "license",
    "license.*", "copying", "authors", "authors.*", "contributing", "notice",
)  # fmt: skip
_CONFIG_FOLDERS = frozenset({".github", ".circleci", ".devcontainer", ".vscode"})
_CONFIG_NAMES = (
    "*.toml", "*.cfg", "*.ini", "*.yml", "*.yaml", "*.json", "*.lock", "*.properties",
    "*.conf", "setup.py", "dockerfile", "dockerfile.*", "*.dockerfile", "containerfile",
    "makefile", "justfile", "procfile", "codeowners", "manifest.in", "requirements*.txt",
    "constraints*.txt", ".*",
)  # fmt: skip

_LOCK_FILES = frozenset({
    "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb",
    "poetry.lock", "uv.lock", "pipfile.lock", "pdm.lock", "cargo.lock", "go.sum",
    "composer.lock", "gemfile.lock", "podfile.lock", "pubspec.lock", "mix.lock", "flake.lock",
    "packages.lock.json", "gradle.lockfile",
})  # fmt: skip
_NAME_REASONS = (
    (("*.min.js", "*.min.css", "*.min.mjs"), "minified"),
    (("*.map",), "source map"),
    (
        ("*_pb2.py", "*_pb2.pyi", "*_pb2_grpc.py", "*.pb.go", "*.pb.cc", "*.pb.h"),
        "generated (protobuf)",
    ),
)  # fmt: skip
_FOLDER_REASONS = {
    "vendor": "vendored (vendor/)",
    "third_party": "vendored (third_party/)",
    "node_modules": "dependencies (node_modules/)",
    "bower_components": "dependencies (bower_components/)",
    "dist": "build output (dist/)",
    "__pycache__": "build output (__pycache__/)",
}
NO_PATCH = "no patch from GitHub: binary or too large"
NO_DIFF = "no diff to read: binary, empty or a mode change"


def categorise(path: str) -> Category:
    """The kind of file at ``path``, judged from its folders and name alone."""
    *folders, name = path.lower().split("/")
    if _CONFIG_FOLDERS.intersection(folders):
        return Category.CONFIG
    if _TEST_FOLDERS.intersection(folders) or _any_match(path.rsplit("/", 1)[-1], _TEST_NAMES):
        return Category.TEST
    if _DOCS_FOLDERS.intersection(folders) or _any_match(name, _DOCS_NAMES):
        # requirements.txt and friends are configuration, not prose.
        return Category.CONFIG if _any_match(name, _CONFIG_NAMES) else Category.DOCS
    if _any_match(name, _CONFIG_NAMES):
        return Category.CONFIG
    return Category.SOURCE


def skip_reason(file: ChangedFile, *, attributes: str, exclude: Sequence[str]) -> str | None:
    """Why the review leaves the file out, or None when it reads it."""
    for glob in exclude:
        if matches_path_or_folder(glob, file.path):
            return f"excluded by the exclude input ({glob})"
    marked = generated_or_vendored(attributes, file.path)
    if marked:
        return marked
    well_known = _well_known_reason(file.path)
    if well_known:
        return well_known
    # A removed file is summarised from its line count and a pure rename in one line, so they
    # need no patch; anything else without one has nothing the model could read.
    if file.patch is None and file.status not in ("removed", "renamed"):
        return NO_PATCH if file.additions + file.deletions else NO_DIFF
    return None


def select_files(
    files: Sequence[ChangedFile], *, attributes: str, exclude: Sequence[str]
) -> tuple[list[ReviewFile], list[Skipped]]:
    """The files to review, most valuable first, and the skipped ones in their original order."""
    review: list[ReviewFile] = []
    skipped: list[Skipped] = []
    for file in files:
        reason = skip_reason(file, attributes=attributes, exclude=exclude)
        if reason:
            skipped.append(Skipped(path=file.path, reason=reason))
        else:
            review.append(ReviewFile(file=file, category=categorise(file.path)))
    review.sort(
        key=lambda rf: (rf.category, -(rf.file.additions + rf.file.deletions), rf.file.path)
    )
    return review, skipped


def _well_known_reason(path: str) -> str | None:
    *folders, name = path.lower().split("/")
    if name in _LOCK_FILES:
        return "lock file"
    for patterns, reason in _NAME_REASONS:
        if _any_match(name, patterns):
            return reason
    return next((_FOLDER_REASONS[f] for f in folders if f in _FOLDER_REASONS), None)


def _any_match(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in patterns)
