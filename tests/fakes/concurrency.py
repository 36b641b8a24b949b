"""Many trusted runs started together against one fake cache service, each adding a distinct fact
to repository memory; then a run that reads what they left. Used by the concurrency test and by
``bench/concurrency.py``.

Each run is the real pipeline (settings, context, services built as ``main()`` builds them) in its
own thread with its own workspace; a barrier in the scripted model makes every run restore the
same memory before any of them saves, so they truly race.

No answer of the fake races a wall clock: the cache client's timeouts (``RACE_TUNING``) are far
beyond what a local fake takes even on a loaded machine, and its retry clock records waits
instead of sleeping. An answer that is too slow is a fault the test queues (``while_saving``):
the client gets the same ``NetworkError`` from a reset connection as from a timed-out one, at once.
"""

from __future__ import annotations

import dataclasses
import io
import json
import threading
from collections.abc import Callable, Mapping
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

from memory_action import pipeline
from memory_action.gha import Workflow
from memory_action.main import build_services
from memory_action.run.context import load_context, read_event
from memory_action.run.settings import parse_settings
from tests.fakes.cache_harness import fast_tuning
from tests.fakes.cache_service import BLOB_GET, FakeCacheService
from tests.fakes.github_api import FakeGitHub
from tests.fakes.runner import CacheRunner, push_event
from tests.fakes.scripted_model import ScriptedChatModel, tool_call

MEMORY = ".agent-memory/AGENTS.md"
HEADING = "# Facts\n"
MAIN_REF = "refs/heads/main"
PERMISSIONS = ("write", "read", "none")  # of `actions:` in the workflow
# The client's timeouts in a race: never reached by a local fake, loaded or not (a timed-out
# answer is a queued fault instead); the waits between retries are recorded, not slept.
RACE_TIMEOUT_S = 120.0
RACE_TUNING = fast_tuning([], timeout=RACE_TIMEOUT_S)


def fact(number: int) -> str:
    return f"- Fact number {number} learned by run {number}."


@dataclass(frozen=True)
class RaceResult:
    runs: int
    exit_codes: list[int]
    facts_kept: int
    final_prompt: str
    entries_left: int
    reader_log: str = ""  # the log of the run that reads what the racers left
    reader_summary: str = ""  # its job summary
    reader_downloads: int = 0  # blob downloads of that run (entries it read)
    commits: int = 0  # memory commits the racers made (memory_store: git)
    git_calls: int = 0  # their GitHub calls for memory (GraphQL and the git data API)
    faults_left: int = 0  # faults ``while_saving`` queued that no racer's request took


@dataclass(frozen=True)
class _Ran:
    log: str
    summary: str


def run_once(
    root: Path,
    run_id: int,
    service: FakeCacheService,
    model: ScriptedChatModel,
    *,
    lossless: bool,
    store: str = "cache",
    ref: str = MAIN_REF,
    inputs: Mapping[str, str] | None = None,
) -> _Ran:
    """One push run on main (or ``ref``) with ``model``; its log and job summary. ``inputs``:
    more of the action's inputs (``INPUT_...``)."""
    extra = {**service.env(), "INPUT_MEMORY_STORE": store, **(inputs or {})}
    runner = CacheRunner(root / f"run-{run_id}", extra_env=extra, run_id=run_id - 1)
    runner.root.mkdir(parents=True)
    env = runner.env("push", {**push_event(), "ref": ref}, ref)
    out = io.StringIO()
    workflow = Workflow(env, out=out)
    settings = parse_settings(env)
    context = load_context(env, read_event(env["GITHUB_EVENT_PATH"]))
    services = build_services(settings, context, env, workflow, lambda: model)
    services = dataclasses.replace(services, lossless=lossless)
    pipeline.run(settings, context, services)
    return _Ran(out.getvalue(), Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8"))


def race(
    root: Path,
    service: FakeCacheService,
    github: FakeGitHub,
    runs: int = 20,
    *,
    lossless: bool = True,
    one_workflow_run: bool = False,
    actions: str = "write",
    store: str = "cache",
    while_saving: Callable[[FakeCacheService], None] | None = None,
) -> RaceResult:
    """Seed memory, race ``runs`` runs that each add one fact, then read what is left.

    ``one_workflow_run``: the racers are jobs of one workflow run (a matrix): the same run id
    and attempt, and the same job id. ``actions``: the token's permission on the cache REST API,
    ``write`` (list and delete), ``read`` (list only) or ``none``. ``store``: the
    ``memory_store`` input (``git`` keeps committed memory on the fake's memory branch).
    ``while_saving`` runs once every racer has restored, before any saves (to queue faults)."""
    if actions not in PERMISSIONS:
        raise ValueError(f"actions must be one of {', '.join(PERMISSIONS)}, not {actions!r}")
    github.cache = service if actions != "none" else None
    github.cache_read_only = actions == "read"
    seed = ScriptedChatModel.from_script(
        tool_call("write_file", {"file_path": MEMORY, "content": HEADING}), "Seeded."
    )
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        run_once(root, 1, service, seed, lossless=lossless, store=store)
    commits_before, calls_before = github.git.verified_commits, len(_git_calls(github))
    barrier = threading.Barrier(runs, action=lambda: while_saving and while_saving(service))
    codes = [1] * runs

    def one(number: int) -> None:
        model = ScriptedChatModel.from_script(
            tool_call(
                "edit_file",
                {
                    "file_path": MEMORY,
                    "old_string": HEADING,
                    "new_string": f"{HEADING}{fact(number)}\n",
                },
            ),
            "Added.",
        )
        model.before_first_call = lambda: barrier.wait(timeout=60)  # every run has restored
        run_id = 100 if one_workflow_run else 100 + number
        run_once(root / f"job-{number}", run_id, service, model, lossless=lossless, store=store)
        codes[number] = 0

    threads = [threading.Thread(target=one, args=(n,)) for n in range(runs)]
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        faults_left = service.clear_faults()  # the reader gets plain answers
        commits = github.git.verified_commits - commits_before
        git_calls = len(_git_calls(github)) - calls_before
        reader = ScriptedChatModel.from_script("Nothing to add.")
        downloads = len(service.requests_to(BLOB_GET))
        ran = run_once(root, 999, service, reader, lossless=lossless, store=store)
        downloads = len(service.requests_to(BLOB_GET)) - downloads
    prompt = reader.system_prompts[0]
    kept = sum(1 for n in range(runs) if fact(n) in prompt)
    left = len(service.visible())
    return RaceResult(
        runs,
        codes,
        kept,
        prompt,
        left,
        ran.log,
        ran.summary,
        downloads,
        commits,
        git_calls,
        faults_left,
    )


def _git_calls(github: FakeGitHub) -> list[tuple[str, str]]:
    return [(m, url) for m, url in github.calls if "/graphql" in url or "/git/" in url]


def summary_line(result: RaceResult, label: str) -> str:
    return json.dumps(
        {
            "mode": label,
            "facts_kept": result.facts_kept,
            "runs": result.runs,
            "entries_left": result.entries_left,
        }
    )
