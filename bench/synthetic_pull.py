"""A synthetic pull request of many small changes (100 files by default), for ``review_fit``.

Each file is a small Python module of its own package; the change renames a helper, adds a guard
and a log line in one function: one or two hunks a file, about 700 characters of patch, the
shape of a sweeping refactor. The patches are ``difflib``'s unified diffs without the file header,
as GitHub gives them in ``GET /pulls/{n}/files``.
"""

from __future__ import annotations

import difflib
import hashlib
from typing import Any

from tests.fakes.click_corpus import CorpusPull

TAG = "synth100"


def _module(n: int, *, after: bool) -> str:
    helper = "fetch_checked" if after else "fetch_raw"
    lines = [
        f'"""Module {n} of the synthetic change: reads records of kind {n}."""',
        "",
        "from __future__ import annotations",
        "",
        "import logging",
        "",
        "LOG = logging.getLogger(__name__)",
        "",
        "",
        f"def {helper}(source, key):",
        '    """The record under key, as the source gives it."""',
        "    return source.get(key)",
        "",
        "",
        f"def load_{n}(source, keys):",
        '    """Every record under keys, in order."""',
        "    found = []",
        "    for key in keys:",
    ]
    if after:
        lines += [
            "        if key is None:",
            f'            LOG.warning("load_{n}: a key is None; skipped")',
            "            continue",
        ]
    lines += [
        f"        found.append({helper}(source, key))",
        "    return found",
        "",
    ]
    lines += [f"# filler line {i} of module {n}, unchanged by the pull request" for i in range(12)]
    return "\n".join(lines) + "\n"


def _patch(before: str, after: str) -> str:
    diff = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), n=3
    )
    return "".join(list(diff)[2:])  # GitHub's patch has no ---/+++ header


def synthetic_pull(files: int = 100, number: int = 100) -> CorpusPull:
    head: dict[str, bytes] = {}
    base: dict[str, bytes] = {}
    changed: list[dict[str, Any]] = []
    for n in range(files):
        path = f"src/records/kind_{n:03d}/reader.py"
        before, after = _module(n, after=False), _module(n, after=True)
        base[path], head[path] = before.encode(), after.encode()
        patch = _patch(before, after)
        plus = sum(1 for line in patch.splitlines() if line.startswith("+"))
        minus = sum(1 for line in patch.splitlines() if line.startswith("-"))
        changed.append(
            {
                "filename": path,
                "status": "modified",
                "additions": plus,
                "deletions": minus,
                "changes": plus + minus,
                "patch": patch,
            }
        )
    digest = hashlib.sha1(f"synthetic-{files}".encode()).hexdigest()  # noqa: S324 - a name
    return CorpusPull(
        tag=TAG,
        number=number,
        title=f"Check keys before reading records ({files} readers)",
        body="Every reader skips a None key with a warning, and uses the checked fetch helper.",
        base_sha=digest[::-1],
        head_sha=digest,
        files=tuple(changed),
        head=head,  # type: ignore[arg-type]  # a plain mapping serves as well as a GitTree
        base=base,  # type: ignore[arg-type]
    )
