"""``memory-agent review``: the action's pipeline from a terminal, with the local store.

Two kinds of change: a GitHub pull request (``--repo``/``--pr``, read with a GitHub token) or the
current checkout's ``git diff BASE...HEAD`` (``--local``: no GitHub at all unless the model runs
on GitHub Models). Flags become ``INPUT_*`` values, so they are validated by the same parser as
the action's inputs. The run works in a temporary workspace: read-only sources are copied in
from ``--sources-dir``, the writable memory is restored there from the local store, and nothing
in the current folder is changed.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from memory_action import pipeline
from memory_action.agent.progress import ProgressHook
from memory_action.errors import InputError, MemoryFileError
from memory_action.gha import Workflow
from memory_action.github.pull_request import PullRequestReader
from memory_action.local.connect import Connect
from memory_action.local.git_diff import open_change
from memory_action.local.local_store import usable_store
from memory_action.local.repository import (
    RepositoryStore,
    checkout_repository,
    pull_request_repository,
)
from memory_action.local.run_context import checkout_context, local_run_id, write_note
from memory_action.local.words import API_KEY_VARIABLE, cli_words
from memory_action.main import ask_server, mask_secrets, model_factory
from memory_action.memory.trust import Trust
from memory_action.publish.comment import figures_of
from memory_action.run.context import PullRequestRef, RunContext
from memory_action.run.settings import (
    API_KEY_VARIABLES,
    Settings,
    parse_settings,
    provider_api_key,
)
from memory_action.store.hygiene import LocalLayerAdmin
from memory_action.store.secret import Secret

if TYPE_CHECKING:
    from memory_action.github.client import GitHubClient

TOKEN_VARIABLES = ("GITHUB_TOKEN", "GH_TOKEN")


def settings_from_flags(
    args: argparse.Namespace, env: Mapping[str, str], warn: Callable[[str], None] | None = None
) -> Settings:
    """The run's settings from the flags; ``INPUT_*`` variables are the action's, never read
    here (each is named to ``warn``, with its flag), so a flag is the one way to set a value."""
    flags = {
        "model": args.model,
        "model_base_url": args.model_base_url,
        "memory_scope": args.memory_scope,
        "agent_name": args.agent_name,
        "prompt": args.prompt,
        "max_memory_kb": args.max_memory_kb,
        "timeout_minutes": args.timeout_minutes,
        "max_input_tokens": args.max_input_tokens,
        "max_model_calls": args.max_model_calls,
        "exclude": "\n".join(args.exclude) if args.exclude else None,
        "memory_sources": "\n".join(args.memory_source) if args.memory_source else None,
        "model_api_key": env.get(API_KEY_VARIABLE),
    }
    inputs = {f"INPUT_{name.upper()}": value for name, value in flags.items() if value}
    if warn is not None and (ignored := _ignored_inputs(env, flags)):
        warn(ignored)
    settings = parse_settings(inputs, ask_server=ask_server)
    token = next((env[name] for name in TOKEN_VARIABLES if env.get(name)), "")
    return dataclasses.replace(
        settings,
        github_token=Secret(token.strip()),
        post_comment=not (args.dry_run or args.local),
    )


def _ignored_inputs(env: Mapping[str, str], flags: Mapping[str, object]) -> str:
    """One line naming the ``INPUT_*`` variables set in ``env``, and the flags to use instead."""
    names = sorted(n for n in env if n.startswith("INPUT_") and env[n].strip())
    if not names:
        return ""
    instead = [
        API_KEY_VARIABLE if n == "INPUT_MODEL_API_KEY" else f"--{n[6:].lower().replace('_', '-')}"
        for n in names
        if n[6:].lower() in flags
    ]
    hint = f": use {', '.join(instead)} instead" if instead else ""
    return (
        f"Ignored {', '.join(names)}: INPUT_* variables are the action's inputs, read by "
        f"'memory-agent run'; 'memory-agent review' takes flags{hint}."
    )


def check_model_credentials(settings: Settings, env: Mapping[str, str]) -> None:
    """Before anything runs: the model's provider has what it needs, said in CLI terms."""
    spec, provider = settings.model, settings.model.provider
    if provider == "github" and not settings.github_token:
        raise InputError(
            f"model={spec} runs on GitHub Models and needs a GitHub token: set GITHUB_TOKEN "
            "(e.g. GITHUB_TOKEN=$(gh auth token)), or pick another --model."
        )
    variable = API_KEY_VARIABLES.get(provider)
    if variable and not provider_api_key(settings, env):
        hint = " (any value if the server needs none)" if settings.model_base_url else ""
        raise InputError(
            f"model={spec} needs an API key: set {API_KEY_VARIABLE} or {variable}{hint}."
        )


