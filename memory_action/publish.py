"""What a run shows people: the sticky pull request comment and the job summary.

Both carry this run's memory changes; a pull request's comment also carries its proposed
memory changes (a checklist to veto, and the block promotion reads after the merge). Secrets are
redacted from everything shown, whatever the model wrote.
"""

from __future__ import annotations

from memory_action import report
from memory_action.context import Trust
from memory_action.memory.proposals import Proposal, build_proposal, render_proposal, task_states
from memory_action.memory.provenance import changed_entries, render_changes_markdown
from memory_action.memory.render import approx_tokens, render_memory_block
from memory_action.memory.scrub import redact
from memory_action.pipeline import Outcome, Plan
from memory_action.pull_request import CommentPermissionError
from memory_action.settings import ScopeKind


def proposal_for(plan: Plan, outcome: Outcome) -> Proposal | None:
    """A PR's memory changes against committed memory, for people to veto and promotion to
    apply; None when there is nothing to propose (or nothing would ever promote it)."""
    pr = plan.context.pull_request
    if pr is None or not plan.settings.enable_memory or plan.scope.kind is ScopeKind.PR:
        return None
    base = outcome.start.committed.text
    if outcome.final == base:
        return None
    return build_proposal(
        plan.settings.agent_name,
        pr.number,
        base,
        outcome.final,
        trusted=plan.context.trust is Trust.TRUSTED,
        stamp=_stamp_json(outcome),
    )


def _stamp_json(outcome: Outcome) -> dict[str, str | int | None]:
    raw = outcome.stamp.to_json()
    return {k: v for k, v in raw.items() if v is None or isinstance(v, str | int)}


def _pending_note(plan: Plan, outcome: Outcome) -> str | None:
    if outcome.saved.saved or plan.scope.may_write:
        return None
    return (
        f"Not saved: {outcome.saved.reason}. Items from a run that may not write memory start "
        "unticked: a maintainer ticks the ones to accept, and ticked items become committed "
        "memory when this pull request is merged."
    )


def _safe(plan: Plan, text: str) -> str:
    return redact(text, plan.masked)[0]


def post_comment(plan: Plan, outcome: Outcome) -> str:
    """Update (or create) the agent's sticky comment; its URL, or "" when none was posted."""
    pr, github, settings = plan.context.pull_request, plan.services.github, plan.settings
    if pr is None or not settings.post_comment or github is None:
        return ""
    marker = report.comment_marker(settings.agent_name)
    proposal = proposal_for(plan, outcome)
    proposal_markdown = ""
    if proposal is not None:
        previous = github.find_sticky_comment(pr.number, marker) or ""
        proposal_markdown = render_proposal(
            proposal, pending_note=_pending_note(plan, outcome), states=task_states(previous)
        )
    body = report.render_comment(
        agent_name=settings.agent_name,
        review_markdown=_safe(plan, outcome.answer),
        memory_diff=_safe(plan, outcome.memory_diff),
        memory_note=outcome.save_note,
        run_url=plan.context.run_url,
        proposal_markdown=proposal_markdown,
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
    summary = report.render_summary(
        report.SummaryInput(
            agent_name=settings.agent_name,
            event=plan.context.event_name,
            scope_description=plan.scope.description,
            loaded=tuple(
                report.LoadedSource(s.path, len(s.content.encode()), s.writable)
                for s in outcome.sources
            ),
            restore_hit=outcome.start.restored.hit,
            matched_key=outcome.start.restored.matched_key,
            restore_warning=outcome.start.restored.warning,
            memory_diff=_safe(plan, outcome.memory_diff),
            save_note=_summary_save_note(plan, outcome),
            review_markdown=_safe(plan, outcome.answer),
            approx_tokens=approx_tokens(block) if settings.enable_memory else 0,
            proposal_markdown=(
                render_proposal(proposal, pending_note=_pending_note(plan, outcome))
                if proposal is not None and not plan.scope.may_write
                else ""
            ),
            notes=(*outcome.start.notes, *outcome.notes),
            changes_markdown=render_changes_markdown(changes),
        )
    )
    if not plan.log.append_summary(summary):
        plan.log.debug("No job summary file; summary not written.")
