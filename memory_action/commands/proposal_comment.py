"""A pull request's proposal, changed by comment commands, published in its sticky comment.

Only the proposal section changes (``proposal_section``): the review stays as the last review
left it. A pull request without a comment yet gets one that says no review ran.
"""

from __future__ import annotations

from memory_action.commands.proposal_section import with_proposal
from memory_action.errors import GitHubError
from memory_action.github.pull_request import CommentPermissionError
from memory_action.memory.markers import comment_marker
from memory_action.plan import Plan
from memory_action.publish import report
from memory_action.publish.comment import comment_proposal
from memory_action.publish.outcome import Outcome
from memory_action.safety.outgoing import gate

NO_REVIEW = "_No review yet: this comment holds the memory changes asked for in comments._"


def publish_proposal(plan: Plan, outcome: Outcome) -> str:
    """Write the proposal of ``outcome`` into the sticky comment; why not ("" when written)."""
    pr, github, agent = plan.context.pull_request, plan.services.github, plan.settings.agent_name
    if pr is None or github is None:
        return "there is no pull request comment to hold it"
    marker = comment_marker(agent)
    try:
        current = github.find_sticky_comment(pr.number, marker)
        proposal = comment_proposal(plan, outcome, current or "")  # the comment is read once
        body = (
            gate(
                with_proposal(current, agent, proposal),
                plan.masked,
                ours=(*report.our_html(agent, proposal), *report.kept_html(current)),
            )
            if current is not None
            else report.safe_comment(
                plan.masked,
                agent_name=agent,
                review_markdown=NO_REVIEW,
                memory_diff="",
                memory_note="",
                run_url=plan.context.run_url,
                proposal_markdown=proposal,
            )
        )
        posted = github.upsert_sticky_comment(pr.number, marker, body)
    except (GitHubError, CommentPermissionError) as exc:
        return f"the pull request's comment could not be written ({exc})"
    plan.log.info(f"Updated the memory proposal: {posted.url}")
    return ""
