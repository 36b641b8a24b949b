"""Which history the ``memory log|rollback|export|import`` commands work on, and dispatching."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from memory_action.errors import InputError
from memory_action.local.history import (
    GitHistory,
    History,
    LocalHistory,
    export,
    import_file,
    rollback,
    show_log,
)
from memory_action.local.memory_cli import open_store
from memory_action.scope import repo_committed_prefix
from memory_action.store.git import GitMemoryStore
from memory_action.store.git_remote import GitHubGitRemote


def history_command(
    args: argparse.Namespace, env: Mapping[str, str], agent_name: str, out: TextIO
) -> int:
    prefix = args.prefix or repo_committed_prefix(agent_name)
    if not prefix.endswith("/"):
        raise InputError(f"--prefix {prefix!r} must end with '/' (a key prefix, not a key).")
    history = _open(args, env)
    if args.memory_command == "log":
        return show_log(history, prefix, out)
    if args.memory_command == "rollback":
        return rollback(history, prefix, args.revision, args.max_memory_kb * 1024, out)
    if args.memory_command == "export":
        return export(history, prefix, Path(args.out), out)
    return import_file(history, prefix, Path(args.file), args.max_memory_kb * 1024, out)


def _open(args: argparse.Namespace, env: Mapping[str, str]) -> History:
    if not args.repo:
        return LocalHistory(open_store(args, env))
    token = (env.get("GITHUB_TOKEN") or env.get("GH_TOKEN") or "").strip()
    if not token:
        raise InputError(
            "--repo reads the memory branch with $GITHUB_TOKEN (or $GH_TOKEN): set one."
        )
    # PyGithub loads slowly: only a command on the repository's branch pays for it.
    from memory_action.github.client import DEFAULT_API_URL, GitHubClient  # noqa: PLC0415

    api_url = env.get("GITHUB_API_URL") or DEFAULT_API_URL
    client = GitHubClient(token, api_url, args.repo)
    redact = lambda text: text.replace(token, "***")  # noqa: E731
    remote = GitHubGitRemote(client.repository, args.repo, redact)
    return GitHistory(GitMemoryStore(remote, origin="Run: memory-agent CLI"))
