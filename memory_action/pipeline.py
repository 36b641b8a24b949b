"""One run, top to bottom: scope → restore (layers, merges, promotion) → agent with memory →
save (merged, scrubbed, within budget) → comment and summary.

Every real client arrives in ``Services``; this module only decides. LangChain is imported only
when an agent is actually built (``memory_action.review.session``), so runs that stop early stay
fast.
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from memory_action.errors import GitHubError, Setting, Words, render
from memory_action.github.base_sources import BaseSources, at_base
from memory_action.github.pull_request import PrefetchingReader, PullRequestReader
from memory_action.lifecycle.layers import StartingMemory
from memory_action.lifecycle.promotion import promote
from memory_action.lifecycle.restore import restore
from memory_action.maintenance import checks
from memory_action.maintenance.checks import UNCHANGED, Upkeep
from memory_action.maintenance.output import save_or_propose
from memory_action.memory.diff import memory_diff
from memory_action.memory.provenance import stamp_for_run, update
from memory_action.memory.sources import MemoryFiles, load_sources
from memory_action.memory.state import MEMORY_FILE, read_memory, write_memory
from memory_action.plan import (  # re-exported: callers build Services from here
    GitHubAccess,
    Plan,
    Services,
    resolve_mode,
    saves_committed,
)
from memory_action.publish.comment import figures_of, post_comment, write_summary
from memory_action.publish.outcome import Outcome, RunResult
from memory_action.review import inline_review
from memory_action.review.gitattributes import GITATTRIBUTES
from memory_action.review.inline_review import CachedReader, Published
from memory_action.run.context import RunContext
from memory_action.run.deadline import Deadline
from memory_action.run.scope import compute_scope
from memory_action.run.settings import Mode, Settings
from memory_action.safety.scrub import describe, redact, scan_once

if TYPE_CHECKING:
    from memory_action.review.engine import ReviewResult

__all__ = [
    "GitHubAccess",
    "Outcome",
    "Plan",
    "RunResult",
    "Services",
    "resolve_mode",
    "run",
    "saves_committed",
]


def run(settings: Settings, context: RunContext, services: Services) -> RunResult:
    """A review or a maintenance run; a comment's commands never come here (``main`` routes
    them to ``commands.route``)."""
    # Memory is read many times a run (restore, prompt, edits, save, publish): scanned once.
    with scan_once():
        return _run_in_scratch(settings, context, services)


def _run_in_scratch(settings: Settings, context: RunContext, services: Services) -> RunResult:
    deadline = Deadline.after(settings.timeout_minutes * 60.0, services.timer)
    with tempfile.TemporaryDirectory(prefix="memory-agent-") as scratch:
        files = MemoryFiles.from_settings(
            settings, context.workspace, services.workflow.masked_values
        )
        sources = _sources_at_base(settings, context, services, files, Path(scratch))
        the_plan = Plan(
            settings=settings,
            context=context,
            services=services,
            mode=resolve_mode(settings, context),
            scope=compute_scope(settings, context),
            files=sources.files,
            scratch=Path(scratch),
            changed_sources=sources.changed,
            deadline=deadline,
        )
        return _run(the_plan)


def _sources_at_base(
    settings: Settings, context: RunContext, services: Services, files: MemoryFiles, scratch: Path
) -> BaseSources:
    """A pull request may not rewrite its own standing instructions: its runs read the
    read-only memory sources at the base commit (``base_sources``)."""
    pr, github = context.pull_request, services.github
    wanted = settings.enable_memory and files.read_only and services.sources_from_base
    if pr is None or github is None or not wanted:
        return BaseSources(files=files, changed=())
    reader = github.pull_request(pr.number)
    if isinstance(reader, PrefetchingReader):  # the sources and .gitattributes in one request
        reader.prefetch_base_files([*(p.as_posix() for p in files.read_only), GITATTRIBUTES])
    return at_base(files, reader, scratch / "base-sources")


def _run(the_plan: Plan) -> RunResult:
    settings = the_plan.settings
    start = _over_budget_note(the_plan, promote(the_plan, restore(the_plan)))
    _lay_out(the_plan, start)
    sources = load_sources(the_plan.files) if settings.enable_memory else []
    checked = _upkeep(the_plan, start)
    outcome, published = run_agent(the_plan, start, checked)
    final, notes = _final_memory(the_plan)
    notes = (*notes, *([outcome.note] if outcome.note else []), *published.notes)
    found = checked.notes() if checked is not None and not checked.unchanged else ()
    notes = (*notes, *found)
    stamp = stamp_for_run(the_plan.context, the_plan.services.clock())
    provenance = update(start.provenance, start.text, final, stamp)
    diff = memory_diff(_as_files(start.text), _as_files(final), settings.memory_path.as_posix())
    # maintenance_output: pull_request turns maintenance's save into a pull request
    saved, proposed = save_or_propose(
        the_plan,
        start,
        final,
        provenance,
        finished=outcome.finished,
        ledger=published.ledger,
        maintained=checked.digest(final) if checked is not None and not checked.unchanged else "",
        proposal=(found, diff),
    )
    notes = (*notes, proposed) if proposed else notes
    if settings.enable_memory:
        # Docker actions run as root: what we wrote must stay usable by the job's later steps.
        from memory_action.store.archive import fix_ownership  # noqa: PLC0415 - zstandard

        fix_ownership(the_plan.folder, the_plan.context.workspace)
    result = Outcome(
        start=start,
        sources=sources,
        answer=published.markdown,
        final=final,
        memory_diff=diff,
        saved=saved,
        stamp=stamp,
        provenance=provenance,
        notes=notes,
        review=outcome,
    )
    comment_url = post_comment(the_plan, result)
    write_summary(the_plan, result)
    return RunResult(
        memory_hit=start.restored.hit,
        memory_key=start.restored.matched_key or "",
        saved_key=saved.key if saved.saved else "",
        memory_changed=start.text != final,
        comment_url=comment_url,
        response=redact(published.markdown, the_plan.masked)[0],  # outputs may be posted anywhere
        memory_diff=redact(diff, the_plan.masked)[0],
        review=outcome,
    )


def _over_budget_note(the_plan: Plan, start: StartingMemory) -> StartingMemory:
    """Merged memory can start over budget: nothing is cut, the agent is asked to consolidate."""
    size, budget = len(start.text.encode()), the_plan.settings.max_memory_bytes
    if size <= budget:
        return start
    note = (
        f"memory starts {size} bytes, over max_memory_kb={the_plan.settings.max_memory_kb}: "
        "the agent is asked to consolidate; it is saved only once it fits"
    )
    the_plan.log.warning(f"Memory: {note}.")
    return dataclasses.replace(start, notes=(*start.notes, note))


def _limits_words(settings: Settings) -> Words:
    """The model's limits and each request's time, naming the settings that set them."""
    minutes = Setting(name="timeout_minutes", value=str(settings.timeout_minutes))
    return (
        "Model limits: ",
        *settings.profile.words(),
        f"; each request may take up to {settings.request_timeout_s:,.0f} s (",
        minutes,
        ").",
    )


def _as_files(text: str) -> dict[str, str]:
    """For the diff: an empty memory is a missing file."""
    return {MEMORY_FILE: text} if text else {}


def _lay_out(the_plan: Plan, start: StartingMemory) -> None:
    """Put the starting memory (merged, promoted) in the memory folder for the agent."""
    if not the_plan.settings.enable_memory or not start.text:
        return
    write_memory(the_plan.folder, start.text)


def _pull_request_reader(the_plan: Plan) -> PullRequestReader | None:
    pr, github = the_plan.context.pull_request, the_plan.services.github
    if pr is None:
        return None
    if the_plan.services.pull_request_reader is not None:
        return the_plan.services.pull_request_reader
    if github is None:
        raise GitHubError("This run reviews a pull request but has no GitHub access.")
    return github.pull_request(pr.number)


def _upkeep(the_plan: Plan, start: StartingMemory) -> Upkeep | None:
    """Maintenance's checks before the model (``maintenance``); None on other runs."""
    if the_plan.mode is not Mode.MAINTENANCE or not the_plan.settings.enable_memory:
        return None
    return checks.prepare(the_plan, start)


