"""What a run shows people: the sticky pull request comment and the job summary.

Both carry this run's memory changes; a pull request's comment also carries its proposed
memory changes (a checklist to veto, and the block promotion reads after the merge). Both leave
only through the outgoing gate (``report.safe_comment``, ``report.safe_summary``): secrets are
redacted from everything shown, whatever the model wrote.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from memory_action.github.base_sources import changed_note
from memory_action.github.pull_request import CommentPermissionError
from memory_action.lifecycle.promotion import verified_proposal
from memory_action.memory.markers import comment_marker
from memory_action.memory.merge import merge_text
from memory_action.memory.proposals import (
    InvalidProposalError,
    Proposal,
    apply_items,
    build_proposal,
    checked_items,
    decode_block,
    render_proposal,
    task_states,
)
from memory_action.memory.provenance import Stamp, changed_entries, render_changes_markdown
from memory_action.memory.render import render_memory_block
from memory_action.memory.trust import Trust
from memory_action.model.tokens import text_tokens
from memory_action.plan import Plan
from memory_action.publish import report
from memory_action.publish.outcome import Outcome
from memory_action.run.settings import ScopeKind
from memory_action.safety.outgoing import Form, gate

if TYPE_CHECKING:  # LangChain loads only when an agent runs
    from memory_action.review.engine import ReviewResult


def proposal_for(plan: Plan, outcome: Outcome, previous: str = "") -> Proposal | None:
    """A PR's memory changes against committed memory, for people to veto and promotion to
    apply; None when there is nothing to propose (or nothing would ever promote it).

    ``previous`` is the body of the comment the proposal replaces (see ``_with_unticked``).
    """
    pr = plan.context.pull_request
    if pr is None or not plan.settings.enable_memory or plan.scope.kind is ScopeKind.PR:
        return None
    if plan.services.github is None:  # a local change: no comment to hold it, no merge to apply it
        return None
    base = outcome.start.committed.text
    new = _with_unticked(plan, outcome, previous)
    if new == base:
        return None
    return build_proposal(
        plan.settings.agent_name,
        pr.number,
        base,
        new,
        trusted=plan.context.trust is Trust.TRUSTED,
        stamp=_stamp_json(outcome.stamp),
        origins=_origins(plan, outcome, previous),
    )


def _origins(plan: Plan, outcome: Outcome, previous: str) -> dict[str, StampJson]:
    """Entry → the stamp of the run that wrote it: the memory's provenance, else the stamp the
    previous proposal's item carried (a run that started from the comment has no provenance
    for the lines it carries over)."""
    found: dict[str, StampJson] = {}
    earlier = decode_block(previous, plan.settings.agent_name) if previous else None
    for item in earlier.items if earlier is not None else ():
        for line in item.added:
            if line.strip() and item.stamp is not None:
                found[line.strip()] = dict(item.stamp)
    for entry, stamp in outcome.provenance.records.items():
        found[entry] = _stamp_json(stamp)
    return found


def _started_from_comment(outcome: Outcome) -> bool:
    """The run could not read the PR's cache scope and started from the ticked items of its
    comment (``promotion.overlay_from_comment``: a hit without a key)."""
    overlay = outcome.start.overlay
    return overlay is not None and overlay.result.hit and overlay.key is None


def _with_unticked(plan: Plan, outcome: Outcome, previous: str) -> str:
    """The run's memory, plus the items of the previous proposal that were left unticked, for a
    run that started from the ticked ones only.

    Without them, rewriting the comment would drop those items (a veto, or an item waiting for
    a maintainer's tick), and the PR's next run, which restores its cached overlay with every
    item, would propose them again as if new.
    """
    pr = plan.context.pull_request
    if not previous or pr is None or not _started_from_comment(outcome):
        return outcome.final
    old = decode_block(previous, plan.settings.agent_name)
    if old is None or old.pr != pr.number:
        return outcome.final
    try:
        started = apply_items(old.base, checked_items(previous, old))
        everything = apply_items(old.base, old.items)
    except InvalidProposalError:
        return outcome.final
    merged = merge_text(started, outcome.final, everything)
    return outcome.final if merged.conflicts else merged.text


def _verified(plan: Plan, previous: str) -> str:
    """The previous comment, or "" when it carries a block for this pull request that runs of
    this workflow did not write (``promotion.verified_proposal``): its items and ticks are
    not carried over."""
    pr = plan.context.pull_request
    old = decode_block(previous, plan.settings.agent_name)
    if pr is None or old is None or old.pr != pr.number:
        return previous
    return previous if verified_proposal(plan, previous, pr.number)[0] is not None else ""


def _keeping_trusted_items(plan: Plan, previous: str, proposal: Proposal | None) -> Proposal | None:
    """An untrusted run may add unticked items; it may never drop, change or untick an item a
    trusted run proposed and people left ticked. When its proposal keeps every such item, they
    keep their trusted run's flag and stamp (so the next untrusted run must keep them too);
    when it does not, the comment keeps the proposal it had."""
    pr = plan.context.pull_request
    old = decode_block(previous, plan.settings.agent_name)
    if plan.context.trust is Trust.TRUSTED or pr is None or old is None or old.pr != pr.number:
        return proposal
    states = task_states(previous)
    kept = {item.id: item for item in old.items if item.trusted and states.get(item.id, False)}
    ids = {item.id for item in proposal.items} if proposal is not None else set()
    if proposal is not None and kept.keys() <= ids:
        items = tuple(
            replace(item, trusted=True, stamp=kept[item.id].stamp) if item.id in kept else item
            for item in proposal.items
        )
        return replace(proposal, items=items)
    if not kept:
        return proposal
    plan.log.warning(
        "Memory: this untrusted run would drop or change items a trusted run proposed and people "
        "left ticked; the comment keeps the memory proposal it had."
    )
    return old


def _carried_states(previous: str, agent: str, proposal: Proposal) -> dict[str, bool]:
    """The ticks of the comment this one replaces (``task_states``), for the items it listed.

    A new item that adds a line of an item left unticked there starts unticked too: a change
    made right next to a vetoed one joins it in one item (one hunk) with a new id, and the veto
    must hold.
    """
    states = task_states(previous)
    old = decode_block(previous, agent)
    if old is None:
        return states
    unticked = {
        line.strip()
        for item in old.items
        if not states.get(item.id, False)
        for line in item.added
        if line.strip()
    }
    for item in proposal.items:
        if item.id not in states and any(line.strip() in unticked for line in item.added):
            states[item.id] = False
    return states


StampJson = dict[str, str | int | None]


def _stamp_json(stamp: Stamp) -> StampJson:
    raw = stamp.to_json()
    return {k: v for k, v in raw.items() if v is None or isinstance(v, str | int)}


def _pending_note(plan: Plan, outcome: Outcome) -> str | None:
    """Why nothing was saved, and what happens to this run's items: ticked when the run is
    trusted (a maintainer's comment on a same-repository pull request), unticked otherwise."""
    if outcome.saved.saved or plan.scope.may_write:
        return None
    if plan.context.trust is Trust.TRUSTED:
        return (
            f"Not saved: {outcome.saved.reason}. Ticked items become committed memory when this "
            "pull request is merged; untick an item to veto it."
        )
    return (
        f"Not saved: {outcome.saved.reason}. Items from an untrusted run (input from someone "
        "without write access, or a fork's content) start unticked: a maintainer ticks the ones "
        "to accept, and ticked items become committed memory when this pull request is merged."
    )


def figures(outcome: Outcome) -> report.ReviewFigures | None:
    """What the review covered and cost, when the run reviewed (or tried to)."""
    return figures_of(outcome.review) if outcome.review is not None else None


def figures_of(review: ReviewResult) -> report.ReviewFigures:
    cost = review.cost
    return report.ReviewFigures(
        outcome=review.outcome,
        model_calls=cost.model_calls,
        tokens_in=cost.tokens_in,
        tokens_out=cost.tokens_out,
        files_reviewed=review.files_reviewed,
        files_skipped=review.files_skipped,
        not_reviewed=tuple(
            (s.path, f"reviewed in part: {s.reason}" if s.path in review.reviewed else s.reason)
            for s in review.not_reviewed
        ),
        held_back=tuple(
            (held.finding.title, f"{held.finding.path}:{held.finding.line}", held.line)
            for held in review.held_back
        ),
    )


def _sources_note(plan: Plan) -> str:
    pr = plan.context.pull_request
    return changed_note(plan.changed_sources, pr.base_ref if pr is not None else "")


def _with_sources_note(plan: Plan, review: str) -> str:
    """The review, after a note when the pull request changes a read-only memory source."""
    note = _sources_note(plan)
    return f"> {note}\n\n{review}" if note else review


def _review_text(plan: Plan, outcome: Outcome) -> str:
    """The review, after a note when the engine stopped short (the day's quota, a failure)."""
    review = _redacted(plan, outcome.answer)
    note = outcome.review.note if outcome.review is not None else ""
    if not note:
        return review
    return f"> **Note:** {note}\n\n{review}" if review else f"> **Note:** {note}"


def _redacted(plan: Plan, text: str) -> str:
    """``text`` redacted by the outgoing gate before it is fitted into a document: a mark can
    be longer than what it replaces, and the comment must stay within GitHub's limit."""
    return gate(text, plan.masked, form=Form.TEXT).text


def comment_proposal(plan: Plan, outcome: Outcome, current: str | None = None) -> str:
    """The proposal section of the pull request's sticky comment (checklist and block; ""
    when there is nothing to propose), the ticks of the comment it replaces carried over.
    ``current``: that comment's body ("" for none) when the caller has read it already."""
    pr, github, agent = plan.context.pull_request, plan.services.github, plan.settings.agent_name
    proposal = proposal_for(plan, outcome)
    previous = ""
    untrusted = plan.context.trust is not Trust.TRUSTED
    if pr is None or github is None:
        return ""
    if proposal is not None or _started_from_comment(outcome) or untrusted:
        if current is None:
            current = github.find_sticky_comment(pr.number, comment_marker(agent)) or ""
        previous = _verified(plan, current)
        proposal = _keeping_trusted_items(plan, previous, proposal_for(plan, outcome, previous))
    if proposal is None:
        return ""
    return render_proposal(
        proposal,
        pending_note=_pending_note(plan, outcome),
        states=_carried_states(previous, agent, proposal),
    )


def post_comment(plan: Plan, outcome: Outcome) -> str:
    """Update (or create) the agent's sticky comment; its URL, or "" when none was posted."""
    pr, github, settings = plan.context.pull_request, plan.services.github, plan.settings
    if pr is None or not settings.post_comment or github is None:
        return ""
    marker = comment_marker(settings.agent_name)
    body = report.safe_comment(
        plan.masked,
        agent_name=settings.agent_name,
        review_markdown=_with_sources_note(plan, _review_text(plan, outcome)),
        memory_diff=_redacted(plan, outcome.memory_diff),
        memory_note=outcome.save_note,
        run_url=plan.context.run_url,
        proposal_markdown=comment_proposal(plan, outcome),
        figures=figures(outcome),
    )
    try:
        posted = github.upsert_sticky_comment(pr.number, marker, body)
    except CommentPermissionError:
        plan.log.notice(
            "This run's token may not comment on the pull request (fork pull requests get a "
            "read-only token); the review is in the job summary."
        )
        return ""
    plan.log.info(f"{'Posted' if posted.created else 'Updated'} the review: {posted.url}")
    return posted.url


def _summary_save_note(plan: Plan, outcome: Outcome) -> str:
    """A run without a pull request that may not write: its changes are a pending proposal."""
    pending = (
        plan.context.pull_request is None
        and not outcome.saved.saved
        and outcome.final != outcome.start.text
        and not (plan.scope.may_write and not plan.services.store_write_note)
    )
    if not pending:
        return outcome.save_note
    return (
        f"{outcome.save_note} The memory changes above are a pending proposal: re-run this job "
        "where memory may be written, or apply them with workflow_dispatch and a prompt."
    )


def write_summary(plan: Plan, outcome: Outcome) -> None:
    settings = plan.settings
    block = render_memory_block(outcome.sources, settings.memory_file.as_posix())
    proposal = proposal_for(plan, outcome)
    changes = changed_entries(outcome.start.text, outcome.final, outcome.provenance)
    summary = report.safe_summary(
        report.SummaryInput(
            agent_name=settings.agent_name,
            event=plan.context.event_name,
            scope_description=plan.scope.description,
            loaded=tuple(
                report.LoadedSource(
                    path=s.path, size_bytes=len(s.content.encode()), writable=s.writable
                )
                for s in outcome.sources
            ),
            restore_hit=outcome.start.restored.hit,
            matched_key=outcome.start.restored.matched_key,
            restore_warning="; ".join(outcome.start.unread) or None,
            memory_diff=_redacted(plan, outcome.memory_diff),
            save_note=_summary_save_note(plan, outcome),
            review_markdown=_review_text(plan, outcome),
            approx_tokens=text_tokens(block) if settings.enable_memory else 0,
            figures=figures(outcome),
            proposal_markdown=(
                render_proposal(proposal, pending_note=_pending_note(plan, outcome))
                if proposal is not None and not plan.scope.may_write
                else ""
            ),
            notes=tuple(
                note for note in (_sources_note(plan), *outcome.start.notes, *outcome.notes) if note
            ),
            changes_markdown=render_changes_markdown(changes),
        ),
        plan.masked,
    )
    if not plan.log.append_summary(summary):
        plan.log.debug("No job summary file; summary not written.")
