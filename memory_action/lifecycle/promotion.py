"""Memory a pull request learned becomes committed memory when, and only when, it is merged.

A PR's runs keep what they learned in their own cache scope, which the base branch's runs
cannot read, so it also travels in the PR's sticky comment: a checklist people can veto and a
hidden block (``memory.proposals``). After the merge, the trusted ``push`` run on the base branch
finds the merged PRs of its commits, reads their comments (ignoring any edited by someone
without write access), and merges the ticked items into committed memory, keeping each item's
original provenance.

A block is read only when every run it names (each item's stamp) is a run of this workflow in
this repository (``verified_proposal``): a comment that only looks like ours, carrying a block no
run of this workflow wrote, is ignored with a warning, wherever it is read.
"""

from __future__ import annotations

import dataclasses
import re

from memory_action.errors import GitHubError
from memory_action.lifecycle.layers import Fetched, StartingMemory
from memory_action.memory.markers import comment_marker
from memory_action.memory.merge import merge_text
from memory_action.memory.proposals import (
    InvalidProposalError,
    Proposal,
    apply_items,
    checked_items,
    decode_block,
)
from memory_action.memory.provenance import Provenance, Stamp, carry, stamp_for_run, update
from memory_action.memory.state import EntryState, Layer
from memory_action.memory.trust import Trust
from memory_action.plan import Plan, saves_committed
from memory_action.run.context import READ_ONLY_CACHE_EVENTS
from memory_action.run.settings import ScopeKind
from memory_action.store.base import RestoreResult

_RUN_ID = re.compile(r"[0-9]{1,20}")


def promote(plan: Plan, start: StartingMemory) -> StartingMemory:
    """On a trusted push to the committed branch: apply the merged PRs' ticked proposals."""
    github, context = plan.services.github, plan.context
    if github is None or context.event_name != "push" or not saves_committed(plan):
        return start
    if plan.scope.kind is ScopeKind.PR or context.branch is None:
        return start
    try:
        merged = github.merged_pull_requests(list(context.commits), context.branch)
    except GitHubError as exc:
        plan.log.warning(
            f"Merged pull requests could not be looked up, so none of their memory proposals "
            f"was promoted (re-run this job to retry): {exc}"
        )
        return start
    text, provenance, notes = start.text, start.provenance, list(start.notes)
    stamp = stamp_for_run(context, plan.services.clock())
    marker = comment_marker(plan.settings.agent_name)
    for pull in merged:
        trusted = github.trusted_comment(pull.number, marker)
        comment, reason = trusted.comment, trusted.reason
        if comment is None:
            notes.append(f"nothing promoted from #{pull.number}: {reason}")
            continue
        proposal, why = verified_proposal(plan, comment.body, pull.number)
        if proposal is None:
            notes.append(f"nothing promoted from #{pull.number}: {why}")
            continue
        before = text
        text, stamps, count = _apply(proposal, comment.body, text)
        provenance = carry(update(provenance, before, text, stamp), stamps)
        notes.append(f"promoted {count} ticked memory change(s) of #{pull.number}")
    for note in notes[len(start.notes) :]:
        plan.log.info(f"Memory: {note}")
    return dataclasses.replace(start, text=text, provenance=provenance, notes=tuple(notes))


def _apply(proposal: Proposal, body: str, text: str) -> tuple[str, dict[str, Stamp], int]:
    """Merge the ticked items onto ``text``; the original stamps of the lines they add."""
    items = checked_items(body, proposal)
    try:
        accepted = apply_items(proposal.base, items)
    except InvalidProposalError:
        return text, {}, 0
    stamps: dict[str, Stamp] = {}
    for item in items:
        stamp = _stamp(item.stamp)
        for line in item.added:
            if stamp is not None and line.strip():
                stamps[line.strip()] = stamp
    return merge_text(proposal.base, text, accepted).text, stamps, len(items)


def _stamp(raw: object) -> Stamp | None:
    try:
        return Stamp.from_json(raw)
    except ValueError:
        return None


def verified_proposal(plan: Plan, body: str, pr_number: int) -> tuple[Proposal | None, str]:
    """The proposal for ``pr_number`` in our comment ``body`` when every run it names is a run
    of this workflow in this repository; else None and why (a warning when the block is there
    but fails a check)."""
    proposal = decode_block(body, plan.settings.agent_name)
    if proposal is None or proposal.pr != pr_number:
        return None, "no valid memory proposal"
    why = _foreign_runs(plan, proposal)
    if not why:
        return proposal, ""
    plan.log.warning(f"Memory: ignored the memory proposal in the comment on #{pr_number}: {why}.")
    return None, f"the proposal was ignored: {why}"


