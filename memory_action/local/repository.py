"""Which repository a local run's memory belongs to, and the local store seen as that
repository's own.

The Actions cache is per repository, so the action's keys name none. The local store is shared by
every checkout on the machine: its keys start with the repository, so one repository's lessons
never reach another's reviews. A repository is named by its ``origin`` remote (else its first
remote), normalised so every way of cloning it agrees (``git@github.com:Octo/Demo.git``,
``https://github.com/octo/demo`` → ``github.com/octo/demo``, credentials dropped), else by its
top folder. A pull request reviewed with ``--repo OWNER/NAME`` is ``github.com/owner/name``: the
same memory as a clone of it.

Local keys: ``<repository, percent-encoded>/memory-agent/v1/…``. Entries saved before keys named a
repository start with ``memory-agent/v1/``: no review reads them (they could be any repository's);
``memory list --all`` shows them as belonging to no repository.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from memory_action.errors import InputError
from memory_action.maintenance.git_checkout import GitCheckout
from memory_action.run.scope import KEY_FORMAT, encode_part
from memory_action.store.base import RestoreKeys, RestoreResult, SaveResult
from memory_action.store.local import LocalDirectoryStore, StoredEntry

GITHUB_HOST = "github.com"
NO_REPOSITORY = "(none)"  # what ``memory list --all`` shows for an entry from before
_SCP_LIKE = re.compile(r"^(?:[^@/\s]+@)?(?P<host>[^:/\s]+):(?P<path>[^/].*)$")  # git@host:o/n.git


def remote_identity(url: str) -> str | None:
    """``host/path`` of a network remote (lower case, no user or password, no ``.git``); None
    for a remote that is a folder on this machine or cannot be read."""
    url = url.strip()
    if "://" in url:
        parts = urlsplit(url)
        if parts.scheme == "file" or not parts.hostname:
            return None
        host, path = parts.hostname, parts.path
    else:
        match = _SCP_LIKE.match(url)
        if match is None:
            return None  # a path: /srv/git/demo.git, ../demo
        host, path = match["host"], match["path"]
    path = path.strip("/").removesuffix(".git").strip("/")
    if not path:
        return None
    return f"{host.lower()}/{path.lower()}"


def checkout_repository(git: GitCheckout) -> str:
    """The repository a checkout's memory belongs to (see the module's docstring)."""
    remotes = [os.fsdecode(name).strip() for name in git.attempt("remote").out.splitlines() if name]
    ordered = sorted(remotes, key=lambda name: name != "origin")
    for remote in ordered:
        found = git.attempt("config", "--get", f"remote.{remote}.url")
        identity = remote_identity(os.fsdecode(found.out)) if found.ok else None
        if identity is not None:
            return identity
    return str(git.root)


def pull_request_repository(owner_name: str, server_url: str = "") -> str:
    """The repository of ``--repo OWNER/NAME`` on GitHub (or the server ``server_url`` names)."""
    host = urlsplit(server_url).hostname if server_url else None
    return f"{(host or GITHUB_HOST).lower()}/{owner_name.strip('/').lower()}"


def current_repository(folder: Path, env: Mapping[str, str]) -> str | None:
    """The repository of the checkout ``folder`` is in; None outside a checkout (or without
    git)."""
    try:
        found = GitCheckout(folder, env).attempt("rev-parse", "--show-toplevel")
    except InputError:  # no git at all: there is no checkout to speak of
        return None
    if not found.ok:
        return None
    return checkout_repository(GitCheckout(Path(os.fsdecode(found.out.rstrip(b"\n"))), env))


def namespace(repository: str) -> str:
    return f"{encode_part(repository)}/"


def repository_of_key(key: str) -> str | None:
    """The repository a stored key belongs to; None for a key from before keys named one."""
    if key.startswith(f"{KEY_FORMAT}/"):
        return None
    head, sep, _ = key.partition("/")
    return unquote(head) if sep else None


@dataclass(frozen=True, kw_only=True)
class RepositoryStore:
    """The local store as one repository sees it: its keys, without the repository in front.

    Restores, saves and listings reach only keys under the repository's namespace, so nothing
    of another repository, nor an entry from before keys named one, is ever read."""

    store: LocalDirectoryStore
    repository: str

    @property
    def name(self) -> str:
        return f"{self.store.name} (memory of {self.repository})"

    @property
    def _prefix(self) -> str:
        return namespace(self.repository)

    def restore(self, keys: RestoreKeys, folder: Path) -> RestoreResult:
        inside = RestoreKeys(
            primary=self._prefix + keys.primary,
            restore=tuple(self._prefix + key for key in keys.restore),
        )
        found = self.store.restore(inside, folder)
        return dataclasses.replace(
            found, matched_key=self._strip(found.matched_key), unusable=self._strip(found.unusable)
        )

    def save(self, key: str, folder: Path) -> SaveResult:
        saved = self.store.save(self._prefix + key, folder)
        return dataclasses.replace(saved, key=key)

    def entries(self, prefix: str = "") -> list[StoredEntry]:
        return [
            dataclasses.replace(entry, key=entry.key.removeprefix(self._prefix))
            for entry in self.store.entries(self._prefix + prefix)
        ]

    def read_entry(self, key: str) -> dict[str, str]:
        return self.store.read_entry(self._prefix + key)

    def _strip(self, key: str | None) -> str | None:
        return key.removeprefix(self._prefix) if key is not None else None
