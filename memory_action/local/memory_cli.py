"""``memory-agent memory list|show|diff|blame``: read the local store for people.

In a checkout the commands see that repository's memory (``local.repository``), and ``show``,
``blame`` and the history commands find the local layer (what ``review --local`` saved) by
default; ``--all``, or a folder outside any checkout, shows the whole store with each entry's
repository. Which memory is shown is said on stderr, so stdout stays the entries alone.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO
from urllib.parse import unquote

from memory_action.errors import InputError
from memory_action.local.connect import Connect
from memory_action.local.git_diff import LOCAL_NUMBER
from memory_action.local.local_store import local_layer, open_store, say
from memory_action.local.repository import (
    NO_REPOSITORY,
    RepositoryStore,
    current_repository,
    repository_of_key,
)
from memory_action.memory.diff import memory_diff
from memory_action.memory.provenance import Provenance, render_blame
from memory_action.memory.state import MEMORY_FILE, PROVENANCE_FILE
from memory_action.run.scope import agent_prefix as prefix_of
from memory_action.run.settings import parse_agent_name
from memory_action.store.local import (
    EntryStore,
    StoredEntry,
)

HISTORY_COMMANDS = ("log", "rollback", "export", "import")


@dataclass(frozen=True, kw_only=True)
class View:
    """The memory a command sees: one repository's (``repository``), or the whole store."""

    store: EntryStore
    repository: str | None

    def describe(self) -> str:
        if self.repository is None:
            return f"every repository's memory in the {self.store_name}"
        return f"the memory of {self.repository} in the {self.store_name}"

    @property
    def store_name(self) -> str:
        store = self.store.store if isinstance(self.store, RepositoryStore) else self.store
        return store.name


def layer_name(key: str, agent_name: str) -> str:
    """The layer a key of the agent's belongs to, for people."""
    rest = key.partition(prefix_of(agent_name))[2]
    parts = rest.split("/")
    if parts[0] == "repo" and len(parts) > 1:
        return _overlay_or_committed(parts[1], "repository")
    if parts[0] == "branch" and len(parts) > 2:
        return _overlay_or_committed(parts[2], f"branch {unquote(parts[1])}")
    if parts[0] == "pr" and len(parts) > 1:
        return f"pull request #{parts[1]} memory"
    return "unknown layer"


def _overlay_or_committed(part: str, scope: str) -> str:
    if part == "committed":
        return f"{scope} committed"
    if part == f"pr-{LOCAL_NUMBER}":
        return "local"
    return f"pull request #{part.removeprefix('pr-')}"


def open_view(args: argparse.Namespace, env: Mapping[str, str]) -> View:
    """The current checkout's memory; the whole store with ``--all`` or outside a checkout."""
    store = open_store(args, env)
    repository = None if getattr(args, "all", False) else current_repository(Path.cwd(), env)
    if repository is None:
        return View(store=store, repository=None)
    return View(store=RepositoryStore(store=store, repository=repository), repository=repository)


def memory_command(
    args: argparse.Namespace, env: Mapping[str, str], out: TextIO, connect: Connect
) -> int:
    """``connect``: how a command on a repository's memory branch gets the run's GitHub client."""
    agent_name = parse_agent_name(args.agent_name)
    agent_prefix = prefix_of(agent_name)
    if args.memory_command in HISTORY_COMMANDS:
        from memory_action.local.memory_commands import history_command  # noqa: PLC0415

        return history_command(args, env, agent_name, out, connect)
    view = open_view(args, env)
    store = view.store
    if args.memory_command == "list":
        say(f"Listing {view.describe()}.")
        return _list(view, agent_name, out)
    if args.memory_command in ("show", "blame"):
        entry = _pick(store, args.key or _default_layer(store, agent_name), agent_prefix)
        say(f"Showing the {layer_name(entry.key, agent_name)} layer of {view.describe()}.")
        show = _show if args.memory_command == "show" else _blame
        return show(store, entry, out)
    return _diff(store, args, agent_prefix, out)


