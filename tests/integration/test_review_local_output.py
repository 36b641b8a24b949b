"""What ``memory-agent review --local`` prints: the summary once, in one wording with the right
plurals; a finding on a file the change does not touch apart from the change's findings."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from tests.fakes.git_repo import GitRepo
from tests.fakes.openai_stub import OpenAIStub, tool_call_reply
from tests.integration.test_review_local import learns, repo, review_local, stub

__all__ = ["repo", "stub"]  # fixtures


def finding(path: str, line: int, title: str) -> dict[str, object]:
    return {"path": path, "line": line, "title": title, "body": f"{title}.", "severity": "low"}


def reviews(*findings: dict[str, object]) -> dict[str, object]:
    return tool_call_reply(
        "report_review", {"summary": "Looked at the change.", "findings": list(findings)}
    )


def test_the_summary_is_printed_once_with_singular_words(
    capsys: pytest.CaptureFixture[str], repo: GitRepo, stub: OpenAIStub, tmp_path: Path
) -> None:
    repo.git("checkout", "-q", "-b", "one-file")
    repo.write("src/app.py", "print('one change')\n")
    repo.commit("One file")
    stub.add_replies(reviews())

    code, out, err = review_local(capsys, stub, tmp_path / "store", "--base", "feature")

    assert code == 0, out + err
    [summary] = [line for line in err.splitlines() if line.startswith("Review ")]
    assert summary.startswith("Review reviewed: 1 model call, ")
    assert summary.endswith(" · 1 file reviewed, 0 not")
    assert "model calls" not in err and "files reviewed" not in err


@pytest.mark.usefixtures("repo")
def test_a_finding_on_a_file_outside_the_diff_is_held_back(
    capsys: pytest.CaptureFixture[str], stub: OpenAIStub, tmp_path: Path
) -> None:
    stub.add_replies(
        reviews(
            finding("src/app.py", 1, "Retry count is hard-coded"),
            finding("README.md", 1, "The title says nothing"),
        )
    )

    code, out, err = review_local(capsys, stub, tmp_path / "store")

    assert code == 0, out + err
    # The model was not shown README.md: its finding is held back, never printed as a review's.
    assert "src/app.py" in out and "Retry count is hard-coded" in out
    assert "README.md" not in out and "The title says nothing" not in out


@pytest.mark.usefixtures("repo")
def test_progress_in_a_log_is_one_plain_line_per_model_request(
    capsys: pytest.CaptureFixture[str], stub: OpenAIStub, tmp_path: Path
) -> None:
    stub.add_replies(*learns())

    code, out, err = review_local(capsys, stub, tmp_path / "store")

    assert code == 0, out + err
    requests = [line for line in err.splitlines() if line.startswith("Model request ")]
    assert [line.split(" · ")[:3] for line in requests] == [
        ["Model request 1 of 1", "batch 1 of 1", "4 files"],
        ["Model request 2 of 2", "batch 1 of 1", "4 files"],  # the tool round added one
    ]
    assert "\r" not in err
    assert "Model request" not in out  # stdout stays the review alone


@pytest.mark.usefixtures("repo")
def test_progress_on_a_terminal_is_one_live_line_gone_before_the_summary(
    capsys: pytest.CaptureFixture[str],
    stub: OpenAIStub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setenv("TERM", "xterm-256color")
    stub.add_replies(*learns())

    code, out, _ = review_local(capsys, stub, tmp_path / "store")

    shown = terminal.getvalue()
    assert code == 0, out + shown
    assert "\r\x1b[KModel request 1 of 1 · batch 1 of 1 · 4 files" in shown
    # Every later line starts on a clean line: the live line was cleared before it.
    summary = shown.index("Review reviewed: ")
    assert shown[:summary].endswith("\r\x1b[K")
    assert shown.endswith("\n")
