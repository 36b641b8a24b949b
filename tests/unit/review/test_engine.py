"""The review engine with a scripted model: batches that fit, the last request, the call budget,
413 shrink-and-retry, 429 waits, the daily quota, and what is never reviewed."""

from __future__ import annotations

from dataclasses import replace

import pytest
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from memory_action.agent.pr_tools import make_pr_tools
from memory_action.agent.prompts import system_prompt
from memory_action.agent.runner import AgentRunError
from memory_action.errors import AgentError
from memory_action.github.pull_request import ChangedFile
from memory_action.local.words import cli_words
from memory_action.model.profile import profile_for
from memory_action.model.tokens import TokenEstimator
from memory_action.review.answer import PROSE
from memory_action.review.budget import message_text
from memory_action.review.engine import ReviewEngine, ReviewResult, ReviewSetup
from memory_action.run.settings import Mode
from tests.fakes.diligent_reviewer import listed_names
from tests.fakes.provider_errors import daily_quota, minute_limit, too_large
from tests.fakes.scripted_model import ScriptedChatModel, tool_call
from tests.fakes.static_reader import StaticPullRequest, added_file

LIMIT = 8_000


def prose(text: str) -> str:
    """A plain-text answer as the review shows it: with the note that it has no findings."""
    return f"{text}\n\n> {PROSE}"


def _setup(*, calls: int = 12, limit: int = LIMIT, exclude: tuple[str, ...] = ()) -> ReviewSetup:
    return ReviewSetup(
        # Counted by the estimate (3 characters a token), which these batch sizes are made for;
        # exact counts are tests/unit/review/test_exact_window.py's.
        profile=replace(
            profile_for("github", "openai/gpt-4.1-mini", max_input_tokens=limit), encoding=""
        ),
        max_model_calls=calls,
        exclude=exclude,
        timeout_s=600,
        repository="octo-org/octo-repo",
        system_prompt=system_prompt(Mode.REVIEW, "memory-agent", "", memory=False),
        memory_budget_bytes=7 * 1024,
        memory=False,
    )


def _review(
    model: ScriptedChatModel, reader: StaticPullRequest, setup: ReviewSetup, **kwargs: object
) -> ReviewResult:
    engine = ReviewEngine(
        model,
        setup,
        memory=None,
        tools=make_pr_tools(reader, include_listing=False),
        **kwargs,  # type: ignore[arg-type]
    )
    return engine.review(reader)


def _task(messages: list[BaseMessage]) -> str:
    return str(next(m for m in messages if isinstance(m, HumanMessage)).content)


def _request_tokens(messages: list[BaseMessage]) -> int:
    return TokenEstimator().count_request("", [message_text(m) for m in messages])


def _six_files() -> StaticPullRequest:
    return StaticPullRequest([added_file(f"src/mod{n}.py", 120) for n in range(6)])


def test_a_small_pull_request_is_reviewed_in_one_call_with_the_diff_in_it() -> None:
    reader = StaticPullRequest([added_file("src/app.py", 10)])
    model = ScriptedChatModel.from_script("Looks right.")

    result = _review(model, reader, _setup())

    expected = (prose("Looks right."), "reviewed", True)
    assert (result.answer, result.outcome, result.finished) == expected
    assert result.cost.model_calls == model.calls == 1
    assert (result.files_reviewed, result.files_skipped) == (1, 0)
    task = _task(model.seen[0])
    assert "### added src/app.py (+10 -0)" in task
    assert "+line 0010" in task
    assert "<pull_request>" in task


def test_a_larger_one_goes_in_batches_that_fit_and_the_last_batch_writes_the_review() -> None:
    model = ScriptedChatModel.from_script("- a finding", "The review.")

    result = _review(model, _six_files(), _setup())

    assert (result.answer, result.outcome) == (prose("The review."), "reviewed")
    assert model.calls == 2  # two batches, and no request of its own for the summary
    assert result.files_reviewed == 6
    first, last = (_task(seen) for seen in model.seen)
    assert "part 1 of 2" in first and "part 2 of 2" in last
    assert "Reviewed in other requests (do not read them): " in first
    assert "the summary of the whole pull request's review" in last
    assert "## Findings of part 1 of 2" in last and "- a finding" in last
    assert "## Findings of part" not in first
    assert "+line 0119" in last  # its own part of the diff, beside the first part's findings
    for seen in model.seen:
        assert _request_tokens(seen) <= LIMIT


