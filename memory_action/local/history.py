"""``memory-agent memory log|rollback|export|import``: the history of committed memory, on the
local store or on the repository's git branch (``--repo``).

A rollback and an import never rewrite anything: each saves a new entry (on git, a new commit)
that holds the earlier (or imported) text, records the entry it replaces as its parent (so no
run merges the replaced one back), and is itself in the history. An import and a rollback go
through the checks an agent's edit goes through (``_refusal``): no secret (``scrub.find_secrets``)
and within the size budget. A rollback to a state that held a secret commits it again nowhere.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TextIO

from memory_action.errors import InputError
from memory_action.memory.provenance import Provenance
from memory_action.memory.provenance import entries as memory_lines
from memory_action.memory.state import (
    MAX_PARENTS,
    MEMORY_FILE,
    PROVENANCE_FILE,
    EntryState,
    Layer,
    write_memory,
)
from memory_action.run.scope import new_nonce, save_suffix
from memory_action.safety.outgoing import Form, gate
from memory_action.safety.scrub import describe, find_secrets
from memory_action.store.base import SaveResult
from memory_action.store.git import GitMemoryStore, folder_of
from memory_action.store.git_remote import GitRemoteError
from memory_action.store.local import EntryStore

SIDECAR_SUFFIX = ".provenance.json"


@dataclass(frozen=True, kw_only=True)
class Revision:
    id: str  # a key (local store) or a commit (git)
    when: str
    summary: str


class History(Protocol):
    @property
    def name(self) -> str: ...

    def revisions(self, prefix: str) -> list[Revision]: ...

    def files_at(self, prefix: str, revision: str) -> Mapping[str, str]: ...

    def current(self, prefix: str) -> tuple[tuple[str, ...], Mapping[str, str]]:
        """The keys the newest entry replaces when a new one is saved, and its files."""
        ...

    def save(self, key: str, folder: Path) -> SaveResult: ...


@dataclass(frozen=True, kw_only=True)
class LocalHistory:
    store: EntryStore

    @property
    def name(self) -> str:
        return self.store.name

    def revisions(self, prefix: str) -> list[Revision]:
        return [
            Revision(id=e.key, when=e.created.isoformat(timespec="seconds"), summary=f"{e.size} B")
            for e in self.store.entries(prefix)
        ]

    def files_at(self, prefix: str, revision: str) -> Mapping[str, str]:
        matching = [e.key for e in self.store.entries(prefix) if e.key.startswith(revision)]
        if not matching:
            raise InputError(f"No memory entry {revision!r} under {prefix} in {self.name}.")
        return self.store.read_entry(revision if revision in matching else matching[0])

    def current(self, prefix: str) -> tuple[tuple[str, ...], Mapping[str, str]]:
        entries = self.store.entries(prefix)
        if not entries:
            return (), {}
        return tuple(e.key for e in entries), self.store.read_entry(entries[0].key)

    def save(self, key: str, folder: Path) -> SaveResult:
        return self.store.save(key, folder)


@dataclass(frozen=True, kw_only=True)
class GitHistory:
    store: GitMemoryStore

    @property
    def name(self) -> str:
        return self.store.name

    def revisions(self, prefix: str) -> list[Revision]:
        return [
            Revision(id=r.oid, when=r.committed, summary=_run_line(r.headline, r.body))
            for r in self.store.log(prefix)
        ]

    def files_at(self, prefix: str, revision: str) -> Mapping[str, str]:
        commits = [r.oid for r in self.store.log(prefix, 100) if r.oid.startswith(revision)]
        if not revision or not commits:
            raise InputError(
                f"Commit {revision!r} did not change {folder_of(prefix)} on the {self.name}; "
                "'memory-agent memory log' lists the commits that did."
            )
        entry = self.store.read(folder_of(prefix), at=commits[0])
        if entry is None:
            raise InputError(f"Commit {revision} holds no memory entry in {folder_of(prefix)}.")
        return entry.files

    def current(self, prefix: str) -> tuple[tuple[str, ...], Mapping[str, str]]:
        entry = self.store.read(folder_of(prefix))
        return ((entry.key,), entry.files) if entry is not None else ((), {})

    def save(self, key: str, folder: Path) -> SaveResult:
        return self.store.save(key, folder)


def _run_line(headline: str, body: str) -> str:
    run = next((line for line in body.splitlines() if line.startswith("Run: ")), "")
    return f"{headline}  {run}".strip()


def show_log(history: History, prefix: str, out: TextIO) -> int:
    revisions = history.revisions(prefix)
    if not revisions:
        print(f"No committed memory under {prefix} in {history.name}.", file=out)
    for revision in revisions:
        print(f"{revision.id}  {revision.when}  {revision.summary}", file=out)
    return 0


def rollback(
    history: History, prefix: str, revision: str, max_bytes: int, out: TextIO, *, over: str = ""
) -> int:
    """``over``: the committed prefix when ``prefix`` is an overlay (it applies on top)."""
    files = history.files_at(prefix, revision)
    text = files.get(MEMORY_FILE, "")
    refused = _refusal(text, max_bytes)
    if refused:
        raise InputError(
            f"Not rolled back: {revision} {refused}; roll back to another revision (or export, "
            "edit and import)."
        )
    key = _save_new(history, prefix, text, _kept(files, text), "rollback", over=over)
    print(f"Restored {revision} as a new entry {key}.", file=out)
    return 0


def export(history: History, prefix: str, target: Path, out: TextIO) -> int:
    """Write the newest entry's memory and provenance through the outgoing gate: an entry saved
    before a detector knew a secret's shape (or planted on the branch) is exported redacted."""
    _, files = history.current(prefix)
    if MEMORY_FILE not in files:
        raise InputError(f"No committed memory under {prefix} in {history.name} to export.")
    text = files[MEMORY_FILE]
    findings = find_secrets(text)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(gate(text, form=Form.TEXT).text, encoding="utf-8")
    sidecar = target.with_name(target.stem + SIDECAR_SUFFIX)
    sidecar.write_text(_gated_provenance(files.get(PROVENANCE_FILE, "")), encoding="utf-8")
    redacted = f" ({describe(findings)} redacted)" if findings else ""
    print(f"Wrote {target} and {sidecar}{redacted}.", file=out)
    return 0


