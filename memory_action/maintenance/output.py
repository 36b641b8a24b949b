"""``maintenance_output: pull_request``: a maintenance run that changed memory proposes it.

With the git store, the save is the commit a direct save would make (same files, same message),
on a new branch ``memory-agent-maintenance/<run id>-<attempt>`` made at the memory branch's head;
then a pull request into the memory branch carries the diff and the reasons maintenance found. The
memory branch does not move until a maintainer merges it, and the next runs read memory as it
was. The cache gets no copy (its copy of committed memory stands for the memory branch).

A refusal (no ``contents: write`` or ``pull-requests: write``, GitHub Actions not allowed to
open pull requests, a branch or pull request that exists already) is reported once and writes
nothing else: memory stays as it was, and the job summary keeps the changes.

A run that leaves memory's text as it was opens no pull request: it records only what it checked
(the digest that lets the next maintenance skip the model), as ``commit`` does.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from memory_action.lifecycle.layers import StartingMemory
from memory_action.lifecycle.saving import save
from memory_action.memory.provenance import Provenance
from memory_action.memory.review_ledger import ReviewLedger
from memory_action.plan import Plan
from memory_action.run.settings import MaintenanceOutput, Mode
from memory_action.safety.outgoing import Form, SafeText, gate
from memory_action.safety.untrusted_markdown import break_markers, fence, safe_prose
from memory_action.store.base import MemoryStore, RestoreKeys, RestoreResult, SaveResult
from memory_action.store.git import GitMemoryStore
from memory_action.store.git_remote import GitRemoteError
from memory_action.store.tiered import TieredStore

BRANCH_PREFIX = "memory-agent-maintenance/"
BODY_LIMIT = 60_000  # GitHub refuses a pull request body over 65,536 characters
TRUNCATED = "… truncated (see the job summary)"
WRITE_HINT = (
    "grant the workflow `permissions: contents: write` and `pull-requests: write`, or set "
    "maintenance_output: commit"
)
PULL_HINT = (
    "grant the workflow `permissions: pull-requests: write` and allow GitHub Actions to create "
    "pull requests (repository settings, Actions, General)"
)


def git_store(the_plan: Plan) -> GitMemoryStore | None:
    """The run's git store, when committed memory lives on the memory branch."""
    store = the_plan.services.store
    return store.git if isinstance(store, TieredStore) else None


def branch_for(run_id: str, attempt: str) -> str:
    """One branch per attempt: a re-run proposes anew rather than meeting its own branch."""
    return f"{BRANCH_PREFIX}{run_id}-{attempt}"


class ProposingStore:
    """``MemoryStore`` that reads as the run's store does and saves onto a new branch only."""

    def __init__(self, reads: MemoryStore, git: GitMemoryStore, branch: str) -> None:
        self._reads = reads
        self.git = git
        self.branch = branch

    @property
    def name(self) -> str:
        return f"{self.git.name} (changes proposed on {self.branch})"

    def restore(self, keys: RestoreKeys, folder: Path) -> RestoreResult:
        return self._reads.restore(keys, folder)

    def save(self, key: str, folder: Path) -> SaveResult:
        saved = self.git.save(key, folder, onto=self.branch)
        if saved.saved or not saved.write_denied:
            return saved
        reason = (
            f"maintenance could not commit its changes to a new branch {self.branch} "
            f"({saved.reason}); memory stays as it was: {WRITE_HINT}"
        )
        return dataclasses.replace(saved, reason=reason)


def save_or_propose(
    the_plan: Plan,
    start: StartingMemory,
    final: str,
    provenance: Provenance,
    *,
    finished: bool,
    ledger: ReviewLedger | None,
    maintained: str,
    proposal: tuple[tuple[str, ...], str],
) -> tuple[SaveResult, str]:
    """``saving.save``, or, for a maintenance run asked to open a pull request that changed
    memory, the proposal (``proposal``: the reasons maintenance found, and the diff); and a
    note for the job summary."""
    proposing = _proposing_store(the_plan, start, final)
    plan = the_plan
    if proposing is not None:
        plan = dataclasses.replace(
            the_plan, services=dataclasses.replace(the_plan.services, store=proposing)
        )
    saved = save(
        plan, start, final, provenance, finished=finished, ledger=ledger, maintained=maintained
    )
    if proposing is None or not saved.saved:
        return saved, ""
    return _open(the_plan, proposing, saved, _body(the_plan, *proposal))


def _proposing_store(the_plan: Plan, start: StartingMemory, final: str) -> ProposingStore | None:
    settings, store, git = the_plan.settings, the_plan.services.store, git_store(the_plan)
    wanted = (
        the_plan.mode is Mode.MAINTENANCE
        and settings.maintenance_output is MaintenanceOutput.PULL_REQUEST
        and final != start.layer_text
    )
    if not wanted or store is None or git is None:
        return None
    context = the_plan.context
    return ProposingStore(store, git, branch_for(context.run_id, context.run_attempt))


def _open(
    the_plan: Plan, proposing: ProposingStore, saved: SaveResult, body: SafeText
) -> tuple[SaveResult, str]:
    title = gate(
        f"memory-agent: maintenance of {the_plan.scope.description}",
        the_plan.masked,
        form=Form.LINE,
    )
    base = proposing.git.branch
    try:
        pull = proposing.git.open_pull_request(proposing.branch, title, body)
    except GitRemoteError as exc:
        reason = (
            f"maintenance could not open its pull request ({exc}); its changes are on the branch "
            f"{proposing.branch}: open a pull request from it into {base}, or {PULL_HINT}"
        )
        the_plan.log.warning(f"Memory was not changed: {reason}.")
        return dataclasses.replace(saved, saved=False, reason=reason), ""
    the_plan.log.notice(
        f"Maintenance opened pull request #{pull.number} into {base}: {pull.url} "
        "(memory changes when it is merged)."
    )
    note = f"maintenance proposed its changes in pull request #{pull.number}: {pull.url}"
    reason = (
        f"proposed in pull request #{pull.number} ({pull.url}); memory changes when it is merged"
    )
    return dataclasses.replace(saved, saved=False, reason=reason), note


def _body(the_plan: Plan, reasons: tuple[str, ...], diff: str) -> SafeText:
    """The diff with the reasons maintenance found, as the job summary shows them."""
    found = "".join(f"- {safe_prose(' '.join(r.split()))}\n" for r in reasons)
    intro = (
        f"Maintenance of {the_plan.scope.description} by run {the_plan.context.run_url}.\n\n"
        "Merging this pull request changes memory; closing it leaves memory as it was.\n\n"
    )
    head = intro + (f"### Reasons\n\n{found}\n" if found else "")
    room = BODY_LIMIT - len(head) - 100
    text = diff.strip("\n")
    if len(text) > room:
        text = text[: room - len(TRUNCATED) - 1].rsplit("\n", 1)[0] + "\n" + TRUNCATED
    body = f"{head}### Memory changes\n\n{fence(break_markers(text), 'diff')}\n"
    return gate(body, the_plan.masked)
