"""One run, top to bottom: scope → restore (layers, merges, promotion) → agent with memory →
save (merged, scrubbed, within budget) → comment and summary.

Every real client arrives in ``Services``; this module only decides. LangChain is imported only
when an agent is actually built (``memory_action.agent.session``), so runs that stop early stay
fast.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from memory_action.context import RunContext
from memory_action.errors import GitHubError, InputError
from memory_action.gha import Workflow
from memory_action.layers import (
    Committed,
    Fetched,
    LayerStore,
    StartingMemory,
    prepare_save,
    restore_layers,
    write_entry,
)
from memory_action.memory.diff import memory_diff
from memory_action.memory.provenance import Provenance, Stamp, stamp_for_run, update
from memory_action.memory.scrub import RefusalLog, describe, redact
from memory_action.memory.sources import MemoryFiles, MemorySource, load_sources
from memory_action.memory.state import MEMORY_FILE, read_memory, write_memory
from memory_action.pull_request import PullRequestCommenter, PullRequestReader
from memory_action.scope import Layer, MemoryScope, compute_scope
from memory_action.settings import Mode, Settings
from memory_action.store.base import LayerAdmin, MemoryStore, RestoreResult, SaveResult

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from memory_action.agent.runner import AgentOutcome
    from memory_action.github_promotion import MergedPullRequest, StickyComment, TrustedComment


class GitHubAccess(PullRequestCommenter, Protocol):
    """What a run needs from GitHub: read a pull request, the sticky comment, promotion."""

    def pull_request(self, number: int) -> PullRequestReader: ...

    def sticky_comment(self, pr_number: int, marker: str) -> StickyComment | None: ...

    def merged_pull_requests(
        self, commit_shas: list[str], base_branch: str
    ) -> list[MergedPullRequest]: ...

    def trusted_comment(self, pr_number: int, marker: str) -> TrustedComment: ...


@dataclass(frozen=True)
class Services:
    workflow: Workflow
    store: MemoryStore | None  # None: no store this run (see store_note)
    store_note: str
    github: GitHubAccess | None  # None: no GitHub access
    model_factory: Callable[[], BaseChatModel]
    store_write_note: str = ""  # why the store will not take saves (e.g. ACTIONS_CACHE_MODE)
    layer_admin: Callable[[str], LayerAdmin] | None = None  # lists and prunes a ref's entries
    clock: Callable[[], float] = time.time
    lossless: bool = True  # False only to measure what newest-entry-wins loses


@dataclass(frozen=True)
class Plan:
    """What this run is: decided before anything is restored."""

    settings: Settings
    context: RunContext
    services: Services
    mode: Mode
    scope: MemoryScope
    files: MemoryFiles
    scratch: Path  # an empty folder for this run's restores that are only read
    refusals: RefusalLog = field(default_factory=RefusalLog)

    @property
    def folder(self) -> Path:
        return self.files.host_path(self.settings.memory_path)

    @property
    def log(self) -> Workflow:
        return self.services.workflow

    @property
    def masked(self) -> frozenset[str]:
        return self.log.masked_values

    def layers(self, store: MemoryStore) -> LayerStore:
        return LayerStore(
            store=store,
            scratch=self.scratch,
            lister=self.services.layer_admin,
            lossless=self.services.lossless,
            masked=self.masked,
        )


@dataclass(frozen=True)
class Outcome:
    """What happened: the inputs of the comment, the summary and the outputs."""

    start: StartingMemory
    sources: list[MemorySource]
    answer: str
    final: str  # AGENTS.md after the run (secrets redacted)
    memory_diff: str
    saved: SaveResult
    stamp: Stamp
    provenance: Provenance
    notes: tuple[str, ...] = ()

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


def run(settings: Settings, context: RunContext, services: Services) -> RunResult:
    with tempfile.TemporaryDirectory(prefix="memory-agent-") as scratch:
        the_plan = Plan(
            settings=settings,
            context=context,
            services=services,
            mode=resolve_mode(settings, context),
            scope=compute_scope(settings, context),
            files=MemoryFiles.from_settings(
                settings, context.workspace, services.workflow.masked_values
            ),
            scratch=Path(scratch),
        )
        return _run(the_plan)


def _run(the_plan: Plan) -> RunResult:
    # publish and promotion need this module's types, so they are imported here.
    from memory_action.promotion import promote  # noqa: PLC0415
    from memory_action.publish import post_comment, write_summary  # noqa: PLC0415

    settings = the_plan.settings
    start = promote(the_plan, restore(the_plan))
    _lay_out(the_plan, start)
    sources = load_sources(the_plan.files) if settings.enable_memory else []
    outcome = run_agent(the_plan)
    final, notes = _final_memory(the_plan)
    stamp = stamp_for_run(the_plan.context, the_plan.services.clock())
    provenance = update(start.provenance, start.text, final, stamp)
    diff = memory_diff(_as_files(start.text), _as_files(final), settings.memory_path.as_posix())
    saved = save(the_plan, start, final, provenance)
    result = Outcome(start, sources, outcome.answer, final, diff, saved, stamp, provenance, notes)
    comment_url = post_comment(the_plan, result)
    write_summary(the_plan, result)
    return RunResult(
        memory_hit=start.restored.hit,
        memory_key=start.restored.matched_key or "",
        saved_key=saved.key if saved.saved else "",
        memory_changed=start.text != final,
        comment_url=comment_url,
        response=redact(outcome.answer, the_plan.masked)[0],  # outputs may be posted anywhere
        memory_diff=redact(diff, the_plan.masked)[0],
    )


def _as_files(text: str) -> dict[str, str]:
    """For the diff: an empty memory is a missing file."""
    return {MEMORY_FILE: text} if text else {}


def clear_folder(folder: Path) -> None:
    """Memory comes only from the store: whatever the checkout has at ``memory_path`` (a pull
    request could plant a file there) is removed before the restore."""
    if folder.is_symlink() or folder.is_file():
        folder.unlink()
    elif folder.is_dir():
        shutil.rmtree(folder)


def _empty_start() -> StartingMemory:
    committed = Committed(Fetched(RestoreResult.miss()), "", frozenset(), Provenance({}))
    return StartingMemory(RestoreResult.miss(), committed, None, "", Provenance({}), ())


def restore(the_plan: Plan) -> StartingMemory:
    scope, store, log = the_plan.scope, the_plan.services.store, the_plan.log
    if not the_plan.settings.enable_memory:
        return _empty_start()
    clear_folder(the_plan.folder)
    if scope.restore is None:
        log.info(f"Memory: nothing to restore ({scope.write_note or scope.description}).")
        return _empty_start()
    if store is None:
        log.notice(f"Memory is off for this run: {the_plan.services.store_note}")
        return _empty_start()
    with log.group(f"Restore {scope.description} from {store.name}"):
        from memory_action.promotion import (  # noqa: PLC0415
            merge_comment_learning,
            overlay_from_comment,
        )

        start = restore_layers(the_plan.layers(store), scope, overlay_from_comment(the_plan))
        start = merge_comment_learning(the_plan, start)
        _log_restore(the_plan, start)
    return start


def _log_restore(the_plan: Plan, start: StartingMemory) -> None:
    log, restored = the_plan.log, start.restored
    warnings = [w for w in (restored.warning, start.committed.newest.result.warning) if w]
    for warning in dict.fromkeys(warnings):
        log.warning(f"Memory was not restored: {warning}")
    if restored.hit:
        log.info(f"Restored memory from key {restored.matched_key}")
    elif not warnings:
        log.info(f"No memory saved yet for {the_plan.scope.description}")
    for note in start.notes:
        log.info(f"Memory: {note}")


def _lay_out(the_plan: Plan, start: StartingMemory) -> None:
    """Put the starting memory (merged, promoted) in the memory folder for the agent."""
    if not the_plan.settings.enable_memory or not start.text:
        return
    write_memory(the_plan.folder, start.text)


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
        settings=settings,
        context=the_plan.context,
        mode=the_plan.mode,
        files=the_plan.files,
        refusals=the_plan.refusals,
    )
    reader = _pull_request_reader(the_plan)
    with the_plan.log.group(f"Run the agent ({the_plan.mode.value}, model {settings.model})"):
        outcome = session.run(the_plan.services.model_factory(), reader)
        the_plan.log.info(
            f"The agent finished after {outcome.model_calls} model calls and "
            f"{outcome.tool_calls} tool calls."
        )
    return outcome


def _final_memory(the_plan: Plan) -> tuple[str, tuple[str, ...]]:
    """AGENTS.md after the run, with any secret redacted (whatever put it there)."""
    if not the_plan.settings.enable_memory:
        return "", ()
    final = read_memory(the_plan.folder, the_plan.settings.memory_file.as_posix())
    redacted, findings = redact(final, the_plan.masked)
    notes = [the_plan.refusals.summary()] if len(the_plan.refusals) else []
    if findings:
        write_memory(the_plan.folder, redacted)
        notes.append(f"redacted {describe(findings)} found in memory")
    return redacted, tuple(notes)


def save(the_plan: Plan, start: StartingMemory, final: str, provenance: Provenance) -> SaveResult:
    """Save a changed, valid memory of a finished run that may write, merged with what was
    committed meanwhile; then delete the entries the new one holds."""
    key = the_plan.scope.save_key or ""
    reason = _why_not_save(the_plan, start, changed=final != start.layer_text)
    store = the_plan.services.store
    if reason is not None or store is None:
        reason = reason or "no store"
        the_plan.log.info(f"Memory not saved: {reason}.")
        return SaveResult(saved=False, key=key, reason=reason)
    layers = the_plan.layers(store)
    text, state, provenance, holds, notes = prepare_save(
        layers, the_plan.scope, start, final, provenance
    )
    for note in notes:
        the_plan.log.info(f"Memory: {note}")
    over = len(text.encode()) - the_plan.settings.max_memory_bytes
    if over > 0:
        reason = (
            f"it is {over} bytes over max_memory_kb={the_plan.settings.max_memory_kb} after "
            "merging; nothing was cut, the next run merges again and consolidates"
        )
        the_plan.log.warning(f"Memory not saved: {reason}.")
        return SaveResult(saved=False, key=key, reason=reason)
    write_entry(the_plan.folder, text, state, provenance)
    result = store.save(key, the_plan.folder)
    _report_save(the_plan, result)
    if result.saved:
        _prune(the_plan, holds, result.key)
    return result


def _report_save(the_plan: Plan, result: SaveResult) -> None:
    if result.saved:
        the_plan.log.info(f"Saved memory as {result.key}")
    elif result.write_denied:
        the_plan.log.notice(
            f"Memory was not saved: {result.reason}. This run's memory changes are shown in the "
            "job summary (and the pull request comment)."
        )
    else:
        the_plan.log.warning(f"Memory was not saved: {result.reason}")


def _prune(the_plan: Plan, holds: frozenset[str], saved_key: str) -> None:
    """Delete the entries the new save holds (cache hygiene); trouble only warns."""
    admin = the_plan.services.layer_admin
    key = the_plan.scope.save_key
    if admin is None or key is None or not holds:
        return
    prefix = key[: key.rindex("/") + 1]
    deleted = admin(the_plan.context.ref).prune(
        prefix=prefix, superseded=holds, saved_key=saved_key
    )
    if deleted:
        the_plan.log.info(f"Deleted {deleted} superseded memory entries under {prefix}")


def _why_not_save(the_plan: Plan, start: StartingMemory, *, changed: bool) -> str | None:
    scope, services = the_plan.scope, the_plan.services
    if not the_plan.settings.enable_memory:
        return "enable_memory is false"
    if not changed:
        return "the agent did not change it"
    if start.restored.warning or start.committed.newest.result.warning:
        return "memory could not be restored, and saving now would hide the memory saved before"
    if not scope.may_write or scope.save_key is None:
        return scope.write_note or "this run may not write memory"
    if services.store is None:
        return services.store_note
    return services.store_write_note or None


def saves_committed(the_plan: Plan) -> bool:
    return the_plan.scope.may_write and the_plan.scope.layer is Layer.COMMITTED
