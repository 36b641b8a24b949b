"""Committed memory on a git branch of the repository, behind the store protocol.

The branch (``MEMORY_BRANCH``, an orphan: it shares no history with the code) holds one folder
per agent, scope and layer, named by the key prefix the entries of that layer share::

    memory-agent/v1/<agent>/repo/committed/
      AGENTS.md
      provenance.json
      .memory-agent/state.json      what the entry was merged from (``memory.state``)
      .memory-agent/entry.json      the entry's key and when it was saved

A folder holds one entry, the newest; the ones before it are its history (``git log``). Each
save is one commit through ``createCommitOnBranch`` whose message names the run, the event and
the pull request it came from.

Compare-and-swap, twice over:

- the folder: a save goes through only while the folder holds the entry this store last read
  for it (the one the saving run merged with). If another run saved meanwhile the save is not
  made and its result says ``raced``: the caller re-reads, three-way merges as with the cache
  (``layers.prepare_save``) and saves again;
- the branch: the commit names the head it was prepared on (``expectedHeadOid``). A commit of
  another folder meanwhile only moves the head: the save re-reads and tries again, a bounded
  number of times. Nothing is ever force-pushed.

Restore keeps the cache's rules for what it can hold: a key matches the folder's entry when the
entry's key starts with it (each key tried in order).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ValidationError

from memory_action.memory.state import EXPECTED_FILES, STATE_DIR
from memory_action.safety import untrusted_json
from memory_action.safety.outgoing import Form, SafeText, gate
from memory_action.safety.trees import remove_tree
from memory_action.store.base import ListedEntry, RestoreKeys, RestoreResult, SaveResult
from memory_action.store.git_remote import (
    FolderSnapshot,
    GitRemoteError,
    PullRequestLink,
    Revision,
    StaleHeadError,
    WriteRefusedError,
)

MEMORY_BRANCH = "memory-agent-memory"
ENTRY_FILE = f"{STATE_DIR}/entry.json"
ENTRY_FORMAT = 1
MAX_HEAD_RETRIES = 6  # commits of other folders in between; each costs a read and a commit
BRANCH_README = (
    "# memory-agent memory\n\n"
    "Committed memory of memory-agent, one folder per agent and scope. Written by the action "
    "through the GitHub API, one commit per save; `memory-agent memory log` and `memory-agent "
    "memory rollback` read and restore its history. Do not merge this branch.\n"
)


class GitRemote(Protocol):
    """What the store needs from GitHub (``git_remote.GitHubGitRemote``)."""

    @property
    def repository_name(self) -> str: ...

    def read(self, branch: str, path: str, at: str | None = None) -> FolderSnapshot: ...

    def history(self, branch: str, path: str, limit: int = ...) -> list[Revision]: ...

    def commit(
        self,
        branch: str,
        expected_head: str,
        additions: Mapping[str, str],
        deletions: tuple[str, ...],
        message: tuple[SafeText, SafeText],
    ) -> str: ...

    def create_branch(self, branch: str, files: Mapping[str, str], message: SafeText) -> bool: ...

    def create_ref(self, branch: str, sha: str) -> bool: ...

    def open_pull_request(
        self, head: str, base: str, title: SafeText, body: SafeText
    ) -> PullRequestLink: ...


class _EntryMeta(BaseModel):
    format: int
    key: str
    created: float


@dataclass(frozen=True, kw_only=True)
class GitEntry:
    """The entry a folder holds."""

    key: str
    created: float
    files: Mapping[str, str]  # the memory files only (``memory.state.EXPECTED_FILES``)


def folder_of(key: str) -> str:
    """The branch folder that holds the entries under ``key``: a key prefix ends with ``/``,
    a full key's last part is its save suffix."""
    return key[: key.rindex("/")] if "/" in key else key


def entry_of(snapshot: FolderSnapshot) -> GitEntry | None:
    """The entry a folder snapshot holds; None for no folder or a folder without a valid one."""
    if snapshot.files is None:
        return None
    try:
        meta = _EntryMeta.model_validate(untrusted_json.loads(snapshot.files.get(ENTRY_FILE, "")))
    except (ValueError, ValidationError):
        return None
    if meta.format != ENTRY_FORMAT:
        return None
    files = {path: text for path, text in snapshot.files.items() if path in EXPECTED_FILES}
    return GitEntry(key=meta.key, created=meta.created, files=files)