def _gated_provenance(text: str) -> str:
    """The provenance as a JSON document through the gate; ``{}`` for none or one not JSON."""
    try:
        return gate(text, form=Form.JSON).text
    except ValueError:
        return "{}\n"


def import_file(
    history: History,
    prefix: str,
    source: Path,
    max_bytes: int,
    out: TextIO,
    *,
    over: str = "",
) -> int:
    try:
        text = source.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"Cannot import {source}: {exc}.") from None
    refused = _refusal(text, max_bytes)
    if refused:
        raise InputError(f"Not imported: {source} {refused}; fix it and import again.")
    _, files = history.current(prefix)
    key = _save_new(history, prefix, text, _kept(files, text), "import", over=over)
    print(f"Imported {source} as {key}.", file=out)
    return 0


def _refusal(text: str, max_bytes: int) -> str:
    """Why ``text`` may not become committed memory ("" when it may): the checks an agent's
    edit goes through, for every way the command line saves memory."""
    findings = find_secrets(text)
    if findings:
        return f"holds {describe(findings)} (memory never holds secrets)"
    size = len(text.encode())
    if size > max_bytes:
        return (
            f"is {size} bytes, over the memory budget of {max_bytes} bytes "
            "(shorten it or raise --max-memory-kb)"
        )
    return ""


def _kept(files: Mapping[str, str], text: str) -> Provenance:
    """The provenance in ``files`` of the lines ``text`` holds, and of no other line."""
    kept = frozenset(memory_lines(text))
    records = Provenance.from_text(files.get(PROVENANCE_FILE, "")).records
    return Provenance(records={line: r for line, r in records.items() if line in kept})


def _save_new(
    history: History, prefix: str, text: str, provenance: Provenance, why: str, *, over: str
) -> str:
    """Save ``text`` as the layer's newest entry, replacing (not rewriting) the current one; an
    overlay (``over`` set) records the committed text it applies on top of as its base."""
    replaced, current = history.current(prefix)
    base = history.current(over)[1] if over else current
    state = EntryState(
        layer=Layer.OVERLAY if over else Layer.COMMITTED,
        base=base.get(MEMORY_FILE, ""),
        parents=replaced[:MAX_PARENTS],
    )
    # The time stands in for a run id: a command line has no run, and keys must stay unique.
    key = f"{prefix}{save_suffix(str(int(time.time())), '1', why, new_nonce())}"
    with tempfile.TemporaryDirectory(prefix="memory-agent-") as scratch:
        folder = Path(scratch) / "memory"
        write_memory(folder, text)
        provenance.dump(folder / PROVENANCE_FILE)
        state.dump(folder)
        try:
            saved = history.save(key, folder)
        except GitRemoteError as exc:
            raise InputError(f"Not saved to {history.name}: {exc}") from None
    if not saved.saved:
        raise InputError(f"Not saved to {history.name}: {saved.reason}")
    return key
