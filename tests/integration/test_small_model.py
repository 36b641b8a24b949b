"""What a real small model answers, replayed by the OpenAI-compatible stub through ChatOpenAI:
tool calls written as text, answers cut off at the output cap, broken JSON, a model that
repeats a refused call (issue 20, "What a real small model showed")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_openai import ChatOpenAI

from memory_action.agent.models import build_chat_model
from memory_action.agent.pr_tools import make_pr_tools
from memory_action.agent.prompts import system_prompt
from memory_action.model.profile import profile_for
from memory_action.review.answer import PROSE
from memory_action.review.engine import ReviewEngine, ReviewResult, ReviewSetup
from memory_action.run.settings import Mode, ModelSpec, Settings
from memory_action.store.secret import Secret
from tests.fakes import small_model_answers as said
from tests.fakes.git_repo import GitRepo
from tests.fakes.openai_stub import (
    OpenAIStub,
    RecordedRequest,
    Reply,
    answer_reply,
    report_reply,
    tool_call_reply,
)
from tests.fakes.static_reader import StaticPullRequest, added_file
from tests.integration.test_review_local import repo, review_local, sent

__all__ = ["repo"]  # the fixture, used by name below

CUT = "length"  # the finish_reason of an answer the output cap cut off


def local(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, *replies: Reply
) -> tuple[int, str, str, list[RecordedRequest]]:
    """``review --local --no-save`` of the feature change against the stub's ``replies``."""
    with OpenAIStub(replies) as stub:
        code, out, err = review_local(capsys, stub, tmp_path / "store", "--no-save")
        return code, out, err, stub.requests


# -- tool calls written as text -----------------------------------------------------------


@pytest.mark.parametrize("text", [said.BARE_CALL, said.FENCED, said.STRING_ARGUMENTS])
def test_a_call_written_as_text_is_the_review(
    capsys: pytest.CaptureFixture[str], repo: GitRepo, tmp_path: Path, text: str
) -> None:
    code, out, err, requests = local(capsys, tmp_path, answer_reply(text))

    assert code == 0, err
    assert out.startswith(said.SUMMARY)
    assert "`src/app.py` line 3" in out and "Spelled-out number" in out  # line "3" coerced
    assert "{" not in out  # no JSON reaches the review
    assert PROSE not in out
    assert "Review reviewed" in err
    assert len(requests) == 1


def test_plain_text_is_a_summary_only_review_that_says_so(
    capsys: pytest.CaptureFixture[str], repo: GitRepo, tmp_path: Path
) -> None:
    code, out, err, _ = local(capsys, tmp_path, answer_reply(said.SUMMARY))

    assert code == 0, err
    assert out.startswith(f"{said.SUMMARY}\n\n> {PROSE}")
    assert "Review reviewed" in err


def test_another_tool_s_call_written_as_text_is_not_an_answer(
    capsys: pytest.CaptureFixture[str], repo: GitRepo, tmp_path: Path
) -> None:
    code, out, err, requests = local(
        capsys, tmp_path, answer_reply(said.OTHER_TOOL), answer_reply(said.OTHER_TOOL)
    )

    assert code == 0, err
    assert "read_file" not in out
    assert "Review partial" in err
    assert "Not reviewed: src/app.py: the model's answer was JSON that does not parse" in err
    assert len(requests) == 2  # asked once more


# -- answers that do not parse --------------------------------------------------------------


@pytest.mark.parametrize(
    ("broken", "reason"),
    [
        (
            answer_reply(said.CUT_TEXT, finish=CUT),
            "the model's answer was cut off at its output cap",
        ),
        (
            answer_reply(said.CUT_CALL, finish=CUT),
            "the model's answer was cut off at its output cap",
        ),
        (answer_reply(said.BROKEN_FENCE), "the model's answer was JSON that does not parse"),
        (answer_reply(""), "the model gave no answer"),
    ],
    ids=["cut-off text", "cut-off call", "broken JSON", "no text"],
)
def test_an_answer_that_does_not_parse_twice_leaves_its_files_unreviewed(
    capsys: pytest.CaptureFixture[str],
    repo: GitRepo,
    tmp_path: Path,
    broken: Reply,
    reason: str,
) -> None:
    code, out, err, requests = local(capsys, tmp_path, broken, broken)

    assert code == 0, err
    assert len(requests) == 2  # the batch was asked once more, then given up
    assert said.CUT_TEXT not in out and said.CUT_CALL not in out and "findings" not in out
    for path in ("src/app.py", "docs/manual.md", "old.txt"):
        assert f"Not reviewed: {path}: {reason}" in err
    assert "Review partial" in err
    assert "0 files reviewed" in err