class GitMemoryStore:
    """``MemoryStore`` (and ``LayerAdmin``) over a branch of the repository.

    ``origin`` is what each commit message says about the run (its id, event, pull request,
    actor); ``masked`` gives the values the run masked, which the outgoing gate redacts from
    it. ``commits`` and ``calls`` are counted for the figures.
    """

    def __init__(
        self,
        remote: GitRemote,
        *,
        origin: str = "",
        branch: str = MEMORY_BRANCH,
        clock: Callable[[], float] = time.time,
        masked: Callable[[], Iterable[str]] = tuple,
    ) -> None:
        self._remote = remote
        self._origin = origin
        self._masked = masked
        self.branch = branch
        self._clock = clock
        self._seen: dict[str, str | None] = {}  # folder → the entry key last read there
        self.commits = 0
        self.refusal: WriteRefusedError | None = None  # the write GitHub refused for good

    @property
    def name(self) -> str:
        return f"git branch {self.branch} of {self._remote.repository_name}"

    # -- restore ----------------------------------------------------------------------------------

    def restore(self, keys: RestoreKeys, folder: Path) -> RestoreResult:
        try:
            for key in keys.all():
                entry = self.read(folder_of(key))
                if entry is not None and entry.key.startswith(key):
                    _lay_out(entry.files, folder)
                    return RestoreResult(hit=True, matched_key=entry.key)
        except GitRemoteError as exc:
            return RestoreResult.miss(
                warning=f"memory was not restored from the {self.name}: {exc}"
            )
        except OSError as exc:
            return RestoreResult.miss(warning=f"restoring from the {self.name} failed: {exc}")
        return RestoreResult.miss()

    def read(self, path: str, at: str | None = None) -> GitEntry | None:
        """The entry in folder ``path`` (at the head, or at commit ``at``). A read at the head
        is what a later save of the folder must find unchanged."""
        entry = entry_of(self._remote.read(self.branch, path, at))
        if at is None:
            self._seen[path] = entry.key if entry is not None else None
        return entry

    # -- save -------------------------------------------------------------------------------------

    def save(self, key: str, folder: Path, *, onto: str | None = None) -> SaveResult:
        """Save the entry of ``folder`` as ``key``: onto the memory branch, or ``onto`` a new
        branch made at the memory branch's head (which then does not move)."""
        if self.refusal is not None:
            return SaveResult(saved=False, key=key, reason=str(self.refusal), write_denied=True)
        try:
            files = _memory_files(folder)
        except (OSError, UnicodeDecodeError) as exc:
            return SaveResult(saved=False, key=key, reason=f"not saved: {exc}")
        meta = {"format": ENTRY_FORMAT, "key": key, "created": self._clock()}
        files[ENTRY_FILE] = json.dumps(meta, indent=1, sort_keys=True) + "\n"
        try:
            return self._save(key, folder_of(key), files, onto)
        except WriteRefusedError as exc:
            self.refusal = exc
            return SaveResult(saved=False, key=key, reason=str(exc), write_denied=True)
        except GitRemoteError as exc:
            reason = f"memory was not saved to the {self.name}: {exc}"
            return SaveResult(saved=False, key=key, reason=reason)

    def _save(self, key: str, path: str, files: dict[str, str], onto: str | None) -> SaveResult:
        size = sum(len(text.encode()) for path, text in files.items() if path != ENTRY_FILE)
        for _ in range(MAX_HEAD_RETRIES):
            snapshot = self._remote.read(self.branch, path)
            if snapshot.head is None:
                message = gate("memory", self._masked(), form=Form.LINE)
                self._remote.create_branch(self.branch, {"README.md": BRANCH_README}, message)
                continue
            current = entry_of(snapshot)
            current_key = current.key if current is not None else None
            if current_key == key:
                reason = f"an entry with this key exists ({key!r}); nothing was saved over it"
                return SaveResult(saved=False, key=key, reason=reason)
            if current_key != self._seen.get(path):
                self._seen[path] = current_key
                reason = f"{current_key or 'another entry'} was saved while this run merged"
                return SaveResult(saved=False, key=key, reason=reason, raced=True)
            stale = tuple(
                sorted(f"{path}/{name}" for name in snapshot.files or {} if name not in files)
            )
            additions = {f"{path}/{name}": text for name, text in files.items()}
            if onto is not None:
                return self._save_onto(onto, snapshot.head, key, (additions, stale), size)
            try:
                self._remote.commit(
                    self.branch, snapshot.head, additions, stale, self._message(key)
                )
            except StaleHeadError:
                continue  # the branch moved: read again, and see whether this folder did
            self._seen[path] = key
            self.commits += 1
            return SaveResult(saved=True, key=key, size_bytes=size)
        reason = (
            f"the {self.name} kept moving ({MAX_HEAD_RETRIES} attempts); the next run saves again"
        )
        return SaveResult(saved=False, key=key, reason=reason)

    def _save_onto(
        self,
        branch: str,
        head: str,
        key: str,
        changes: tuple[dict[str, str], tuple[str, ...]],
        size: int,
    ) -> SaveResult:
        """The commit a save would make, on a new ``branch`` at the memory branch's ``head``.
        The branch is this save's alone: one that exists already is refused, never reused."""
        if not self._remote.create_ref(branch, head):
            raise WriteRefusedError(
                f"the branch {branch} exists already (an earlier attempt of this run?)",
                protected=False,
            )
        additions, deletions = changes
        try:
            self._remote.commit(branch, head, additions, deletions, self._message(key))
        except StaleHeadError as exc:  # someone else pushed to the new branch: leave it to them
            raise WriteRefusedError(str(exc), protected=False) from None
        self.commits += 1
        return SaveResult(saved=True, key=key, size_bytes=size, reason=f"on branch {branch}")

    def open_pull_request(self, head: str, title: SafeText, body: SafeText) -> PullRequestLink:
        """A pull request from the branch ``head`` into the memory branch."""
        return self._remote.open_pull_request(head, self.branch, title, body)

    def _message(self, key: str) -> tuple[SafeText, SafeText]:
        headline = f"memory: save {folder_of(key)}"
        body = "\n".join(line for line in (self._origin, f"Key: {key}") if line)
        masked = tuple(self._masked())
        return gate(headline, masked, form=Form.LINE), gate(body, masked)

    # -- history ----------------------------------------------------------------------------------

    def log(self, prefix: str, limit: int = 30) -> list[Revision]:
        """The commits that changed the folder of ``prefix``, newest first."""
        return self._remote.history(self.branch, folder_of(prefix), limit)

    # -- LayerAdmin: one entry per folder, nothing to prune ---------------------------------------

    def list_entries(self, prefix: str) -> list[ListedEntry] | None:
        try:
            entry = entry_of(self._remote.read(self.branch, folder_of(prefix)))
        except GitRemoteError:
            return None
        if entry is None or not entry.key.startswith(prefix):
            return []
        return [ListedEntry(key=entry.key, created=entry.created)]

    def prune(self, *, prefix: str, superseded: frozenset[str], saved_key: str) -> int:
        return 0  # a save replaces the folder's entry; what it replaced is in the history


def _memory_files(folder: Path) -> dict[str, str]:
    """The memory files of ``folder`` (regular files only, never through a link)."""
    files: dict[str, str] = {}
    for name in sorted(EXPECTED_FILES):
        path = folder / name
        if (
            path.is_symlink()
            or not path.is_file()
            or (path.parent != folder and path.parent.is_symlink())
        ):
            continue
        files[name] = path.read_bytes().decode("utf-8")
    return files


def _lay_out(files: Mapping[str, str], folder: Path) -> None:
    """Replace ``folder``'s content with ``files`` (``entry_of`` kept only memory files)."""
    if folder.is_symlink() or folder.exists():
        remove_tree(folder)
    folder.mkdir(parents=True)
    for name, text in files.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
