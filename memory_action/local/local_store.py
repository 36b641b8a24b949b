"""The local store the ``memory-agent`` commands work on: which folder (refused before any work
when it cannot be used), its local layer, and the line that tells people which memory a command
used (on stderr, so stdout stays the entries alone)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path

from memory_action.errors import InputError
from memory_action.local.git_diff import LOCAL_NUMBER
from memory_action.run.scope import agent_prefix
from memory_action.store.local import STORE_DIR_VARIABLE, LocalDirectoryStore, default_store_dir


def local_layer(agent_name: str) -> str:
    """Where ``review --local`` saves: the overlay of the local change (``pr-0``)."""
    return f"{agent_prefix(agent_name)}repo/pr-{LOCAL_NUMBER}/"


def say(message: str) -> None:
    """Which memory a command shows: on stderr, beside the entries on stdout."""
    print(message, file=sys.stderr)


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