def test_a_long_earlier_answer_is_cut_to_go_beside_the_last_batch() -> None:
    reader = StaticPullRequest([added_file(f"src/big{n}.py", 430) for n in range(2)])
    long_summary = "The first part changes many things. " * 120
    model = ScriptedChatModel.from_script(long_summary, "The review.")

    result = _review(model, reader, _setup())

    assert (result.answer, result.outcome, model.calls) == (prose("The review."), "reviewed", 2)
    last = _task(model.seen[-1])
    assert "## Findings of part 1 of 2" in last and "[findings cut to fit]" in last
    assert "The first part changes many things." in last
    assert _request_tokens(model.seen[-1]) <= LIMIT


def test_a_last_request_writes_the_review_when_the_findings_do_not_fit_beside_the_diff() -> None:
    # Two files that each fill a request: not even the first part's summary can go beside the
    # second's diff, so a request of its own writes the summary from both parts.
    reader = StaticPullRequest([added_file(f"src/big{n}.py", 465) for n in range(2)])
    long_summary = "The first part changes many things. " * 120
    model = ScriptedChatModel.from_script(long_summary, "No findings.", "The review.")

    result = _review(model, reader, _setup())

    assert (result.answer, result.outcome) == (prose("The review."), "reviewed")
    assert model.calls == 3
    _first, second, last = (_task(seen) for seen in model.seen)
    assert "part 2 of 2" in second and "## Findings of part" not in second
    assert last.startswith("Write the summary")
    assert "## Findings of part 1 of 2" in last and "## Findings of part 2 of 2" in last
    for seen in model.seen:
        assert _request_tokens(seen) <= LIMIT


def test_what_the_call_budget_cannot_cover_is_listed_not_dropped() -> None:
    model = ScriptedChatModel.from_script("The review.")

    result = _review(model, _six_files(), _setup(calls=2))

    # Batches would keep one call for a last request and leave room for one batch: a plan of
    # one batch is the review's one request (every tool), so it holds what fits that request.
    assert (result.answer, result.outcome, model.calls) == (prose("The review."), "partial", 1)
    assert result.files_reviewed == 3
    left = {s.path: s.reason for s in result.not_reviewed}
    assert len(left) == 3
    assert set(left.values()) == {"over max_model_calls (2)"}  # the setting as the user gave it
    assert "Not reviewed: " in _task(model.seen[0])


def test_a_413_shrinks_the_batches_once_and_retries() -> None:
    reader = StaticPullRequest([added_file("src/app.py", 200)])
    model = ScriptedChatModel.from_script("- part one", "The review.")
    model.fail_at = {1: too_large()}

    result = _review(model, reader, _setup())

    assert result.outcome == "reviewed", result.not_reviewed
    assert result.answer == prose("The review.")  # the last part's answer writes the review
    assert result.cost.model_calls == 2  # the refused request never reached the provider's count
    assert model.calls == 3


def test_a_second_413_leaves_that_batch_unreviewed_and_never_loops() -> None:
    reader = StaticPullRequest([added_file("src/app.py", 10), added_file("tests/test_app.py", 10)])
    model = ScriptedChatModel.from_script()
    model.fail_at = {1: too_large(), 2: too_large()}

    with pytest.raises(AgentError, match="refused every request as too large") as refused:
        _review(model, reader, _setup())  # nothing was reviewed at all: the run fails clearly
    assert model.calls == 2
    # Each interface names the settings to change in its own words.
    assert "set the max_input_tokens input" in str(refused.value)
    assert "set --max-input-tokens" in refused.value.in_words(cli_words)


def test_a_file_just_over_the_one_request_goes_in_two_batches_while_calls_allow() -> None:
    # 480 lines do not fit the review's one request (every tool, room for their results), yet
    # fit one batch without tools: that batch would go out as the one request and not fit, so
    # batches no larger than that request's room hold the file in two parts.
    reader = StaticPullRequest([added_file("src/app.py", 480)])
    model = ScriptedChatModel.from_script("- part one", "The review.")

    result = _review(model, reader, _setup())

    assert (result.outcome, result.not_reviewed, model.calls) == ("reviewed", (), 2)
    assert "part 1 of 2" in _task(model.seen[0])


