"""Folding a duplicate sticky comment into the one kept: the newest review text, and the ticks
people set in either comment (a veto is never lost)."""

from __future__ import annotations

from memory_action.memory.duplicates import fold_duplicates
from memory_action.memory.markers import comment_marker, marker_agent
from memory_action.memory.proposals import (
    Proposal,
    build_proposal,
    render_proposal,
    task_states,
    with_task_states,
)

AGENT = "memory-agent"
MARKER = comment_marker(AGENT)
BASE = "# Conventions\n\n- Use pytest.\n- Use setUp.\n- Keep it short.\n"
NEW = "# Conventions\n\n- Retry with tenacity.\n- Use pytest.\n- Use setUp.\n- Keep it brief.\n"


def proposal(*, trusted: bool) -> Proposal:
    return build_proposal(AGENT, 7, BASE, NEW, trusted=trusted)


def comment(review: str, the_proposal: Proposal, states: dict[str, bool] | None = None) -> str:
    return f"{MARKER}\n{review}\n\n{render_proposal(the_proposal, states=states)}"


def ids(the_proposal: Proposal) -> list[str]:
    assert len(the_proposal.items) == 2
    return [item.id for item in the_proposal.items]


def test_a_veto_in_the_duplicate_is_carried_and_the_newest_review_wins() -> None:
    trusted = proposal(trusted=True)
    first, second = ids(trusted)
    duplicate = comment("Older review.", trusted, {first: False})

    folded = fold_duplicates(comment("Newest review.", trusted), [duplicate], MARKER)

    assert task_states(folded) == {first: False, second: True}
    assert "Newest review." in folded
    assert "Older review." not in folded


def test_a_maintainers_tick_of_an_untrusted_item_is_carried() -> None:
    untrusted = proposal(trusted=False)
    first, second = ids(untrusted)
    duplicate = comment("Review.", untrusted, {second: True})

    folded = fold_duplicates(comment("Review.", untrusted), [duplicate], MARKER)

    assert task_states(folded) == {first: False, second: True}


def test_a_duplicate_nobody_touched_changes_nothing() -> None:
    body = comment("Newest.", proposal(trusted=True))
    duplicate = comment("Older.", proposal(trusted=False))  # defaults: unticked, nobody chose

    assert fold_duplicates(body, [duplicate], MARKER) == body


def test_when_people_chose_differently_in_the_two_comments_the_veto_holds() -> None:
    trusted, untrusted = proposal(trusted=True), proposal(trusted=False)
    first, second = ids(trusted)
    body = comment("Newest.", trusted, {first: False})  # vetoed here (carried from the oldest)
    duplicate = comment("Older.", untrusted, {first: True, second: True})  # ticked there

    folded = fold_duplicates(body, [duplicate], MARKER)

    assert task_states(folded) == {first: False, second: True}


def test_bodies_without_a_block_of_this_agent_are_left_alone() -> None:
    body = comment("Newest.", proposal(trusted=True))
    first, _ = ids(proposal(trusted=True))
    other_agent = comment("x", proposal(trusted=True), {first: False})
    other_agent = other_agent.replace(f"v1 {AGENT}", "v1 someone-else")

    assert fold_duplicates(body, [other_agent], MARKER) == body
    assert fold_duplicates(f"{MARKER}\nNo proposal.", [body], MARKER) == f"{MARKER}\nNo proposal."
    assert fold_duplicates(body, [other_agent], "not a marker") == body


def test_with_task_states_sets_only_the_boxes_named() -> None:
    trusted = proposal(trusted=True)
    first, second = ids(trusted)
    body = comment("Review.", trusted)

    changed = with_task_states(body, {first: False})

    assert task_states(changed) == {first: False, second: True}
    assert with_task_states(changed, {first: True}) == body


def test_marker_agent_reads_back_only_what_comment_marker_wrote() -> None:
    assert marker_agent(MARKER) == AGENT
    assert marker_agent(comment_marker("a.b_c-1")) == "a.b_c-1"
    assert marker_agent("<!-- memory-agent:sticky agent=bad name -->") is None
    assert marker_agent("anything") is None
