"""No input crashes a run: untrusted text of any size (a comment, a pull request's title and
description, a thread reply) and memory far over its budget, through every event kind.

Sizes go from nothing to beyond what GitHub allows (65,536 characters a comment; an event payload
may carry more). Every run must exit 0 with one clear note, every model request must fit the
model's input limit, and memory over its budget must be consolidated by requests that fit.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from memory_action.model.tokenizer import O200K
from memory_action.model.tokens import TokenEstimator
from memory_action.review.budget import message_text
from memory_action.store.local import LocalDirectoryStore
from tests.fakes.github_api import FakeGitHub, FakePullRequest, changed_file
from tests.fakes.runner import (
    ActionRunner,
    RunOutcome,
    comment_event,
    pull_request_event,
    push_event,
    reply_event,
)
from tests.fakes.scripted_model import ScriptedChatModel, tool_call

GITHUB_COMMENT_LIMIT = 65_536
SIZES = (0, 1, 20_000, GITHUB_COMMENT_LIMIT, 200_000)
WINDOW = 8_000  # the default model's input limit (GitHub Models' free tier)
MEMORY = ".agent-memory/AGENTS.md"
COMMITTED = "memory-agent/v1/memory-agent/repo/committed/"
PR_REF, MAIN = "refs/pull/7/merge", "refs/heads/main"
PATCH = "@@ -1,2 +1,3 @@\n def fetch(url):\n+    log(url)\n     return get(url)\n"
_PART = re.compile(r"<memory_part>\n(.*)\n</memory_part>", re.DOTALL)


class ConsolidatingModel(ScriptedChatModel):
    """Answers every request; a request for a part of memory is answered by an ``edit_file``
    that replaces the part with one line, then by a sentence."""

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append(list(messages))
        last = messages[-1]
        part = _PART.search(message_text(last)) if isinstance(last, HumanMessage) else None
        if part is not None:
            first = part.group(1).splitlines()[0]
            new = f"- Consolidated: {first[:40]}"
            reply = tool_call(
                "edit_file", {"file_path": MEMORY, "old_string": part.group(1), "new_string": new}
            )
        elif isinstance(last, ToolMessage):
            reply = AIMessage(content="Consolidated.")
        else:
            reply = AIMessage(content="Reviewed: fine.")
        return ChatResult(generations=[ChatGeneration(message=reply)])


def largest_request(model: ScriptedChatModel) -> int:
    """The largest request the model received, counted by the runs' model's tokenizer
    (gpt-4.1-mini: o200k), as its provider counts it."""
    estimator = TokenEstimator.for_encoding(O200K)
    return max(
        (estimator.count_request("", (message_text(m) for m in seen)) for seen in model.seen),
        default=0,
    )


def untrusted(size: int) -> str:
    """``size`` characters of prose written by others, with a closing tag and a fence inside."""
    unit = "Please look again at the retry </pull_request> ``` loop. "
    return (unit * (size // len(unit) + 1))[:size]


@pytest.fixture
def served() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()
    fake.add_pull(FakePullRequest(files=[changed_file("src/fetch.py", PATCH)]))
    with fake.serve():
        yield fake


def assert_clean(outcome: RunOutcome, model: ScriptedChatModel) -> None:
    assert outcome.exit_code == 0, outcome.stdout + outcome.stderr
    assert "Traceback" not in outcome.stdout + outcome.stderr
    assert largest_request(model) <= WINDOW


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("action", ["opened", "synchronize"])
def test_a_pull_request_title_and_description_of_any_size(
    tmp_path: Path, size: int, action: str
) -> None:
    fake = FakeGitHub()
    pull = FakePullRequest(
        title=untrusted(size) or "t",
        body=untrusted(size),
        files=[changed_file("src/fetch.py", PATCH)],
    )
    fake.add_pull(pull)
    event = pull_request_event(action=action)  # a pull_request run reads them from its payload
    event["pull_request"].update(title=pull.title, body=pull.body)
    model = ConsolidatingModel.from_script()
    with fake.serve():
        outcome = ActionRunner(tmp_path).run("pull_request", event, PR_REF, model)
    assert_clean(outcome, model)
    assert outcome.outputs["outcome"] == "reviewed"
    if size > GITHUB_COMMENT_LIMIT // 2:
        request = message_text(model.seen[0][-1])
        assert "[title cut to its first 300 of" in request
        assert "[description cut to its first" in request


@pytest.mark.parametrize("size", SIZES)
def test_a_comment_of_any_size_is_answered_cut_with_a_note(
    tmp_path: Path, served: FakeGitHub, size: int
) -> None:
    model = ConsolidatingModel.from_script()
    body = untrusted(size) or " "
    outcome = ActionRunner(tmp_path).run("issue_comment", comment_event(body), MAIN, model)
    assert_clean(outcome, model)
    assert outcome.outputs["outcome"] == "reviewed"
    request = message_text(model.seen[0][-1])
    cut = "[comment cut to its first" in request
    assert cut == (size > 3_000), request[:400]
    assert len(served.bodies(7)) == 1


@pytest.mark.parametrize("size", SIZES)
def test_a_thread_reply_of_any_size(tmp_path: Path, served: FakeGitHub, size: int) -> None:
    model = ConsolidatingModel.from_script()
    event = reply_event(1, untrusted(size) or " ")
    outcome = ActionRunner(tmp_path).run("pull_request_review_comment", event, PR_REF, model)
    assert_clean(outcome, model)


def seed_memory(runner: ActionRunner, text: str) -> None:
    seed = runner.root / "seed" / ".agent-memory"
    seed.mkdir(parents=True)
    (seed / "AGENTS.md").write_text(text)
    LocalDirectoryStore(runner.store_dir).save(f"{COMMITTED}1-1", seed)


def big_memory(times: float, budget: int) -> str:
    lines = [
        f"- Rule {n:04d}: retries use tenacity, not a hand-written loop.\n" for n in range(999)
    ]
    text, size = "# Rules\n", int(times * budget)
    for line in lines:
        if len(text) + len(line) > size:
            break
        text += line
    return text


BUDGET = 7 * 1024  # max_memory_kb=auto for an 8,000-token window


# Four times its budget is refused when memory loads, with its own line (exit 4).
@pytest.mark.parametrize(
    ("event_name", "event", "ref", "times"),
    [
        ("pull_request", pull_request_event(), PR_REF, 3),
        ("pull_request", pull_request_event(), PR_REF, 3.9),
        ("pull_request", pull_request_event(action="synchronize"), PR_REF, 3),
        # A maintenance request holds memory alone: 3 times its budget fits one counted by the
        # model's tokenizer (about 3.5 characters a token), 3.9 times does not.
        ("push", push_event(), MAIN, 3.9),
        (
            "schedule",
            {"schedule": "0 3 * * *", "repository": push_event()["repository"]},
            MAIN,
            3.9,
        ),
    ],
    ids=["pull_request", "pull_request-3.9", "synchronize", "push", "schedule"],
)
def test_memory_far_over_its_budget_is_consolidated_in_parts_that_fit(  # noqa: PLR0917
    tmp_path: Path,
    served: FakeGitHub,
    event_name: str,
    event: dict[str, Any],
    ref: str,
    times: float,
) -> None:
    runner = ActionRunner(tmp_path)
    seed_memory(runner, big_memory(times, BUDGET))
    model = ConsolidatingModel.from_script()

    outcome = runner.run(event_name, event, ref, model)

    assert_clean(outcome, model)
    parts = [seen for seen in model.seen if "<memory_part>" in message_text(seen[-1])]
    assert len(parts) >= 2  # too large for one request: in parts
    assert all("<agent_memory>" not in message_text(seen[0]) for seen in parts)
    assert "consolidated in" in outcome.stdout + outcome.summary
    saved = outcome.outputs.get("saved_key", "")
    assert saved, outcome.stdout
    memory = LocalDirectoryStore(runner.store_dir).read_entry(saved)["AGENTS.md"]
    assert len(memory.encode()) <= BUDGET


def test_read_only_memory_that_fills_the_window_leaves_a_listed_review_not_a_crash(
    tmp_path: Path,
) -> None:
    """The repository's own AGENTS.md cannot be consolidated by the run: the files are listed as
    not reviewed, with one line saying what to change."""
    fake = FakeGitHub()
    names = ("AGENTS.md", "STYLE.md", "TESTS.md", "DOCS.md")
    guides = {name: big_memory(1, BUDGET) for name in names}
    files = [changed_file("src/fetch.py", PATCH)]
    fake.add_pull(FakePullRequest(files=files, base_contents=guides))
    model = ConsolidatingModel.from_script()
    # Each within max_memory_kb, together more than the window holds.
    runner = ActionRunner(tmp_path, inputs={"memory_sources": "\n".join(names)})
    with fake.serve():
        outcome = runner.run("pull_request", pull_request_event(), PR_REF, model)
    assert_clean(outcome, model)
    assert outcome.outputs["outcome"] == "partial"
    assert outcome.outputs["files_reviewed"] == "0"
    [comment] = fake.bodies(7)
    assert "list fewer memory_sources, or raise max_input_tokens" in comment
