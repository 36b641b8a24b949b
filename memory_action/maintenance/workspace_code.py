"""The default branch's files as the workspace checkout's HEAD commit has them, for the
citation checker (``memory.citations.CodeView``).

Files are read from the commit, not the work tree: an earlier step of the job may have changed
or generated files there. Only regular files up to ``pull_request.MAX_FILE_BYTES`` that are text
are read.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from memory_action.errors import InputError
from memory_action.github.pull_request import MAX_FILE_BYTES, decode_text
from memory_action.maintenance.git_checkout import GitCheckout, RegularFile

# The job's checkout may belong to another user than the container's: reading it is safe.
_READ_ANY_OWNER = {
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "safe.directory",
    "GIT_CONFIG_VALUE_0": "*",
}


class CheckoutCode:
    """``CodeView`` over one commit of a local checkout: its tree listed once, files read in
    batches."""

    def __init__(self, checkout: GitCheckout, commit: str) -> None:
        self._checkout = checkout
        self._commit = commit
        self._files: dict[str, RegularFile] | None = None

    def paths(self) -> frozenset[str]:
        listing = self._checkout.run("ls-tree", "-r", "-z", "--name-only", self._commit)
        return frozenset(os.fsdecode(p) for p in listing.split(b"\0") if p)

    def read_many(self, paths: Sequence[str]) -> dict[str, str | None]:
        if self._files is None:
            self._files = self._checkout.regular_files(self._commit)
        readable = {
            path: found.blob
            for path in paths
            if (found := self._files.get(path)) is not None and found.size <= MAX_FILE_BYTES
        }
        blobs = self._checkout.read_blobs(list(readable.values()))
        texts: dict[str, str | None] = dict.fromkeys(paths)
        for path, blob in readable.items():
            data = blobs.get(blob)
            texts[path] = decode_text(data) if data is not None else None
        return texts


def checkout_code(workspace: Path, env: Mapping[str, str]) -> CheckoutCode | str:
    """The checkout's HEAD as a ``CodeView``, or why there is none (one line)."""
    try:
        checkout = GitCheckout.find(workspace, {**env, **_READ_ANY_OWNER})
    except InputError:
        return "the workspace is no git checkout (add actions/checkout before this step)"
    commit = checkout.commit("HEAD")
    if commit is None:
        return "the workspace checkout has no commit"
    return CheckoutCode(checkout, commit)