def test_a_cut_off_answer_asked_again_gives_the_review_and_is_never_sent_on(
    capsys: pytest.CaptureFixture[str], repo: GitRepo, tmp_path: Path
) -> None:
    code, out, err, requests = local(
        capsys, tmp_path, answer_reply(said.CUT_CALL, finish=CUT), answer_reply(said.BARE_CALL)
    )

    assert code == 0, err
    assert out.startswith(said.SUMMARY)
    assert "Review reviewed" in err
    assert said.CUT_CALL[:40] not in sent(requests)  # the retry starts afresh


# -- a review in parts ----------------------------------------------------------------------


def engine(stub: OpenAIStub, *, calls: int = 12) -> tuple[ReviewEngine, StaticPullRequest]:
    """The engine on six files that take two parts at 8,000 tokens, with the real ChatOpenAI."""
    settings = Settings(
        model=ModelSpec(provider="openai", name="qwen2.5-coder-1.5b"),
        model_base_url=stub.url("/v1"),
        model_api_key=Secret("sk-local"),
    )
    model = build_chat_model(settings, Secret(""), timeout_s=30, max_retries=0)
    assert isinstance(model, ChatOpenAI)
    reader = StaticPullRequest([added_file(f"src/mod{n}.py", 120) for n in range(6)])
    setup = ReviewSetup(
        profile=profile_for("openai", "qwen2.5-coder-1.5b", max_input_tokens=8_000),
        max_model_calls=calls,
        exclude=(),
        timeout_s=60,
        repository="octo-org/octo-repo",
        system_prompt=system_prompt(Mode.REVIEW, "memory-agent", "", memory=False),
        memory_budget_bytes=7 * 1024,
        memory=False,
    )
    tools = make_pr_tools(reader, include_listing=False)
    return ReviewEngine(model, setup, memory=None, tools=tools), reader


def review_in_parts(*replies: Reply) -> tuple[ReviewResult, list[RecordedRequest]]:
    with OpenAIStub(replies) as stub:
        found, reader = engine(stub)
        return found.review(reader), stub.requests


def test_a_part_whose_answer_is_cut_off_twice_is_not_reviewed_nor_passed_on() -> None:
    part_one = report_reply("Part one looks fine.")
    cut = answer_reply(said.CUT_CALL, finish=CUT)

    result, requests = review_in_parts(part_one, cut, cut)

    assert len(requests) == 3  # part 1, part 2, part 2 again; no last request for one part
    assert result.outcome == "partial"
    reviewed, left = set(result.reviewed), {s.path: s.reason for s in result.not_reviewed}
    assert reviewed and left and not reviewed & set(left)
    assert set(left.values()) == {"the model's answer was cut off at its output cap"}
    assert result.answer == "Part one looks fine."
    assert said.CUT_CALL[:40] not in sent(requests)


def test_a_part_cut_off_once_is_asked_again_and_only_its_parsed_answer_goes_on() -> None:
    result, requests = review_in_parts(
        report_reply("Part one looks fine."),
        answer_reply(said.CUT_CALL, finish=CUT),
        answer_reply(said.FENCED),
    )

    assert len(requests) == 3  # part 2, asked again, also writes the review's summary
    assert result.outcome == "reviewed"
    assert result.files_reviewed == 6
    last = json.dumps(requests[-1].body)
    assert "Part one looks fine." in last
    assert said.CUT_CALL[:40] not in last
    assert said.SUMMARY in result.answer


# -- a looping model ------------------------------------------------------------------------


