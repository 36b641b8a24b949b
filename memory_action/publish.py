"""What a run shows people: the sticky pull request comment and the job summary."""

from __future__ import annotations

from memory_action import report
from memory_action.memory.render import approx_tokens, render_memory_block
from memory_action.pipeline import Outcome, Plan
from memory_action.pull_request import CommentPermissionError


def post_comment(plan: Plan, outcome: Outcome) -> str:
    """Update (or create) the agent's sticky comment; its URL, or "" when none was posted."""
    pr, github, settings = plan.context.pull_request, plan.services.github, plan.settings
    if pr is None or not settings.post_comment or github is None:
        return ""
    body = report.render_comment(
        agent_name=settings.agent_name,
        review_markdown=outcome.answer,
        memory_diff=outcome.memory_diff,
        memory_note=outcome.save_note,
        run_url=plan.context.run_url,
    )
    try:
        posted = github.upsert_sticky_comment(
            pr.number, report.comment_marker(settings.agent_name), body
        )
    except CommentPermissionError:
        plan.log.notice(
            "This run's token may not comment on the pull request (fork pull requests get a "
            "read-only token); the review is in the job summary."
        )
        return ""
    plan.log.info(f"{'Posted' if posted.created else 'Updated'} the review: {posted.url}")
    return posted.url


def write_summary(plan: Plan, outcome: Outcome) -> None:
    settings = plan.settings
    block = render_memory_block(outcome.sources, settings.memory_file.as_posix())
    summary = report.render_summary(
        report.SummaryInput(
            agent_name=settings.agent_name,
            event=plan.context.event_name,
            scope_description=plan.scope.description,
            loaded=tuple(
                report.LoadedSource(s.path, len(s.content.encode()), s.writable)
                for s in outcome.sources
            ),
            restore_hit=outcome.restored.hit,
            matched_key=outcome.restored.matched_key,
            restore_warning=outcome.restored.warning,
            memory_diff=outcome.memory_diff,
            save_note=outcome.save_note,
            review_markdown=outcome.answer,
            approx_tokens=approx_tokens(block) if settings.enable_memory else 0,
        )
    )
    if not plan.log.append_summary(summary):
        plan.log.debug("No job summary file; summary not written.")
