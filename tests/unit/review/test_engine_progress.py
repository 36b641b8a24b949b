"""The engine's progress hook: every model request is told as it is sent and as it is answered,
with what it is for, how many files it holds, its size and the tokens so far."""

from __future__ import annotations

from memory_action.agent.progress import RequestProgress
from memory_action.agent.prompts import system_prompt
from memory_action.model.profile import profile_for
from memory_action.review.engine import ReviewEngine, ReviewSetup
from memory_action.run.settings import Mode
from tests.fakes.scripted_model import ScriptedChatModel
from tests.fakes.static_reader import StaticPullRequest, added_file


def engine(model: ScriptedChatModel, heard: list[RequestProgress]) -> ReviewEngine:
    setup = ReviewSetup(
        profile=profile_for("openai", "local-model", max_input_tokens=8_000),
        max_model_calls=12,
        exclude=(),
        timeout_s=600,
        repository="octo/demo",
        system_prompt=system_prompt(Mode.REVIEW, "memory-agent", "", memory=False),
        memory_budget_bytes=4 * 1024,
        memory=False,
    )
    return ReviewEngine(model, setup, memory=None, tools=[], progress=heard.append)


def test_each_request_of_a_review_in_parts_is_told_as_sent_and_answered() -> None:
    reader = StaticPullRequest([added_file(f"src/mod{n}.py", 120) for n in range(6)])
    model = ScriptedChatModel.from_script("- a finding", "The review.")
    heard: list[RequestProgress] = []

    engine(model, heard).review(reader)

    # The first batch plans a last request for the summary; the last batch writes it instead.
    told = [(e.stage, e.request, e.planned, e.part) for e in heard]
    assert told == [
        ("sent", 1, 3, "batch 1 of 2"),
        ("answered", 1, 3, "batch 1 of 2"),
        ("sent", 2, 2, "batch 2 of 2"),
        ("answered", 2, 2, "batch 2 of 2"),
    ]
    assert sum(e.files for e in heard if e.stage == "sent") == 6
    assert all(e.estimated_tokens > 0 for e in heard)


def test_a_review_in_one_request_is_request_1_of_1() -> None:
    reader = StaticPullRequest([added_file("src/app.py", 10)])
    heard: list[RequestProgress] = []

    engine(ScriptedChatModel.from_script("Looks right."), heard).review(reader)

    assert [(e.stage, e.request, e.planned, e.files) for e in heard] == [
        ("sent", 1, 1, 1),
        ("answered", 1, 1, 1),
    ]