def test_a_model_repeating_a_refused_edit_is_told_once_then_stopped(
    capsys: pytest.CaptureFixture[str], repo: GitRepo, tmp_path: Path
) -> None:
    edit = {"file_path": "src/app.py", "old_string": "line three", "new_string": "line 3"}
    loop = [tool_call_reply("edit_file", edit, call_id=f"call_{n}") for n in range(11)]

    code, out, err, requests = local(capsys, tmp_path, *loop)

    assert code == 0, err
    assert len(requests) == 3  # refused, told, stopped: not the run's 12 calls
    told = requests[2].body["messages"][-1]
    assert told["role"] == "tool"
    assert "you made this exact edit_file call before and it was refused" in told["content"]
    assert "Not reviewed: src/app.py: the model repeated a refused tool call" in err
    assert "Review partial" in err
    assert "No part of the review could be used" in out + err


def test_a_model_stopped_for_repeating_keeps_the_answer_it_wrote(
    capsys: pytest.CaptureFixture[str], repo: GitRepo, tmp_path: Path
) -> None:
    call = tool_call_reply("read_file", {"path": "/etc/passwd"})
    call["choices"][0]["message"]["content"] = said.BARE_CALL  # the answer, with the call

    code, out, err, requests = local(capsys, tmp_path, call, call, call)

    assert code == 0, err
    assert len(requests) == 3
    assert out.startswith(said.SUMMARY)
    assert "Review reviewed" in err


# -- suggestions, and findings off the changed lines -----------------------------------------


def review_saying(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, *findings: dict[str, object]
) -> str:
    """The local review's stdout when the model writes these findings as bare JSON."""
    text = json.dumps(
        {"name": "report_review", "arguments": {"summary": "S.", "findings": findings}}
    )
    code, out, err, _ = local(capsys, tmp_path, answer_reply(text))
    assert code == 0, err
    return out


@pytest.mark.parametrize(
    ("suggestion", "posted"),
    [
        ("No further action required.", False),
        ("The line should keep its number, as the others do.", False),
        ("line three", False),  # what the line already says
        ("line 3", True),
        ("", True),  # deletes the line: code too
    ],
)
def test_a_suggestion_is_kept_only_when_it_is_code_for_its_lines(
    capsys: pytest.CaptureFixture[str],
    repo: GitRepo,
    tmp_path: Path,
    suggestion: str,
    posted: bool,
) -> None:
    out = review_saying(capsys, tmp_path, said.finding(suggestion=suggestion))

    assert "Spelled-out number" in out  # the finding stays either way
    assert ("```suggestion" in out) is posted


def test_findings_off_the_changed_lines_say_so_in_the_local_output(
    capsys: pytest.CaptureFixture[str], repo: GitRepo, tmp_path: Path
) -> None:
    out = review_saying(
        capsys,
        tmp_path,
        said.finding(line=3, title="On the changed line"),
        said.finding(line=1, title="On a context line"),
        said.finding(line=10, title="Outside the diff"),
        said.finding(path="README.md", line=1, title="In a file not changed"),
    )

    lines = {line for line in out.splitlines() if line.startswith("- ")}
    assert "- `src/app.py` line 3: **On the changed line** (low)" in lines
    assert (
        "- `src/app.py` line 1 (an unchanged line the diff shows as context): "
        "**On a context line** (low)" in lines
    )
    assert "- `src/app.py` line 10 (not a line of the diff): **Outside the diff** (low)" in lines
    # A file the model was not shown is not one of the review's findings.
    assert not any("In a file not changed" in line for line in lines)


# -- the tools the model is told of -----------------------------------------------------------


def test_tool_descriptions_name_only_tools_the_model_has(
    capsys: pytest.CaptureFixture[str], repo: GitRepo, tmp_path: Path
) -> None:
    _, _, err, requests = local(capsys, tmp_path, report_reply("Fine."))

    every_tool = {t.name for t in make_pr_tools(StaticPullRequest([]))}
    every_tool |= {"edit_file", "write_file", "read_skill", "report_review"}
    offered = {tool["function"]["name"]: tool["function"] for tool in requests[0].body["tools"]}
    assert offered, err
    for name, function in offered.items():
        named = {other for other in every_tool - set(offered) if other in json.dumps(function)}
        assert not named, f"{name}'s description names {named}, which the model is not given"
    system = requests[0].body["messages"][0]["content"]
    assert not {t for t in every_tool - set(offered) if t in system}