def run_agent(
    the_plan: Plan, start: StartingMemory, checked: Upkeep | None = None
) -> tuple[ReviewResult, Published]:
    """The agent's run and, for a pull request's review, its inline review (``inline_review``:
    the ledger and feedback before, one review with the new findings after). A maintenance
    run that ``checked`` found nothing changed in makes no model call."""
    from memory_action.agent.skills import skills_for  # noqa: PLC0415 - LangChain costs ~1 s
    from memory_action.review.engine import skipped  # noqa: PLC0415 - LangChain costs ~1 s
    from memory_action.review.session import AgentSession  # noqa: PLC0415 - LangChain costs ~1 s

    if checked is not None and checked.unchanged:
        return (answer := skipped(f"Memory was not maintained: {UNCHANGED}.")), Published(
            markdown=answer.answer, ledger=None
        )
    if the_plan.deadline.expired():
        minutes = Setting(name="timeout_minutes", value=str(the_plan.settings.timeout_minutes))
        late = render(
            ("The agent did not run: its time (", minutes, ") ran out before the model call."),
            the_plan.services.naming,
        )
        answer = dataclasses.replace(skipped(late), finished=False, note=late)
        return answer, Published(markdown=answer.answer, ledger=None)
    settings = the_plan.settings
    session = AgentSession(
        settings=settings,
        context=the_plan.context,
        mode=the_plan.mode,
        files=the_plan.files,
        refusals=the_plan.refusals,
    )
    found = _pull_request_reader(the_plan)
    reader = CachedReader(reader=found) if found is not None else None
    prepared = (
        inline_review.prepare(the_plan, start, reader)
        if reader is not None and the_plan.mode is Mode.REVIEW
        else None
    )
    with the_plan.log.group(f"Run the agent ({the_plan.mode.value}, model {settings.model})"):
        the_plan.log.info(render(_limits_words(settings), the_plan.services.naming))
        skills = skills_for(
            the_plan.context.workspace, settings.skills_path, found, the_plan.log.warning
        )
        outcome = session.run(
            the_plan.services.model_factory(),
            reader,
            the_plan.services.sleep,
            earlier=prepared.earlier if prepared is not None else "",
            unchanged=prepared.unchanged if prepared is not None else frozenset(),
            brief=checked.brief if checked is not None else "",
            skills=skills,
            progress=the_plan.services.progress,
            timeout_s=the_plan.deadline.remaining(),
        )
        # The one summary line of a review, in the action's log and at the terminal alike.
        the_plan.log.info(f"Review {outcome.outcome}: {figures_of(outcome).cost_line()}")
    if outcome.note:
        the_plan.log.warning(outcome.note)
    used = (skills.note(),) if skills.used else ()
    if prepared is None or reader is None:
        return outcome, Published(markdown=outcome.answer, ledger=None, notes=used)
    inline_review.add_lessons(the_plan, prepared.lessons)
    published = inline_review.publish(the_plan, prepared, outcome, reader)
    outcome = dataclasses.replace(outcome, held_back=published.held_back)
    return outcome, dataclasses.replace(published, notes=(*published.notes, *used))


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
