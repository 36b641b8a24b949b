"""Which history the ``memory log|rollback|export|import`` commands work on, and dispatching."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from memory_action.errors import InputError
from memory_action.local.connect import Connect
from memory_action.local.history import (
    GitHistory,
    History,
    LocalHistory,
    export,
    import_file,
    rollback,
    show_log,
)
from memory_action.local.local_store import local_layer, say, usable_store
from memory_action.local.repository import RepositoryStore, current_repository
from memory_action.run.scope import repo_committed_prefix
from memory_action.store.git import GitMemoryStore
from memory_action.store.git_remote import GitHubGitRemote

WRITES = ("rollback", "import")


def history_command(
    args: argparse.Namespace, env: Mapping[str, str], agent_name: str, out: TextIO, connect: Connect
) -> int:
    if args.prefix and not args.prefix.endswith("/"):
        raise InputError(f"--prefix {args.prefix!r} must end with '/' (a key prefix, not a key).")
    history = _open(args, env, connect)
    prefix, over, used = _layer(args, history, agent_name)
    if args.memory_command == "log":
        done = show_log(history, prefix, out)
    elif args.memory_command == "rollback":
        done = rollback(history, prefix, args.revision, args.max_memory_kb * 1024, out, over=over)
    elif args.memory_command == "export":
        done = export(history, prefix, Path(args.out), out)
    else:
        budget = args.max_memory_kb * 1024
        done = import_file(history, prefix, Path(args.file), budget, out, over=over)
    say(used)  # after the work: a refusal stays one line
    return done


def _layer(args: argparse.Namespace, history: History, agent_name: str) -> tuple[str, str, str]:
    """The prefix to work on, for an overlay the committed prefix it applies on top of, and a
    line saying which: ``--prefix``, else the local layer (what ``review --local`` saved) when
    it holds an entry, else the committed memory."""
    committed = repo_committed_prefix(agent_name)
    if args.prefix:
        return args.prefix, "", f"Used the entries under {args.prefix} of the {history.name}."
    local = local_layer(agent_name)
    if isinstance(history, LocalHistory) and history.revisions(local):
        used = f"Used the local layer ({local}, what review --local saved) of the {history.name}."
        return local, committed, used
    return committed, "", f"Used the committed memory ({committed}) of the {history.name}."


def _open(args: argparse.Namespace, env: Mapping[str, str], connect: Connect) -> History:
    if not args.repo:
        store = usable_store(args, env, writing=args.memory_command in WRITES)
        repository = current_repository(Path.cwd(), env)
        return LocalHistory(
            store=RepositoryStore(store=store, repository=repository) if repository else store
        )
    token = (env.get("GITHUB_TOKEN") or env.get("GH_TOKEN") or "").strip()
    if not token:
        raise InputError(
            "--repo reads the memory branch with $GITHUB_TOKEN (or $GH_TOKEN): set one."
        )
    client = connect(token, env.get("GITHUB_API_URL", ""), args.repo)  # "": github.com's API
    redact = lambda text: text.replace(token, "***")  # noqa: E731
    remote = GitHubGitRemote(client.repository, args.repo, redact)
    return GitHistory(store=GitMemoryStore(remote, origin="Run: memory-agent CLI"))
