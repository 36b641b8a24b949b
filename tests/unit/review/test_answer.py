"""Findings as data: the report_review answer tool, validated finding by finding, merged across
batches by fingerprint, with its schema counted in every request."""

from __future__ import annotations

from typing import Any

from memory_action.agent.pr_tools import make_pr_tools
from memory_action.agent.prompts import system_prompt
from memory_action.github.pull_request import ChangedFile
from memory_action.model.profile import profile_for
from memory_action.review.answer import (
    ANSWER_TOOL,
    MAX_FINDINGS,
    PROSE,
    answer_schema,
    parse,
    response_format,
)
from memory_action.review.budget import answer_tools
from memory_action.review.engine import ReviewEngine, ReviewResult, ReviewSetup
from memory_action.review.findings import Finding
from memory_action.review.ledger import fingerprint, merge_findings
from memory_action.run.settings import Mode
from tests.fakes.scripted_model import ScriptedChatModel, tool_call
from tests.fakes.static_reader import StaticPullRequest, added_file


def _finding(path: str = "src/app.py", line: int = 3, **extra: Any) -> dict[str, Any]:
    found = {"path": path, "line": line, "title": "Unchecked None", "body": "It can be None."}
    return found | extra


def _setup(limit: int = 8_000, calls: int = 12) -> ReviewSetup:
    return ReviewSetup(
        profile=profile_for("github", "openai/gpt-4.1-mini", max_input_tokens=limit),
        max_model_calls=calls,
        exclude=(),
        timeout_s=600,
        repository="octo-org/octo-repo",
        system_prompt=system_prompt(Mode.REVIEW, "memory-agent", "", memory=False),
        memory_budget_bytes=7 * 1024,
        memory=False,
    )


def _review(model: ScriptedChatModel, reader: StaticPullRequest, **kwargs: Any) -> ReviewResult:
    engine = ReviewEngine(
        model, _setup(**kwargs), memory=None, tools=make_pr_tools(reader, include_listing=False)
    )
    return engine.review(reader)


def test_the_model_answers_with_the_tool_and_bad_findings_are_dropped_one_by_one() -> None:
    reader = StaticPullRequest([added_file("src/app.py", 10)])
    answer = {
        "summary": "Adds a retry.",
        "findings": [
            _finding(),
            _finding(line=0),  # not a line
            {"path": "src/app.py", "title": "no line"},
            "not an object",
            _finding(line=5, severity="high", title="Retries forever"),
        ],
        "fixed": ["abc12345", 7],
    }
    model = ScriptedChatModel.from_script(tool_call(ANSWER_TOOL, answer))

    result = _review(model, reader)

    assert (result.answer, result.outcome, model.calls) == ("Adds a retry.", "reviewed", 1)
    assert [(f.line, f.severity) for f in result.findings] == [(5, "high"), (3, "medium")]
    assert result.fixed == ("abc12345",)
    assert len(result.dropped) == 3
    assert result.dropped[0].startswith("finding 2 was dropped: line:")
    assert ANSWER_TOOL in model.bound_tools


def test_a_plain_text_answer_is_a_summary_without_findings() -> None:
    model = ScriptedChatModel.from_script("Looks right.")

    result = _review(model, StaticPullRequest([added_file("src/app.py", 10)]))

    assert (result.answer, result.findings) == (f"Looks right.\n\n> {PROSE}", ())
    assert result.outcome == "reviewed"  # the files were read: the summary is a review


def test_the_last_allowed_call_keeps_the_answer_tool() -> None:
    reader = StaticPullRequest([added_file("src/app.py", 10)])
    model = ScriptedChatModel.from_script(
        tool_call("read_file", {"path": "src/app.py"}),
        tool_call(ANSWER_TOOL, {"summary": "Done.", "findings": [_finding()]}),
    )

    result = _review(model, reader, calls=2)

    assert model.bound_tools == [ANSWER_TOOL]  # the second call could only answer
    assert [f.line for f in result.findings] == [3]


def test_batches_findings_are_merged_without_repeats() -> None:
    files = [added_file(f"src/mod{n}.py", 120) for n in range(6)]
    same = _finding(path="src/mod0.py", line=4)
    model = ScriptedChatModel.from_script(
        tool_call(ANSWER_TOOL, {"summary": "Part one.", "findings": [same, same]}),
        tool_call(
            ANSWER_TOOL, {"summary": "The whole review.", "findings": [_finding("src/mod5.py")]}
        ),
    )

    result = _review(model, StaticPullRequest(files))

    assert model.calls == 2  # the last batch writes the summary: no request of its own
    assert result.answer == "The whole review."
    assert [(f.path, f.line) for f in result.findings] == [("src/mod0.py", 4), ("src/mod5.py", 3)]
    last = str(model.seen[-1][-1].content)
    assert "Part one." in last and "`src/mod0.py` line 4: Unchecked None" in last


def test_the_answer_schema_counts_toward_every_request() -> None:
    """Without it requests would be estimated (and batches packed) as if it took no room."""
    reader = StaticPullRequest([added_file("src/app.py", 10)])
    model = ScriptedChatModel.from_script("Fine.")
    engine = ReviewEngine(model, _setup(), memory=None, tools=[])
    engine.review(reader)
    estimator = engine.estimator  # exact: the profile names a model with a public tokenizer
    [seen] = model.seen
    without = estimator.count_request("", [str(m.content) for m in seen], [])
    empty = estimator.count_request("", [], [])
    schema = estimator.count_request("", [], answer_tools(response_format())) - empty
    assert schema > 150
    assert engine.cost.largest_request >= without + schema - 10


def test_merging_is_deterministic_and_a_moved_line_keeps_its_fingerprint() -> None:
    patch = "@@ -1,2 +1,4 @@\n a\n+b = None\n+c\n d\n"
    moved = "@@ -1,2 +1,5 @@\n a\n+new\n+b = None\n+c\n d\n"
    files = [added_file("x.py", 1)]
    first = Finding.model_validate(_finding("x.py", 2, title="b is None!"))
    again = Finding.model_validate(_finding("x.py", 3, title="B is none"))
    before = [ChangedFile(path="x.py", status="modified", additions=2, deletions=0, patch=patch)]
    after = [ChangedFile(path="x.py", status="modified", additions=3, deletions=0, patch=moved)]
    assert fingerprint(first, before) == fingerprint(again, after)
    low = Finding.model_validate(_finding("a.py", 9, severity="low"))
    assert merge_findings([[low], [first]], files) == merge_findings([[first], [low]], files)


def test_the_schema_is_derived_from_finding() -> None:
    schema = answer_schema()
    assert schema["title"] == ANSWER_TOOL
    finding = schema["properties"]["findings"]["items"]
    assert set(finding["properties"]) == set(Finding.model_fields)
    assert parse(None, " text ").summary == "text"


def test_an_answer_listing_too_many_findings_keeps_the_first_ones() -> None:
    found = parse({"summary": "s", "findings": [_finding(line=n) for n in range(1, 80)]})
    assert len(found.findings) == MAX_FINDINGS
    assert found.dropped == (f"findings after the first {MAX_FINDINGS} were dropped",)
