"""What a maintenance run checks before the model: citations against the default branch,
near-duplicates, conflict blocks, and whether anything changed since the last maintenance.

When memory, its citations' verdicts and the cited files are what the last maintenance saw
(the digest in the committed entry's state), the model is not called at all.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from memory_action.layers import StartingMemory
from memory_action.maintenance_pr import git_store
from memory_action.memory import upkeep
from memory_action.memory.citations import CitationChecker, CodeView, parse_items
from memory_action.plan import Plan
from memory_action.settings import MaintenanceOutput
from memory_action.workspace_code import checkout_code

UNCHANGED = "nothing changed since the last maintenance"


@dataclass(frozen=True)
class Upkeep:
    findings: upkeep.Findings
    checker: CitationChecker | None  # None: citations were not checked (see the log)
    unchanged: bool  # the last maintenance saw exactly this: no model call

    @property
    def brief(self) -> str:
        return upkeep.brief(self.findings)

    def digest(self, memory: str) -> str:
        """What the next maintenance compares with ("" when citations were not checked)."""
        if self.checker is None:
            return ""
        return self.checker.digest(memory, parse_items(memory))


def prepare(
    the_plan: Plan, start: StartingMemory, code: Callable[[], CodeView | str] | None = None
) -> Upkeep:
    """Check memory before the model sees it; ``code`` gives the default branch's files
    (the workspace checkout by default)."""
    log, memory = the_plan.log, start.text
    _output_note(the_plan)
    items = parse_items(memory)
    checker = _checker(the_plan, code)
    stale = tuple(checker.stale(items)) if checker is not None else ()
    findings = upkeep.Findings(
        stale=stale,
        duplicates=upkeep.near_duplicates(items).pairs,
        conflicts=tuple(upkeep.conflict_blocks(memory)),
    )
    log.info(f"Maintenance: {len(items)} memory items; {findings.counts()}.")
    digest = checker.digest(memory, items) if checker is not None else ""
    unchanged = bool(digest) and digest == start.last_maintained
    if unchanged:
        log.info(f"Maintenance: {UNCHANGED} (memory, its citations and the cited code).")
    return Upkeep(findings, checker, unchanged)


def _output_note(the_plan: Plan) -> None:
    """``maintenance_output: pull_request`` needs the git store (``maintenance_pr``): without
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