def review(
    args: argparse.Namespace,
    env: Mapping[str, str],
    workflow: Workflow,
    connect: Connect,
    progress: ProgressHook | None = None,
) -> int:
    """``connect`` gives the run's GitHub client (a pull request's review reads it);
    ``progress`` hears of each model request (the CLI shows it on stderr)."""
    if args.local:
        if args.repo or args.pr is not None:
            raise InputError(
                "--local reviews the current checkout: leave out --repo and --pr, or drop --local."
            )
        return _review_checkout(args, env, workflow, progress)
    if args.base is not None:
        raise InputError("--base goes with --local: add --local, or leave out --base.")
    if not args.repo or args.pr is None:
        raise InputError(
            "review needs --repo OWNER/NAME and --pr N, or --local for the current checkout."
        )
    return _review_pull_request(args, env, workflow, connect, progress)


def _review_pull_request(
    args: argparse.Namespace,
    env: Mapping[str, str],
    workflow: Workflow,
    connect: Connect,
    progress: ProgressHook | None,
) -> int:
    settings = settings_from_flags(args, env, workflow.warning)
    if not settings.github_token:
        raise InputError(
            "No GitHub token: set GITHUB_TOKEN (or GH_TOKEN) to a token that can read the "
            "pull request, e.g. GITHUB_TOKEN=$(gh auth token)."
        )
    check_model_credentials(settings, env)
    store = usable_store(args, env, writing=not args.no_save)
    mask_secrets(settings, workflow)
    api_url = env.get("GITHUB_API_URL", "https://api.github.com")
    github = connect(settings.github_token.reveal(), api_url, args.repo)
    with tempfile.TemporaryDirectory(prefix="memory-agent-") as temp:
        workspace = Path(temp)
        _copy_sources(Path(args.sources_dir or "."), settings.memory_sources, workspace)
        context = _local_context(args, github, workspace, api_url)
        repository = pull_request_repository(args.repo, env.get("GITHUB_SERVER_URL", ""))
        own = RepositoryStore(store=store, repository=repository)
        result = _run(own, workflow, settings, context, env, progress=progress, github=github)
    return _print(result)


def _review_checkout(
    args: argparse.Namespace,
    env: Mapping[str, str],
    workflow: Workflow,
    progress: ProgressHook | None,
) -> int:
    change = open_change(Path.cwd(), args.base, env)
    settings = settings_from_flags(args, env, workflow.warning)
    check_model_credentials(settings, env)
    store = usable_store(args, env, writing=not args.no_save)
    mask_secrets(settings, workflow)
    files = change.changed_files()
    own = RepositoryStore(store=store, repository=checkout_repository(change.git))
    workflow.info(
        f"Reviewing git diff {change.base}...HEAD of {change.git.root} ({len(files)} changed "
        f"file{'s' if len(files) != 1 else ''}) with the memory of {own.repository}; the review "
        "is printed here, nothing is posted to GitHub."
    )
    with tempfile.TemporaryDirectory(prefix="memory-agent-") as temp:
        workspace = Path(temp)
        sources_dir = Path(args.sources_dir) if args.sources_dir else change.git.root
        _copy_sources(sources_dir, settings.memory_sources, workspace)
        context = checkout_context(change, workspace, no_save=args.no_save)
        result = _run(own, workflow, settings, context, env, progress=progress, reader=change)
    return _print(result)


def _run(
    store: RepositoryStore,
    workflow: Workflow,
    settings: Settings,
    context: RunContext,
    env: Mapping[str, str],
    *,
    progress: ProgressHook | None,
    github: pipeline.GitHubAccess | None = None,
    reader: PullRequestReader | None = None,
) -> pipeline.RunResult:
    services = pipeline.Services(
        workflow=workflow,
        store=store,
        store_note="",
        github=github,
        pull_request_reader=reader,
        model_factory=model_factory(settings, env),
        layer_admin=lambda _ref: LocalLayerAdmin(store=store),
        sources_from_base=False,  # the person at the terminal chose the sources folder
        progress=progress,
        naming=cli_words,
    )
    return pipeline.run(settings, context, services)


def _print(result: pipeline.RunResult) -> int:
    """The review (and memory changes) on stdout; what it did not cover on stderr, with the
    progress and the run's one summary line (the pipeline's), so stdout stays the review alone."""
    review = result.review
    print(result.response)
    if result.memory_diff:
        print(f"\nMemory changes:\n{result.memory_diff}")
    if review is not None:
        for path, why in figures_of(review).not_reviewed:
            print(f"Not reviewed: {path}: {why}", file=sys.stderr)
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
    args: argparse.Namespace, github: GitHubClient, workspace: Path, api_url: str
) -> RunContext:
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
        run_id=local_run_id(),
        run_attempt="1",
        actor="local",
        workspace=workspace,
        pull_request=pr,
        comment_body="",
        comment_author_association="",
        trust=Trust.TRUSTED,  # the person at the terminal chose to run it
        may_write=not args.no_save,
        write_note=write_note(no_save=args.no_save),
    )
