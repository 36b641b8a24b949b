"""One run, top to bottom: scope → restore → agent with memory → save → comment and summary.

Every real client arrives in ``Services``; this module only decides. LangChain is imported only
when an agent is actually built (``memory_action.agent.session``), so runs that stop early stay
fast.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from memory_action.context import RunContext
from memory_action.errors import GitHubError, InputError, MemoryFileError
from memory_action.gha import Workflow
from memory_action.memory.diff import memory_diff, snapshot
from memory_action.memory.sources import MemoryFiles, MemorySource, load_sources
from memory_action.pull_request import PullRequestCommenter, PullRequestReader
from memory_action.scope import MemoryScope, compute_scope
from memory_action.settings import Mode, Settings
from memory_action.store.base import MemoryStore, RestoreResult, SaveResult, SupersededPruner

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from memory_action.agent.runner import AgentOutcome


class GitHubAccess(PullRequestCommenter, Protocol):
    """What a run needs from GitHub: read a pull request, post the sticky comment."""

    def pull_request(self, number: int) -> PullRequestReader: ...


@dataclass(frozen=True)
class Services:
    workflow: Workflow
    store: MemoryStore | None  # None: no store this run (see store_note)
    store_note: str
    github: GitHubAccess | None  # None: no GitHub access
    model_factory: Callable[[], BaseChatModel]
    store_write_note: str = ""  # why the store will not take saves (e.g. ACTIONS_CACHE_MODE)
    pruner: SupersededPruner | None = None  # cache hygiene after a save


@dataclass(frozen=True)
class Plan:
    """What this run is: decided before anything is restored."""

    settings: Settings
    context: RunContext
    services: Services
    mode: Mode
    scope: MemoryScope
    files: MemoryFiles

    @property
    def folder(self) -> Path:
        return self.files.host_path(self.settings.memory_path)

    @property
    def log(self) -> Workflow:
        return self.services.workflow


@dataclass(frozen=True)
class Outcome:
    """What happened: the inputs of the comment, the summary and the outputs."""

    restored: RestoreResult
    sources: list[MemorySource]
    answer: str
    memory_diff: str
    saved: SaveResult

    @property
    def save_note(self) -> str:
        if self.saved.saved:
            return f"Saved as `{self.saved.key}`."
        return f"Not saved: {self.saved.reason}."


@dataclass(frozen=True)
class RunResult:
    memory_hit: bool
    memory_key: str
    saved_key: str
    memory_changed: bool
    comment_url: str
    response: str
    memory_diff: str = ""  # for people (the CLI prints it); not an output

    def outputs(self) -> dict[str, str]:
        return {
            "memory_hit": str(self.memory_hit).lower(),
            "memory_key": self.memory_key,
            "saved_key": self.saved_key,
            "memory_changed": str(self.memory_changed).lower(),
            "comment_url": self.comment_url,
            "response": self.response,
        }


def resolve_mode(settings: Settings, context: RunContext) -> Mode:
    """``auto`` reviews pull requests and maintains memory on branch events."""
    if settings.mode is Mode.AUTO:
        return Mode.REVIEW if context.pull_request is not None else Mode.MAINTENANCE
    if settings.mode is Mode.REVIEW and context.pull_request is None:
        raise InputError(
            f"Input 'mode' is review, but the event {context.event_name} has no pull request; "
            "use mode auto or maintenance."
        )
    return settings.mode


def plan(settings: Settings, context: RunContext, services: Services) -> Plan:
    return Plan(
        settings=settings,
        context=context,
        services=services,
        mode=resolve_mode(settings, context),
        scope=compute_scope(settings, context),
        files=MemoryFiles.from_settings(settings, context.workspace),
    )


def run(settings: Settings, context: RunContext, services: Services) -> RunResult:
    # publish needs Plan and Outcome from this module, so it is imported here, not at the top.
    from memory_action.publish import post_comment, write_summary  # noqa: PLC0415

    the_plan = plan(settings, context, services)
    restored = restore(the_plan)
    sources = load_sources(the_plan.files) if settings.enable_memory else []
    before = snapshot(the_plan.folder)
    outcome = run_agent(the_plan)
    after = snapshot(the_plan.folder)
    diff = memory_diff(before, after, settings.memory_path.as_posix())
    saved = save(the_plan, changed=before != after)
    prune(the_plan, restored, saved)
    result = Outcome(restored, sources, outcome.answer, diff, saved)
    comment_url = post_comment(the_plan, result)
    write_summary(the_plan, result)
    return RunResult(
        memory_hit=restored.hit,
        memory_key=restored.matched_key or "",
        saved_key=saved.key if saved.saved else "",
        memory_changed=before != after,
        comment_url=comment_url,
        response=outcome.answer,
        memory_diff=diff,
    )


def clear_folder(folder: Path) -> None:
    """Memory comes only from the store: whatever the checkout has at ``memory_path`` (a pull
    request could plant a file there) is removed before the restore."""
    if folder.is_symlink() or folder.is_file():
        folder.unlink()
    elif folder.is_dir():
        shutil.rmtree(folder)


def restore(the_plan: Plan) -> RestoreResult:
    scope, store, log = the_plan.scope, the_plan.services.store, the_plan.log
    if not the_plan.settings.enable_memory:
        return RestoreResult.miss()
    clear_folder(the_plan.folder)
    if scope.restore is None:
        log.info(f"Memory: nothing to restore ({scope.write_note or scope.description}).")
        return RestoreResult.miss()
    if store is None:
        log.notice(f"Memory is off for this run: {the_plan.services.store_note}")
        return RestoreResult.miss()
    with log.group(f"Restore {scope.description} from {store.name}"):
        result = store.restore(scope.restore, the_plan.folder)
        if result.warning:
            log.warning(f"Memory was not restored: {result.warning}")
        elif result.hit:
            log.info(f"Restored memory from key {result.matched_key}")
        else:
            log.info(f"No memory saved yet under {scope.restore.primary}")
    return result


def _pull_request_reader(the_plan: Plan) -> PullRequestReader | None:
    pr, github = the_plan.context.pull_request, the_plan.services.github
    if pr is None:
        return None
    if github is None:
        raise GitHubError("This run reviews a pull request but has no GitHub access.")
    return github.pull_request(pr.number)


def run_agent(the_plan: Plan) -> AgentOutcome:
    from memory_action.agent.session import AgentSession  # noqa: PLC0415 - LangChain costs ~1 s

    settings = the_plan.settings
    session = AgentSession(
        settings=settings, context=the_plan.context, mode=the_plan.mode, files=the_plan.files
    )
    reader = _pull_request_reader(the_plan)
    with the_plan.log.group(f"Run the agent ({the_plan.mode.value}, model {settings.model})"):
        outcome = session.run(the_plan.services.model_factory(), reader)
        the_plan.log.info(
            f"The agent finished after {outcome.model_calls} model calls and "
            f"{outcome.tool_calls} tool calls."
        )
    return outcome


def save(the_plan: Plan, *, changed: bool) -> SaveResult:
    """Save only a changed, valid memory of a finished run that may write."""
    key = the_plan.scope.save_key or ""
    reason = _why_not_save(the_plan, changed=changed) or _invalid_memory(the_plan.files)
    store = the_plan.services.store
    if reason is not None or store is None:
        reason = reason or "no store"
        the_plan.log.info(f"Memory not saved: {reason}.")
        return SaveResult(saved=False, key=key, reason=reason)
    result = store.save(key, the_plan.folder)
    if result.saved:
        the_plan.log.info(f"Saved memory as {result.key}")
    elif result.write_denied:
        the_plan.log.notice(
            f"Memory was not saved: {result.reason}. This run's memory changes are shown in the "
            "job summary (and the pull request comment)."
        )
    else:
        the_plan.log.warning(f"Memory was not saved: {result.reason}")
    return result


def prune(the_plan: Plan, restored: RestoreResult, saved: SaveResult) -> None:
    """Delete the cache entries this save supersedes; cache trouble only warns."""
    pruner, key = the_plan.services.pruner, the_plan.scope.save_key
    if pruner is None or not saved.saved or key is None:
        return
    prefix = key[: key.rindex("/") + 1]
    deleted = pruner.prune(prefix=prefix, restored_key=restored.matched_key, saved_key=saved.key)
    if deleted:
        the_plan.log.info(f"Deleted {deleted} superseded memory cache entries under {prefix}")


def _why_not_save(the_plan: Plan, *, changed: bool) -> str | None:
    scope, services = the_plan.scope, the_plan.services
    if not the_plan.settings.enable_memory:
        return "enable_memory is false"
    if not changed:
        return "the agent did not change it"
    if not scope.may_write or scope.save_key is None:
        return scope.write_note or "this run may not write memory"
    if services.store is None:
        return services.store_note
    return services.store_write_note or None


def _invalid_memory(files: MemoryFiles) -> str | None:
    """Nothing half-written or over budget reaches the store."""
    try:
        load_sources(files)
    except MemoryFileError as exc:
        return str(exc)
    return None
