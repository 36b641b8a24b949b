"""A pull request too large for one request, through the whole action: what does not fit is
listed as not reviewed (``outcome: partial``, exit 0), memory is saved, and no message says the
provider refused a request it never saw.

The two shapes found from outside: the only file is one long line (a JSON fixture, an inlined
SVG), and two files that each fill a request under ``max_model_calls: 2``. On the code before
this test both exited 5 after 0 model calls: the plan of one batch was sent as the one request of
a review is (every tool, memory), which did not fit, and the engine's own refusal was reported
as the provider's.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

import pytest

from memory_action.model.tokens import TokenEstimator
from memory_action.review.budget import message_text
from memory_action.store.local import LocalDirectoryStore
from tests.fakes.github_api import FakeGitHub, FakePullRequest, changed_file
from tests.fakes.runner import ActionRunner, RunOutcome, pull_request_event
from tests.fakes.scripted_model import ScriptedChatModel, tool_call

WINDOW = 8_000  # the default model's input limit (GitHub Models' free tier)
MEMORY = ".agent-memory/AGENTS.md"
LESSON = "# Conventions\n\n- Fixtures are generated; review their generator instead.\n"
PR_REF = "refs/pull/7/merge"


def one_long_line(chars: int) -> list[dict[str, Any]]:
    """An inlined blob as fixtures hold one: base64 of no pattern, which a tokenizer cannot
    pack (a run of one letter would be a few tokens, counted exactly)."""
    blob = b"".join(hashlib.sha256(str(n).encode()).digest() for n in range(chars // 40 + 2))
    line = '{"data": "' + base64.b64encode(blob).decode()[:chars] + '"}'
    return [changed_file("tests/fixtures/big.json", f"@@ -0,0 +1 @@\n+{line}\n", "added")]


def two_files_of(lines: int) -> list[dict[str, Any]]:
    body = "".join(f"+    total_{n} = add(total_{n - 1}, {n})\n" for n in range(lines))
    patch = f"@@ -0,0 +1,{lines} @@\n{body}"
    return [changed_file(path, patch, "added") for path in ("src/a.py", "src/b.py")]


def learning_model() -> ScriptedChatModel:
    """Records a lesson, then answers."""
    return ScriptedChatModel.from_script(
        tool_call("write_file", {"file_path": MEMORY, "content": LESSON}),
        tool_call("report_review", {"summary": "Looks generated.", "findings": []}),
    )


def run(tmp_path: Path, files: list[dict[str, Any]], **inputs: str) -> tuple[RunOutcome, str]:
    fake = FakeGitHub()
    fake.add_pull(FakePullRequest(files=files))
    model = learning_model()
    runner = ActionRunner(tmp_path, inputs=inputs)
    with fake.serve():
        outcome = runner.run("pull_request", pull_request_event(), PR_REF, model)
    assert outcome.exit_code == 0, outcome.stdout + outcome.stderr
    estimator = TokenEstimator()
    for seen in model.seen:  # every request sent fits the window
        assert estimator.count_request("", (message_text(m) for m in seen)) <= WINDOW
    [comment] = fake.bodies(7)
    # Memory is saved as on any finished run.
    [entry] = LocalDirectoryStore(runner.store_dir).entries()
    assert outcome.outputs["saved_key"] == entry.key
    assert LocalDirectoryStore(runner.store_dir).read_entry(entry.key)["AGENTS.md"] == LESSON
    everything = outcome.stdout + outcome.stderr + outcome.summary + comment
    assert "refused" not in everything  # no provider refused what it never saw
    assert "::error" not in outcome.stdout
    assert "reviewed in part: partly" not in everything
    assert outcome.outputs["outcome"] == "partial"
    return outcome, comment


@pytest.mark.parametrize("chars", [18_000, 200_000])
def test_a_pull_request_of_one_line_too_long_for_a_request_is_reviewed_in_part(
    tmp_path: Path, chars: int
) -> None:
    outcome, comment = run(tmp_path, one_long_line(chars))

    assert outcome.outputs["model_calls"] == "2"
    assert "Not reviewed (1 file)" in comment
    assert "- `tests/fixtures/big.json`: reviewed in part: new line 1 cut to " in comment
    assert f"of {chars + 12} characters" in comment


def test_two_files_each_filling_a_request_under_two_model_calls_review_one(
    tmp_path: Path,
) -> None:
    outcome, comment = run(tmp_path, two_files_of(380), max_model_calls="2")

    assert outcome.outputs["model_calls"] == "2"  # one conversation: the lesson, the answer
    assert (outcome.outputs["files_reviewed"], outcome.outputs["files_skipped"]) == ("1", "1")
    # The reason quotes the setting as the user gave it.
    assert "- `src/b.py`: over max_model_calls (2)" in comment