def _default_layer(store: EntryStore, agent_name: str) -> str:
    """The local layer when it holds an entry, else any of the agent's entries."""
    local = local_layer(agent_name)
    return local if store.entries(local) else prefix_of(agent_name)


def _pick(store: EntryStore, key_or_prefix: str, agent_prefix: str) -> StoredEntry:
    """The newest entry whose key equals or starts with ``key_or_prefix``."""
    entries = store.entries(key_or_prefix)
    if not entries:
        raise InputError(
            f"No memory entry matches '{key_or_prefix}' in {store.name}; "
            f"'memory-agent memory list' shows the keys under {agent_prefix}."
        )
    exact = [entry for entry in entries if entry.key == key_or_prefix]
    return exact[0] if exact else entries[0]


def _list(view: View, agent_name: str, out: TextIO) -> int:
    """One line per entry: when, how big, whose (the layer, or with ``--all`` the repository)
    and its key. Entries from before keys named a repository belong to none."""
    store, prefix = view.store, prefix_of(agent_name)
    entries = [e for e in store.entries() if _agent_key(e.key, view).startswith(prefix)]
    if isinstance(store, RepositoryStore) and (others := len(store.store.entries()) - len(entries)):
        say(
            f"{others} other entr{'ies' if others != 1 else 'y'} (other repositories', other "
            "agents', or from before keys named a repository): 'memory list --all' shows them."
        )
    if not entries:
        print(f"No memory entries under {prefix} in {store.name}.", file=out)
        return 0
    for entry in entries:
        created = entry.created.isoformat(timespec="seconds")
        whose = layer_name(entry.key, agent_name) if view.repository else _repository(entry)
        print(f"{created}  {entry.size:>7} B  {whose}  {entry.key}", file=out)
    if view.repository is None and any(repository_of_key(e.key) is None for e in entries):
        say(
            f"Entries of repository {NO_REPOSITORY} were saved before keys named a repository: "
            "no review reads them; to keep one, 'memory show --all --key KEY', save its "
            "AGENTS.md and 'memory import' it in its repository."
        )
    return 0


def _agent_key(key: str, view: View) -> str:
    """The key as the scope wrote it: without the repository the whole store puts first."""
    if view.repository is not None or repository_of_key(key) is None:
        return key
    return key.partition("/")[2]


def _repository(entry: StoredEntry) -> str:
    return repository_of_key(entry.key) or NO_REPOSITORY


def _show(store: EntryStore, entry: StoredEntry, out: TextIO) -> int:
    print(f"# {entry.key} ({entry.created.isoformat(timespec='seconds')})", file=out)
    for path, text in sorted(store.read_entry(entry.key).items()):
        print(f"\n## {path}\n", file=out)
        print(text.rstrip("\n"), file=out)
    return 0


def _blame(store: EntryStore, entry: StoredEntry, out: TextIO) -> int:
    files = store.read_entry(entry.key)
    records = Provenance.from_text(files.get(PROVENANCE_FILE, ""))
    print(f"# {entry.key} ({entry.created.isoformat(timespec='seconds')})", file=out)
    print(render_blame(files.get(MEMORY_FILE, ""), records).rstrip("\n"), file=out)
    return 0


def _diff(store: EntryStore, args: argparse.Namespace, prefix: str, out: TextIO) -> int:
    if args.old or args.new:
        if not (args.old and args.new):
            raise InputError("memory diff needs both --old and --new, or neither.")
        old, new = _pick(store, args.old, prefix), _pick(store, args.new, prefix)
    else:
        entries = store.entries(prefix)
        if len(entries) < 2:
            print(f"Fewer than two memory entries under {prefix}; nothing to diff.", file=out)
            return 0
        new, old = entries[0], entries[1]
    diff = memory_diff(store.read_entry(old.key), store.read_entry(new.key), "")
    print(f"--- {old.key}\n+++ {new.key}", file=out)
    print(diff.rstrip("\n") if diff else "(no differences)", file=out)
    return 0
