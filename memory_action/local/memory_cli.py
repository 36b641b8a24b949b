"""``memory-agent memory list|show|diff|blame``: read the local store for people."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from memory_action.errors import InputError
from memory_action.memory.diff import memory_diff
from memory_action.memory.provenance import Provenance, render_blame
from memory_action.memory.state import MEMORY_FILE, PROVENANCE_FILE
from memory_action.scope import agent_prefix as prefix_of
from memory_action.settings import parse_agent_name
from memory_action.store.local import (
    STORE_DIR_VARIABLE,
    LocalDirectoryStore,
    StoredEntry,
    default_store_dir,
)

HISTORY_COMMANDS = ("log", "rollback", "export", "import")


def open_store(args: argparse.Namespace, env: Mapping[str, str]) -> LocalDirectoryStore:
    root = Path(args.store_dir).expanduser() if args.store_dir else default_store_dir(env)
    return LocalDirectoryStore(root)


def usable_store(
    args: argparse.Namespace, env: Mapping[str, str], *, writing: bool
) -> LocalDirectoryStore:
    """The store, refused (exit 2) when it cannot be used, before anything is spent on a run."""
    store = open_store(args, env)
    problem = store.unusable(writing=writing)
    if problem is None:
        return store
    if args.store_dir:
        named = f"--store-dir {args.store_dir}"
    elif env.get(STORE_DIR_VARIABLE):
        named = f"${STORE_DIR_VARIABLE} ({store.root})"
    else:
        named = f"The default store folder {store.root}"
    raise InputError(
        f"{named} cannot hold the memory store: {problem}; give --store-dir a folder you can "
        "write to."
    )


def memory_command(args: argparse.Namespace, env: Mapping[str, str], out: TextIO) -> int:
    agent_name = parse_agent_name(args.agent_name)
    agent_prefix = prefix_of(agent_name)
    if args.memory_command in HISTORY_COMMANDS:
        from memory_action.local.memory_commands import history_command  # noqa: PLC0415

        return history_command(args, env, agent_name, out)
    store = open_store(args, env)
    if args.memory_command == "list":
        return _list(store, agent_prefix, out)
    if args.memory_command == "show":
        return _show(store, _pick(store, args.key or agent_prefix, agent_prefix), out)
    if args.memory_command == "blame":
        return _blame(store, _pick(store, args.key or agent_prefix, agent_prefix), out)
    return _diff(store, args, agent_prefix, out)


def _pick(store: LocalDirectoryStore, key_or_prefix: str, agent_prefix: str) -> StoredEntry:
    """The newest entry whose key equals or starts with ``key_or_prefix``."""
    entries = store.entries(key_or_prefix)
    if not entries:
        raise InputError(
            f"No memory entry matches '{key_or_prefix}' in {store.name}; "
            f"'memory-agent memory list' shows the keys under {agent_prefix}."
        )
    exact = [entry for entry in entries if entry.key == key_or_prefix]
    return exact[0] if exact else entries[0]


def _list(store: LocalDirectoryStore, prefix: str, out: TextIO) -> int:
    entries = store.entries(prefix)
    if not entries:
        print(f"No memory entries under {prefix} in {store.name}.", file=out)
        return 0
    for entry in entries:
        created = entry.created.isoformat(timespec="seconds")
        print(f"{created}  {entry.size:>7} B  {entry.key}", file=out)
    return 0


def _show(store: LocalDirectoryStore, entry: StoredEntry, out: TextIO) -> int:
    print(f"# {entry.key} ({entry.created.isoformat(timespec='seconds')})", file=out)
    for path, text in sorted(store.read_entry(entry.key).items()):
        print(f"\n## {path}\n", file=out)
        print(text.rstrip("\n"), file=out)
    return 0


def _blame(store: LocalDirectoryStore, entry: StoredEntry, out: TextIO) -> int:
    files = store.read_entry(entry.key)
    records = Provenance.from_text(files.get(PROVENANCE_FILE, ""))
    print(f"# {entry.key} ({entry.created.isoformat(timespec='seconds')})", file=out)
    print(render_blame(files.get(MEMORY_FILE, ""), records).rstrip("\n"), file=out)
    return 0


def _diff(store: LocalDirectoryStore, args: argparse.Namespace, prefix: str, out: TextIO) -> int:
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
