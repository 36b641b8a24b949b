"""``answer.parse`` on texts a model wrote instead of calling the answer tool."""

from __future__ import annotations

import json

import pytest

from memory_action.review.answer import PROSE, UnusableAnswerError, parse
from tests.fakes import small_model_answers as said


@pytest.mark.parametrize(
    "text",
    [
        said.BARE_CALL,
        said.FENCED,
        said.STRING_ARGUMENTS,
        json.dumps(said.ARGUMENTS),
        f"Sure! {said.BARE_CALL} I hope this helps.",
        json.dumps({"function": {"name": "report_review", "arguments": said.ARGUMENTS}}),
        f"~~~json\n{json.dumps(said.ARGUMENTS)}\n~~~",
    ],
    ids=["bare call", "fence", "string arguments", "arguments", "in prose", "function", "tildes"],
)
def test_the_answer_is_recovered_from_the_text(text: str) -> None:
    answer = parse(None, text)

    assert answer.summary == said.SUMMARY
    [finding] = answer.findings
    assert (finding.path, finding.line, finding.severity) == ("src/app.py", 3, "low")
    assert answer.note == ""


def test_a_finding_that_does_not_validate_is_dropped_the_rest_kept() -> None:
    text = json.dumps({"summary": "Two.", "findings": [said.FINDING, said.finding(line="three")]})
    answer = parse(None, text)
    assert len(answer.findings) == 1
    assert answer.dropped[0].startswith("finding 2 was dropped: line:")


@pytest.mark.parametrize(
    "text",
    [
        said.OTHER_TOOL,
        json.dumps({"summary": ["not", "text"]}),
        json.dumps({"name": "report_review", "arguments": "{not json"}),
        said.BROKEN_FENCE,
        "[1, 2, 3]",
    ],
)
def test_json_that_is_not_the_answer_is_unusable(text: str) -> None:
    with pytest.raises(UnusableAnswerError, match="JSON that does not parse"):
        parse(None, text)


def test_a_cut_off_text_is_unusable_even_when_it_reads_like_prose() -> None:
    with pytest.raises(UnusableAnswerError, match="cut off"):
        parse(None, said.CUT_TEXT, cut_off=True)


def test_a_complete_call_is_taken_even_when_the_cap_was_reached_after_it() -> None:
    assert parse(None, said.BARE_CALL, cut_off=True).summary == said.SUMMARY


def test_prose_is_a_summary_only_answer_that_says_so() -> None:
    answer = parse(None, f"  {said.SUMMARY}\n")
    assert (answer.summary, answer.findings, answer.note) == (said.SUMMARY, (), PROSE)


def test_no_text_is_unusable() -> None:
    with pytest.raises(UnusableAnswerError, match="no answer"):
        parse(None, " \n")


def test_a_text_with_thousands_of_braces_is_searched_in_bounded_time() -> None:
    with pytest.raises(UnusableAnswerError):
        parse(None, "{" * 100_000)
