"""``memory-agent review --local``'s failures, each one line in the CLI's words: flags and
variables (never an action's input), a garbled answer, Ctrl-C (exit 130), and a store folder that
cannot be used (exit 2 before any model call)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_action.local import review as local_review
from tests.fakes.openai_stub import ErrorReply, OpenAIStub, RawReply
from tests.integration.test_review_local import one_error_line, repo, review_local, stub

__all__ = ["repo", "stub"]  # fixtures

pytestmark = pytest.mark.usefixtures("repo")


def the_error(err: str) -> str:
    """The one error line, last after the run's progress; no traceback before it."""
    errors = [line for line in err.splitlines() if line.startswith("Error: ")]
    assert errors == err.splitlines()[-1:], err
    assert "Traceback" not in err
    return errors[0]


def test_a_bad_flag_value_names_the_flag(
    capsys: pytest.CaptureFixture[str], stub: OpenAIStub, tmp_path: Path
) -> None:
    code, out, err = review_local(capsys, stub, tmp_path / "store", "--max-memory-kb", "abc")

    assert (code, out) == (2, "")
    assert one_error_line(err).startswith(
        "Error: --max-memory-kb has the invalid value 'abc'; accepted: a whole number"
    )
    assert stub.requests == []


def test_a_memory_budget_that_does_not_fit_names_the_flags(
    capsys: pytest.CaptureFixture[str], stub: OpenAIStub, tmp_path: Path
) -> None:
    code, _, err = review_local(
        capsys, stub, tmp_path / "store", "--max-memory-kb", "1024", model="openai:some-local-model"
    )

    line = one_error_line(err)
    assert code == 2
    assert line.startswith("Error: --max-memory-kb (1024) does not fit the model's input limit")
    assert "lower --max-memory-kb to " in line and "raise --max-input-tokens" in line
    assert "max_memory_kb" not in line and "Input" not in line


def test_refused_credentials_name_the_variable(
    capsys: pytest.CaptureFixture[str], stub: OpenAIStub, tmp_path: Path
) -> None:
    stub.add_replies(ErrorReply(401, "Incorrect API key provided"))

    code, _, err = review_local(capsys, stub, tmp_path / "store")

    assert code == 5
    assert the_error(err) == (
        "Error: The model provider refused the credentials (HTTP 401): check "
        "$MEMORY_AGENT_MODEL_API_KEY."
    )


def test_a_garbled_answer_is_one_line(
    capsys: pytest.CaptureFixture[str], stub: OpenAIStub, tmp_path: Path
) -> None:
    stub.add_replies(RawReply(b'{"id": "chatcmpl-1", "choices": [{"mess'))

    code, _, err = review_local(capsys, stub, tmp_path / "store")

    line = the_error(err)
    assert code == 5
    assert line.startswith("Error: The model provider's answer is not valid JSON (cut off or ")
    assert line.endswith(
        "check that --model-base-url is an OpenAI-compatible server, or try again."
    )
    assert "JSONDecodeError" not in line


def test_ctrl_c_is_one_line_and_exit_code_130(
    capsys: pytest.CaptureFixture[str],
    stub: OpenAIStub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def interrupted(*_args: object, **_kwargs: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(local_review.pipeline, "run", interrupted)

    code, out, err = review_local(capsys, stub, tmp_path / "store")

    assert (code, out) == (130, "")
    assert the_error(err).startswith("Error: Interrupted (Ctrl-C)")
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("layout", "expected"),
    [
        ("file", "is a file"),
        ("under a file", "is a file, not a folder"),
        ("cannot be made", "no entry can be written there"),
    ],
)
def test_an_unusable_store_folder_is_refused_before_any_model_call(
    capsys: pytest.CaptureFixture[str],
    stub: OpenAIStub,
    tmp_path: Path,
    layout: str,
    expected: str,
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder\n")
    store = {
        "file": blocker,
        "under a file": blocker / "store",
        # Not even root may make a folder in /proc: the probe's mkdir fails.
        "cannot be made": Path("/proc/self/memory-agent-store"),
    }[layout]

    code, out, err = review_local(capsys, stub, store)

    line = one_error_line(err)
    assert (code, out) == (2, "")
    assert line.startswith(f"Error: --store-dir {store} cannot hold the memory store: ")
    assert expected in line
    assert stub.requests == []
