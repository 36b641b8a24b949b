"""The ``memory-agent`` command: the same pipeline from a terminal, with a local memory store.

    memory-agent review --repo OWNER/NAME --pr N [--dry-run] [--store-dir DIR] [--model …]
    memory-agent review --local [--base REF] [--model …]   the current checkout's git diff
    memory-agent memory list|show|diff|blame [--store-dir DIR] [--agent-name NAME]
    memory-agent memory log|rollback REV|export|import FILE [--repo OWNER/NAME | --store-dir DIR]
    memory-agent eval [--quick]   the learning loop measured on a generated repository
    memory-agent eval replay EVENTS.jsonl   would each finding of a review history be posted
    memory-agent run        the action itself, from INPUT_* and GITHUB_* (what the image runs)

Only ``argparse`` is imported up front, so ``--help`` answers at once.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memory_action import __version__

if TYPE_CHECKING:
    from memory_action.agent.progress import ProgressHook
    from memory_action.gha import Workflow

USAGE = 2  # what argparse exits with on bad usage
INTERRUPTED = 130  # 128 + SIGINT, as shells report a command stopped with Ctrl-C


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memory-agent",
        description="An LLM review agent with a memory that survives between runs.",
    )
    parser.add_argument("--version", action="version", version=f"memory-agent {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_review(commands)
    _add_memory(commands)
    evaluation = commands.add_parser(
        "eval",
        help="measure the learning loop: episodes through the real action, against baselines",
        description="Replay episodes of pull requests, reactions, replies and merges through "
        "the real action, against a GitHub fake on 127.0.0.1, with a scripted reviewer that "
        "obeys its memory; print each figure with its target and baselines. Exit 0 when every "
        "target is met, 1 when any is missed. Needs the eval extra: pip install "
        "'memory-agent[eval]'.",
    )
    evaluation.add_argument(
        "--quick", action="store_true", help="a smaller set of episodes (distance 1 only)"
    )
    replay = evaluation.add_subparsers(dest="eval_command", metavar="replay").add_parser(
        "replay",
        help="whether the action would have posted each finding of a review history",
        description="Read review events, one JSON object a line (the format: "
        "docs/evaluation.md), and print for each whether the action would have posted it, "
        "by its dismissal rules, with the totals. Exit 0, or 2 for a bad file.",
    )
    replay.add_argument("events", metavar="EVENTS.jsonl", help="the review events")
    commands.add_parser(
        "run",
        help="run the action from INPUT_* and GITHUB_* variables (what the container runs)",
        description="Run the GitHub Action itself, reading INPUT_* and GITHUB_* variables.",
    )
    return parser


def _add_store_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store-dir",
        help="local memory store folder (default: $MEMORY_AGENT_STORE_DIR, else "
        "$XDG_DATA_HOME/memory-agent/store, else ~/.local/share/memory-agent/store)",
    )
    parser.add_argument("--agent-name", default="memory-agent", help="agent whose memory to use")


def _add_review(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    review = commands.add_parser(
        "review",
        help="review a pull request, or the current checkout, with the local memory store",
        description="Review a pull request like the action does, with memory kept in a local "
        "store. Reads the pull request with $GITHUB_TOKEN (or $GH_TOKEN). With --local, reviews "
        "git diff BASE...HEAD of the current checkout instead and prints the review: only the "
        "model needs credentials ($GITHUB_TOKEN for github: models, $MEMORY_AGENT_MODEL_API_KEY "
        "or the provider's own variable for openai: and anthropic: models).",
    )
    review.add_argument("--repo", help="OWNER/NAME of the repository")
    review.add_argument("--pr", type=int, help="pull request number")
    review.add_argument(
        "--local",
        action="store_true",
        help="review the current checkout's git diff BASE...HEAD (nothing is posted)",
    )
    review.add_argument(
        "--base",
        help="with --local: the branch, tag or commit to compare with (default: origin/HEAD, "
        "else main, else master)",
    )
    review.add_argument(
        "--dry-run", action="store_true", help="print the review instead of posting the comment"
    )
    review.add_argument("--no-save", action="store_true", help="do not save memory changes")
    review.add_argument("--model", help="provider:model (default github:openai/gpt-4.1-mini)")
    review.add_argument("--model-base-url", help="base URL of an OpenAI-compatible server")
    review.add_argument("--memory-scope", choices=("pr", "branch", "repo"), default="repo")
    review.add_argument("--prompt", help="extra instructions for the agent")
    review.add_argument(
        "--sources-dir",
        help="folder holding the read-only memory sources (default: the current folder; with "
        "--local, the checkout's top folder)",
    )
    review.add_argument("--memory-source", action="append", help="read-only source (repeatable)")
    review.add_argument("--max-memory-kb", help="memory size budget in KiB (default 16)")
    review.add_argument(
        "--timeout-minutes", help="longest the agent may run, and one model request (default 10)"
    )
    review.add_argument(
        "--max-input-tokens",
        help="the most one model request may hold (default: the model's known limit, else what "
        "its --model-base-url server says, else 8000)",
    )
    review.add_argument(
        "--max-model-calls", help="the most model calls the review may make (default 12)"
    )
    review.add_argument(
        "--exclude", action="append", metavar="GLOB", help="changed files to skip (repeatable)"
    )
    _add_store_options(review)


def _add_memory(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    memory = commands.add_parser(
        "memory",
        help="look at the memory in the local store",
        description="Look at the memory entries in the local store.",
    )
    actions = memory.add_subparsers(dest="memory_command", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="list entries, newest first")
    show = actions.add_parser("show", help="print the newest entry (or --key's)")
    show.add_argument("--key", help="an exact key or a key prefix (newest match)")
    diff = actions.add_parser("diff", help="diff the two newest entries (or --old/--new)")
    diff.add_argument("--old", help="key or prefix of the older entry")
    diff.add_argument("--new", help="key or prefix of the newer entry")
    blame = actions.add_parser(
        "blame", help="each memory line with the run that wrote it (newest entry, or --key's)"
    )
    blame.add_argument("--key", help="an exact key or a key prefix (newest match)")
    for parser in (listing, show, diff, blame):
        _add_store_options(parser)
        parser.add_argument(
            "--all",
            action="store_true",
            help="the whole store, every repository's entries (default: in a checkout, the "
            "memory of its repository; keys are then shown without the repository)",
        )
    _add_history(actions)


def _add_history(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    log = actions.add_parser("log", help="the history of committed memory, newest first")
    rollback = actions.add_parser(
        "rollback", help="restore an earlier state as a new entry (never a rewrite)"
    )
    rollback.add_argument("revision", help="a commit (with --repo) or an entry key from 'log'")
    export = actions.add_parser("export", help="write committed memory as a plain AGENTS.md")
    export.add_argument("--out", default="AGENTS.md", help="file to write (default AGENTS.md)")
    imported = actions.add_parser(
        "import", help="seed committed memory from an AGENTS.md (secret and size checked)"
    )
    imported.add_argument("file", help="the AGENTS.md to import")
    for checked in (rollback, imported):  # both save: the size check of every save
        checked.add_argument("--max-memory-kb", type=int, default=16, help="size budget in KiB")
    for parser in (log, rollback, export, imported):
        _add_store_options(parser)
        parser.add_argument(
            "--repo",
            help="OWNER/NAME: the memory branch of this repository (memory_store: git), read "
            "and written with $GITHUB_TOKEN (or $GH_TOKEN); default: the local store",
        )
        parser.add_argument(
            "--prefix",
            help="the key prefix of the committed memory (default: the agent's repository "
            "memory, memory-agent/v1/<agent>/repo/committed/)",
        )


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "run":
        from memory_action.main import main as run_action  # noqa: PLC0415

        return run_action()
    if args.command == "eval":
        return _evaluate(args)
    from memory_action.agent.progress_line import ProgressLine, is_live_terminal  # noqa: PLC0415
    from memory_action.errors import RunEnding, exit_for  # noqa: PLC0415
    from memory_action.gha import Workflow  # noqa: PLC0415
    from memory_action.local.words import cli_words  # noqa: PLC0415

    # Progress on stderr: stdout is the review alone. Whatever else goes to stderr clears the
    # live line first.
    progress = ProgressLine(sys.stderr, live=is_live_terminal(sys.stderr, os.environ))
    stderr = progress.guard(sys.stderr)
    workflow = Workflow(out=stderr, err=stderr)
    ticking = progress.live and args.command == "review"  # only a review waits on a model
    stop_ticking = progress.start_ticking() if ticking else lambda: None
    try:
        return _command(args, workflow, progress)
    except RunEnding as ending:
        told = exit_for(ending, cli_words)  # settings named as flags and variables
        (workflow.error if told.failed else workflow.notice)(told.message)
        return told.code
    except KeyboardInterrupt:
        workflow.error("Interrupted (Ctrl-C): the run stopped; memory is saved only at its end.")
        return INTERRUPTED
    finally:
        stop_ticking()
        progress.clear()


def _command(args: argparse.Namespace, workflow: Workflow, progress: ProgressHook) -> int:
    # The one GitHub client of a command that reads a repository: built as the action builds it.
    from memory_action.main import github_client  # noqa: PLC0415

    if args.command == "review":
        from memory_action.local.review import review  # noqa: PLC0415

        return review(args, os.environ, workflow, github_client, progress)
    from memory_action.local.memory_cli import memory_command  # noqa: PLC0415

    return memory_command(args, os.environ, sys.stdout, github_client)


def _evaluate(args: argparse.Namespace) -> int:
    if args.eval_command == "replay":  # needs no GitHub fake, so not the eval extra
        from pathlib import Path  # noqa: PLC0415

        from memory_action.evaluation.replay import replay_command  # noqa: PLC0415

        return replay_command(Path(args.events), out=sys.stdout, err=sys.stderr)
    try:
        from memory_action.evaluation.command import evaluate  # noqa: PLC0415
    except ImportError as exc:
        sys.stderr.write(
            f"memory-agent eval needs the eval extra ({exc.name} is missing): "
            "pip install 'memory-agent[eval]'\n"
        )
        return USAGE
    return evaluate(quick=args.quick, out=sys.stdout, err=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