def test_a_request_our_estimate_never_sent_is_listed_and_never_called_the_providers() -> None:
    # Each conversation's second request would carry the model's own huge tool call: the budget
    # keeps it from going out, twice (the batch is shrunk once), and no provider saw either.
    reader = StaticPullRequest([added_file("src/app.py", 10)])
    huge = tool_call("read_file", {"path": "x" * 40_000})
    model = ScriptedChatModel.from_script(huge, huge)

    result = _review(model, reader, _setup())

    assert model.calls == result.cost.model_calls == 2
    assert result.outcome == "partial"
    reasons = {s.path: s.reason for s in result.not_reviewed}
    assert reasons == {"src/app.py": "too large for one request to this model"}
    assert "refused" not in result.note


def test_the_daily_quota_stops_at_once_and_says_when_it_frees_up() -> None:
    model = ScriptedChatModel.from_script("- a finding")
    model.fail_at = {2: daily_quota()}

    result = _review(model, _six_files(), _setup())

    assert (result.outcome, result.finished) == ("quota", False)
    assert result.note == (
        "The model's daily request quota for this token is used up; it frees up in about 7 hours."
    )
    assert model.calls == 2
    # What the first batch held is reviewed; the rest is listed with the reason.
    first = _task(model.seen[0]).count("### added")
    assert 1 <= first < 6
    assert (result.files_reviewed, len(result.not_reviewed)) == (first, 6 - first)
    assert {s.reason for s in result.not_reviewed} == {"the model's daily quota is used up"}


def test_the_daily_quota_after_two_parts_shows_both_parts_findings() -> None:
    reader = StaticPullRequest([added_file(f"src/mod{n}.py", 120) for n in range(9)])
    model = ScriptedChatModel.from_script("- first part", "- second part")
    model.fail_at = {3: daily_quota()}

    result = _review(model, reader, _setup())

    assert result.outcome == "quota"
    assert "- first part" in result.answer and "- second part" in result.answer


def test_a_429_per_minute_is_waited_out_then_the_call_is_retried() -> None:
    reader = StaticPullRequest([added_file("src/app.py", 10)])
    model = ScriptedChatModel.from_script("Fine.")
    model.fail_at = {1: minute_limit(retry_after=12)}
    waits: list[float] = []

    result = _review(model, reader, _setup(), sleep=waits.append)

    assert (result.answer, result.outcome) == (prose("Fine."), "reviewed")
    assert waits == [12.0]


def test_a_429_longer_than_the_run_allows_is_not_waited_for() -> None:
    reader = StaticPullRequest([added_file("src/app.py", 10)])
    model = ScriptedChatModel.from_script("Fine.")
    model.fail_at = {1: minute_limit(retry_after=3_000)}
    waits: list[float] = []

    with pytest.raises(AgentRunError, match="HTTP 429"):
        _review(model, reader, _setup(), sleep=waits.append)
    assert waits == []


def test_nothing_reviewable_makes_no_model_call() -> None:
    reader = StaticPullRequest(
        [
            ChangedFile(
                path="package-lock.json",
                status="modified",
                additions=900,
                deletions=850,
                patch="@@ -1 +1 @@\n-a\n+b\n",
            )
        ]
    )
    model = ScriptedChatModel.from_script()

    result = _review(model, reader, _setup())

    assert (result.outcome, model.calls, result.files_skipped) == ("skipped", 0, 1)
    assert result.answer.startswith("Nothing to review")


def test_generated_files_come_from_the_base_gitattributes_not_the_pull_request() -> None:
    files = [added_file("src/app.py", 5), added_file("src/schema_gen.py", 5)]
    marked = "src/schema_gen.py linguist-generated\n"
    base = StaticPullRequest(files, base={".gitattributes": marked})
    head_only = StaticPullRequest(files, head={".gitattributes": marked})

    by_base = _review(ScriptedChatModel.from_script("Fine."), base, _setup())
    by_head = _review(ScriptedChatModel.from_script("Fine."), head_only, _setup())

    assert by_base.reviewed == ("src/app.py",)
    assert [s.path for s in by_base.not_reviewed] == ["src/schema_gen.py"]
    assert set(by_head.reviewed) == {"src/app.py", "src/schema_gen.py"}