def _foreign_runs(plan: Plan, proposal: Proposal) -> str:
    """Why ``proposal`` is not from runs of this workflow in this repository; "" if it is."""
    github, context = plan.services.github, plan.context
    workflow = context.workflow_path
    if github is None or not workflow:
        return "this run does not know its workflow (GITHUB_WORKFLOW_REF is not set)"
    run_ids: set[int] = set()
    for item in proposal.items:
        run_id = (item.stamp or {}).get("run_id")
        if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):
            return f"item {item.id} names no workflow run"
        run_ids.add(int(run_id))
    # This very run (any attempt of it) is one of this workflow in this repository: the runner
    # says so (GITHUB_RUN_ID, GITHUB_WORKFLOW_REF), so GitHub is not asked.
    if _RUN_ID.fullmatch(context.run_id):
        run_ids.discard(int(context.run_id))
    github.look_up_workflow_runs(sorted(run_ids), workflow)
    for run_id in sorted(run_ids):
        try:
            run = github.workflow_run(run_id)
        except GitHubError as exc:
            return f"run {run_id} it names could not be checked (grant `actions: read`): {exc}"
        if run.repository.lower() != context.repository.lower() or run.path != workflow:
            return (
                f"run {run_id} it names is a run of {run.path} in {run.repository}, "
                f"not of {workflow} in {context.repository}"
            )
    return ""


def _comment_proposal(plan: Plan) -> tuple[Proposal, str] | None:
    """This PR's proposal in our sticky comment, with the comment's body (ticks included)."""
    github, pr = plan.services.github, plan.context.pull_request
    if github is None or pr is None or plan.scope.overlay_prefix is None:
        return None
    comment = github.sticky_comment(pr.number, comment_marker(plan.settings.agent_name))
    if comment is None:
        return None
    proposal = verified_proposal(plan, comment.body, pr.number)[0]
    return (proposal, comment.body) if proposal is not None else None


def _ticked_text(proposal: Proposal, body: str) -> str | None:
    try:
        return apply_items(proposal.base, checked_items(body, proposal))
    except InvalidProposalError:
        return None


def overlay_from_comment(plan: Plan) -> Fetched | None:
    """A PR's memory for runs that cannot read its cache scope (``issue_comment``,
    ``pull_request_target`` run on the default branch), or must not: the proposal in its sticky
    comment.

    A trusted run on a fork's pull request (a maintainer's command) must not: the fork's own
    workflow runs can write that cache scope (this action never saves there), and what the run
    republishes as trusted, ticked items would then be the fork's. Trust follows what the run
    reads, so it starts from the comment's ticked items (or from committed memory alone)."""
    vouching_on_fork = _vouches_on_a_fork(plan)
    if plan.context.event_name not in READ_ONLY_CACHE_EVENTS and not vouching_on_fork:
        return None
    if vouching_on_fork:
        plan.log.info(
            "Memory: a trusted run on a fork's pull request does not read the pull request's "
            "cache scope (the fork's workflow can write it); it starts from the comment's items."
        )
    found = _comment_proposal(plan)
    text = _ticked_text(*found) if found is not None else None
    if found is None or text is None:
        return Fetched(result=RestoreResult.miss()) if vouching_on_fork else None
    return Fetched(
        result=RestoreResult(hit=True, matched_key=None),
        text=text,
        state=EntryState(layer=Layer.OVERLAY, base=found[0].base),
        provenance=Provenance(records={}),
    )


def _vouches_on_a_fork(plan: Plan) -> bool:
    pr = plan.context.pull_request
    return pr is not None and pr.is_fork and plan.context.trust is Trust.TRUSTED


def merge_comment_learning(plan: Plan, start: StartingMemory) -> StartingMemory:
    """A PR run also takes what comment runs on the PR proposed (they cannot write the PR's
    cache scope, so their learning lives only in the comment): its ticked items are merged in."""
    if plan.context.event_name != "pull_request" or plan.services.github is None:
        return start
    found = _comment_proposal(plan)
    ticked = _ticked_text(*found) if found is not None else None
    if found is None or ticked is None:
        return start
    proposal, body = found
    text = merge_text(proposal.base, start.text, ticked).text
    if text == start.text:
        return start
    stamps: dict[str, Stamp] = {}
    for item in checked_items(body, proposal):
        stamp = _stamp(item.stamp)
        stamps.update({line.strip(): stamp for line in item.added if stamp and line.strip()})
    own = stamp_for_run(plan.context, plan.services.clock())
    provenance = carry(update(start.provenance, start.text, text, own), stamps)
    note = "merged the ticked memory changes that comment runs proposed on this pull request"
    return dataclasses.replace(start, text=text, provenance=provenance, notes=(*start.notes, note))
