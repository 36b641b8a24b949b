"""Only the proposal section of a sticky comment is replaced; the review around it is kept."""

from __future__ import annotations

from memory_action.commands.proposal_section import with_proposal
from memory_action.memory.proposals import build_proposal, render_proposal
from memory_action.publish import report

AGENT = "memory-agent"


def proposal(new: str) -> str:
    return render_proposal(build_proposal(AGENT, 7, "- a\n", new, trusted=True))


def comment(review: str, proposal_markdown: str) -> str:
    return report.render_comment(
        agent_name=AGENT,
        review_markdown=review,
        memory_diff="",
        memory_note="",
        run_url=None,
        proposal_markdown=proposal_markdown,
    )


def test_the_section_is_replaced_and_the_review_kept() -> None:
    review = "#### Proposed memory changes\n\nA review that quotes our heading."
    body = comment(review, proposal("- a\n- b\n"))
    new = proposal("- a\n- b\n- c\n")
    assert with_proposal(body, AGENT, new) == comment(review, new)


def test_a_comment_without_a_section_gets_one_before_the_memory_section() -> None:
    body = comment("A review.", "")
    new = proposal("- a\n- c\n")
    assert with_proposal(body, AGENT, new) == comment("A review.", new)


def test_an_empty_proposal_removes_the_section() -> None:
    body = comment("A review.", proposal("- a\n- b\n"))
    assert with_proposal(body, AGENT, "") == comment("A review.", "")