def test_the_exclude_input_skips_files_with_the_reason() -> None:
    files = [added_file("src/app.py", 5), added_file("docs/guide.md", 5)]
    result = _review(
        ScriptedChatModel.from_script("Fine."),
        StaticPullRequest(files),
        _setup(exclude=("docs/**",)),
    )
    assert result.reviewed == ("src/app.py",)
    [skipped] = result.not_reviewed
    assert skipped.path == "docs/guide.md" and "exclude" in skipped.reason


def test_a_comments_request_reaches_every_batch_and_the_last_request() -> None:
    model = ScriptedChatModel.from_script("- a finding", "No findings.", "The review.")
    engine = ReviewEngine(
        model,
        _setup(),
        memory=None,
        tools=make_pr_tools(_six_files(), include_listing=False),
    )
    engine.review(_six_files(), extra="Please look at the error handling.")
    assert all("Please look at the error handling." in _task(seen) for seen in model.seen)


def test_every_batch_names_every_file_of_a_hundred_file_pull_request() -> None:
    """Paths are cheap: a model that is told only some of the files the other requests hold asks
    for the rest (issue 19: "... and 37 more" made a diligent model read them again)."""
    paths = [f"src/records/kind_{n:03d}/reader.py" for n in range(100)]
    reader = StaticPullRequest([added_file(path, 12) for path in paths])
    model = ScriptedChatModel.from_script(*["No findings."] * 12)

    result = _review(model, reader, _setup())

    batches = [_task(seen) for seen in model.seen if "### added" in _task(seen)]
    assert len(batches) > 1
    for task in batches:
        listed = task.split("Reviewed in other requests (do not read them): ", 1)[1]
        assert " more" not in listed.split("\n", 1)[0]
        shown = {path for path in paths if f"### added {path} " in task}
        assert shown | listed_names(listed.split("\n", 1)[0]) == set(paths)
    assert result.files_reviewed == 100


def test_batches_without_calls_to_spare_are_planned_without_tool_schemas() -> None:
    """A batch that cannot take a tool round is one request: its capacity counts no tool schema
    and no room for tool results, so it holds more of the diff."""
    reader = StaticPullRequest([added_file(f"src/mod{n:02d}.py", 10) for n in range(60)])
    tight = ScriptedChatModel.from_script(*["ok"] * 3)
    roomy = ScriptedChatModel.from_script(*["ok"] * 12)

    few = _review(tight, reader, _setup(calls=3))  # two batches and the last request: no spare
    many = _review(roomy, reader, _setup(calls=12))

    assert few.files_reviewed == many.files_reviewed == 60
    first_tight, first_roomy = _task(tight.seen[0]), _task(roomy.seen[0])
    assert first_tight.count("### added") > first_roomy.count("### added")


def test_a_patch_the_request_already_shows_whole_is_not_sent_again() -> None:
    """A tool round does not resend what the model has seen in full: asked for a patch that
    the batch shows whole, the answer is a one-line reference; a compressed one is sent."""
    gap = "".join(f" same {n}\n" for n in range(12))
    compressed = ChangedFile(
        path="src/long.py",
        status="modified",
        additions=2,
        deletions=0,
        patch=f"@@ -1,12 +1,14 @@\n+first\n{gap}+last\n",
    )
    reader = StaticPullRequest([added_file("src/app.py", 10), compressed])
    model = ScriptedChatModel.from_script(
        tool_call("get_file_patch", {"path": "src/app.py"}),
        tool_call("get_file_patch", {"path": "src/long.py"}),
        "Looks right.",
    )

    result = _review(model, reader, _setup())

    assert result.answer.startswith("Looks right.")  # a plain-text answer, with its note
    whole, shrunk = [m for m in model.seen[-1] if isinstance(m, ToolMessage)]
    assert str(whole.content).startswith("[src/app.py: its whole patch is in the first message")
    assert "same 6" in str(shrunk.content)  # the lines the batch left out
