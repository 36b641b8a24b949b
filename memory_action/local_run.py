"""``memory-agent review``: the action's pipeline from a terminal, with the local store.

Flags become ``INPUT_*`` values, so they are validated by the same parser as the action's inputs.
The run works in a temporary workspace: read-only sources are copied in from ``--sources-dir``,
the writable memory is restored there from the local store, and nothing in the current folder
is changed.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from memory_action import pipeline
from memory_action.context import PullRequestRef, RunContext, Trust
from memory_action.errors import InputError, MemoryFileError
from memory_action.gha import Workflow
from memory_action.local_memory import open_store
from memory_action.main import mask_secrets, model_factory
from memory_action.settings import Secret, Settings, parse_settings
from memory_action.store.hygiene import LocalLayerAdmin

TOKEN_VARIABLES = ("GITHUB_TOKEN", "GH_TOKEN")


def settings_from_flags(args: argparse.Namespace, env: Mapping[str, str]) -> Settings:
    flags = {
        "model": args.model,
        "model_base_url": args.model_base_url,
        "memory_scope": args.memory_scope,
        "agent_name": args.agent_name,
        "prompt": args.prompt,
        "max_memory_kb": args.max_memory_kb,
        "timeout_minutes": args.timeout_minutes,
        "memory_sources": "\n".join(args.memory_source) if args.memory_source else None,
        "model_api_key": env.get("MEMORY_AGENT_MODEL_API_KEY"),
    }
    inputs = {f"INPUT_{name.upper()}": value for name, value in flags.items() if value}
    settings = parse_settings(inputs)
    token = next((env[name] for name in TOKEN_VARIABLES if env.get(name)), "")
    if not token:
        raise InputError(
            "No GitHub token: set GITHUB_TOKEN (or GH_TOKEN) to a token that can read the "
            "pull request, e.g. GITHUB_TOKEN=$(gh auth token)."
        )
    return dataclasses.replace(settings, github_token=Secret(token), post_comment=not args.dry_run)


def review(args: argparse.Namespace, env: Mapping[str, str], workflow: Workflow) -> int:
    from memory_action.github import GitHubClient  # noqa: PLC0415 - PyGithub only when needed

    settings = settings_from_flags(args, env)
    mask_secrets(settings, workflow)
    api_url = env.get("GITHUB_API_URL", "https://api.github.com")
    github = GitHubClient(settings.github_token.reveal(), api_url, args.repo)
    with tempfile.TemporaryDirectory(prefix="memory-agent-") as temp:
        workspace = Path(temp)
        _copy_sources(Path(args.sources_dir), settings.memory_sources, workspace)
        context = _local_context(args, github, workspace, api_url)
        store = open_store(args, env)
        services = pipeline.Services(
            workflow=workflow,
            store=store,
            store_note="",
            github=github,
            model_factory=model_factory(settings, env),
            layer_admin=lambda _ref: LocalLayerAdmin(store),
            sources_from_base=False,  # the person at the terminal chose --sources-dir
        )
        result = pipeline.run(settings, context, services)
    print(result.response)
    if result.memory_diff:
        print(f"\nMemory changes:\n{result.memory_diff}")
    return 0


def _copy_sources(sources_dir: Path, sources: tuple[str, ...], workspace: Path) -> None:
    """Copy the sources that exist; like the action, refuse one that links outside the folder
    (the copy would follow the link, and the action's own check could no longer see it)."""
    root = Path(os.path.realpath(sources_dir))
    for source in sources:
        original = sources_dir.joinpath(*PurePosixPath(source).parts)
        if original.is_file():
            if root not in Path(os.path.realpath(original)).parents:
                raise MemoryFileError(
                    f"Memory source {source} is a symlink to a file outside {sources_dir}: "
                    "copy that file into the folder, or name other sources with --memory-source."
                )
            target = workspace.joinpath(*PurePosixPath(source).parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(original, target)


def _local_context(
    args: argparse.Namespace, github: object, workspace: Path, api_url: str
) -> RunContext:
    from memory_action.github import GitHubClient  # noqa: PLC0415

    assert isinstance(github, GitHubClient)  # noqa: S101 - built by review() above
    info = github.pull_request(args.pr).info()
    pr = PullRequestRef(
        number=info.number,
        head_repo=args.repo,
        base_ref=info.base_ref,
        head_ref=info.head_ref,
        head_sha=info.head_sha,
        author=info.author,
        author_association="OWNER",
        is_fork=False,
    )
    return RunContext(
        event_name="pull_request",
        action="local",
        repository=args.repo,
        server_url="https://github.com",
        api_url=api_url,
        ref=f"refs/pull/{info.number}/merge",
        sha=info.head_sha,
        default_branch=github.default_branch(),
        run_id=f"local{time.time_ns()}",  # unique per run: saved keys are immutable
        run_attempt="1",
        actor="local",
        workspace=workspace,
        pull_request=pr,
        comment_body="",
        comment_author_association="",
        trust=Trust.TRUSTED,  # the person at the terminal chose to run it
        may_write=not args.no_save,
        write_note="--no-save was given" if args.no_save else "",
    )
