"""What a maintenance run checks before the model: citations against the default branch,
near-duplicates, conflict blocks, and whether anything changed since the last maintenance.

When memory, its citations' verdicts and the cited files are what the last maintenance saw
(the digest in the committed entry's state), the model is not called at all.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from memory_action.lifecycle.layers import StartingMemory
from memory_action.maintenance.output import git_store
from memory_action.maintenance.workspace_code import checkout_code
from memory_action.memory import upkeep
from memory_action.memory.citations import CitationChecker, CodeView, Item, StaleItem, parse_items
from memory_action.plan import Plan
from memory_action.run.deadline import Deadline
from memory_action.run.settings import MaintenanceOutput

UNCHANGED = "nothing changed since the last maintenance"
UPKEEP_SHARE = 0.5  # of the time left: the checks stop there, so the model keeps the rest


@dataclass(frozen=True, kw_only=True)
class Upkeep:
    findings: upkeep.Findings
    checker: CitationChecker | None  # None: citations were not checked (see the log)
    unchanged: bool  # the last maintenance saw exactly this: no model call

    @property
    def brief(self) -> str:
        return upkeep.brief(self.findings)

    def digest(self, memory: str) -> str:
        """What the next maintenance compares with: "" when citations were not checked, or
        not all of the checks were made (the next maintenance must not skip what this one
        did not look at)."""
        if self.checker is None or self.findings.unchecked:
            return ""
        return self.checker.digest(memory, parse_items(memory))

    def notes(self) -> tuple[str, ...]:
        """For the job summary (and a maintenance pull request): what was found, and what was
        not checked."""
        found = tuple(f"maintenance found {note}" for note in upkeep.notes(self.findings))
        capped = self.findings.capped
        cap = (f"maintenance capped the near-duplicate search: {upkeep.capped_note(capped)}",)
        return (
            *found,
            *(f"maintenance did not check {n}" for n in self.findings.unchecked),
            *(cap if capped else ()),
        )


def prepare(
    the_plan: Plan, start: StartingMemory, code: Callable[[], CodeView | str] | None = None
) -> Upkeep:
    """Check memory before the model sees it, within ``UPKEEP_SHARE`` of the time left;
    ``code`` gives the default branch's files (the workspace checkout by default)."""
    log, memory = the_plan.log, start.text
    deadline = the_plan.deadline.share(UPKEEP_SHARE)
    _output_note(the_plan)
    items = parse_items(memory)
    checker = _checker(the_plan, code)
    stale, unchecked = _stale(checker, items, deadline)
    duplicates = upkeep.near_duplicates(items, expired=deadline.expired)
    if not duplicates.complete:
        unchecked.append("every pair of items for near-duplicates")
    if duplicates.capped:
        log.info(f"Maintenance: {upkeep.capped_note(duplicates.capped)}.")
    findings = upkeep.Findings(
        stale=stale,
        duplicates=duplicates.pairs,
        conflicts=tuple(upkeep.conflict_blocks(memory)),
        unchecked=tuple(f"{what} ({_out_of_time(the_plan)})" for what in unchecked),
        capped=duplicates.capped,
    )
    log.info(f"Maintenance: {len(items)} memory items; {findings.counts()}.")
    for what in findings.unchecked:
        log.warning(f"Maintenance did not check {what}.")
    digest = checker.digest(memory, items) if checker is not None and not unchecked else ""
    unchanged = bool(digest) and digest == start.last_maintained
    if unchanged:
        log.info(f"Maintenance: {UNCHANGED} (memory, its citations and the cited code).")
    return Upkeep(findings=findings, checker=checker, unchanged=unchanged)


def _stale(
    checker: CitationChecker | None, items: list[Item], deadline: Deadline
) -> tuple[tuple[StaleItem, ...], list[str]]:
    """The stale items, and what was not checked when the deadline came first."""
    if checker is None:
        return (), []
    checker.read_cited(items)  # every cited file in a few batches, not one git call per item
    stale: list[StaleItem] = []
    for number, item in enumerate(items):
        if deadline.expired():
            return tuple(stale), [
                f"the citations of {len(items) - number} item(s) from line {item.line}"
            ]
        stale += checker.stale([item])
    return tuple(stale), []


def _out_of_time(the_plan: Plan) -> str:
    minutes = the_plan.settings.timeout_minutes
    return f"its share of timeout_minutes={minutes} ran out; raise timeout_minutes to check it all"


def _output_note(the_plan: Plan) -> None:
    """``maintenance_output: pull_request`` needs the git store (``maintenance.output``): without
    it the run says how it writes instead."""
    settings = the_plan.settings
    if settings.maintenance_output is not MaintenanceOutput.PULL_REQUEST:
        return
    if git_store(the_plan) is None:
        the_plan.log.notice(
            "maintenance_output: pull_request needs memory_store: git; maintenance writes to "
            "the cache as with maintenance_output: commit."
        )


def _checker(the_plan: Plan, code: Callable[[], CodeView | str] | None) -> CitationChecker | None:
    context = the_plan.context
    if code is None and not context.on_default_branch:
        the_plan.log.info(
            f"Maintenance: citations not checked: this run is on {context.branch or context.ref}, "
            f"not the default branch {context.default_branch}."
        )
        return None
    found = (code or (lambda: checkout_code(context.workspace, os.environ)))()
    if isinstance(found, str):
        the_plan.log.info(f"Maintenance: citations not checked: {found}.")
        return None
    return CitationChecker(found)
