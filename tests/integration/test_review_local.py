"""``memory-agent review --local``, in-process, on a git repository built by the test: the model
(the OpenAI-compatible stub) gets the change, the review is printed, memory goes to the local
store, GitHub is never asked anything, and every expected failure is one line with exit code 2.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import responses

from memory_action.cli import build_parser
from memory_action.local.git_diff import LocalChange
from memory_action.local.repository import RepositoryStore
from memory_action.local.review import settings_from_flags
from memory_action.maintenance.git_checkout import GitCheckout
from memory_action.store.local import LocalDirectoryStore
from tests.fakes.click_corpus import ClickCorpus
from tests.fakes.git_repo import TITLE, GitRepo, feature_repository, isolated_git_env
from tests.fakes.openai_stub import (
    OpenAIStub,
    RecordedRequest,
    report_reply,
    tool_call_reply,
)
from tests.integration.test_cli import GITHUB_TOKEN, MEMORY, run_cli

ANSWER = "The fetch now retries, but `line 18` was dropped without a word in the description."
LESSON = "# Conventions\n\n- Deleting lines needs a reason in the description.\n"
MODEL_KEY = "sk-" + "localkey" * 4
LOCAL_OVERLAY = "memory-agent/v1/memory-agent/repo/pr-0/local"


@pytest.fixture
def repo(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    no_ambient_settings: None,
    no_tiktoken: None,
) -> GitRepo:
    """The feature branch of ``feature_repository``, as the current folder; git sees no config
    of the developer's, the home folder is the test's own, the model key is set."""
    env = isolated_git_env(tmp_path / "home")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    monkeypatch.setenv("MEMORY_AGENT_MODEL_API_KEY", MODEL_KEY)
    built = feature_repository(tmp_path / "repo", env)
    monkeypatch.chdir(built.root)
    return built


@pytest.fixture
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub() as server:
        yield server


@pytest.fixture
def no_github() -> Iterator[responses.RequestsMock]:
    """Any request through ``requests`` (PyGithub's transport) fails and is recorded."""
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield mock


def review_local(
    capsys: pytest.CaptureFixture[str],
    stub: OpenAIStub,
    store: Path,
    *flags: str,
    model: str = "openai:gpt-4.1-mini",
) -> tuple[int, str, str]:
    return run_cli(
        capsys,
        "review",
        "--local",
        "--store-dir",
        str(store),
        "--model",
        model,
        "--model-base-url",
        stub.url("/v1"),
        *flags,
    )


def learns() -> list[dict[str, Any]]:
    """The model records a lesson in memory, then answers with the review."""
    write = {"file_path": MEMORY, "content": LESSON}
    return [tool_call_reply("write_file", write, call_id="call_1"), report_reply(ANSWER)]


def sent(requests: list[RecordedRequest]) -> str:
    """Everything the model was sent, as one text."""
    return "\n".join(json.dumps(request.body, ensure_ascii=False) for request in requests)


def one_error_line(err: str) -> str:
    [line] = err.splitlines()
    assert line.startswith("Error: ")
    return line


def test_review_local_sends_the_diff_prints_the_review_and_saves_memory(
    capsys: pytest.CaptureFixture[str],
    repo: GitRepo,
    stub: OpenAIStub,
    no_github: responses.RequestsMock,
    tmp_path: Path,
) -> None:
    repo.git("remote", "add", "origin", "git@github.com:octo/demo.git")
    head_before = repo.git("rev-parse", "HEAD")
    stub.add_replies(*learns())

    code, out, err = review_local(capsys, stub, tmp_path / "store")

    assert code == 0, out + err
    # stdout is the review and the memory diff alone: it can be piped.
    assert out.startswith(f"{ANSWER}\n\nMemory changes:\n--- /dev/null\n+++ b/{MEMORY}\n")
    assert "+- Deleting lines needs a reason in the description." in out
    assert "nothing is posted to GitHub" in err
    # What the review covered and cost goes with the progress (assets/logo.bin is binary).
    assert "Not reviewed: assets/logo.bin: no diff to read: binary, empty or a mode change" in err
    assert "Review reviewed: 2 model calls, 20 tokens in, 10 out · 4 files reviewed, 1 not" in err
    # The model got the change in its first request: the description, the files as GitHub
    # lists them, the patches; not main's later change (three dots: since the merge base).
    first = stub.requests[0].body["messages"][1]["content"]
    assert f"Local change in octo/demo: {TITLE}" in first
    assert "Author: Ada Tester; base: main <- head: feature" in first
    for name in ("src/app.py", "docs/manual.md", "docs/guide.md", "old.txt", "assets/logo.bin"):
        assert name in first
    assert "-line 3\n+line three" in first
    assert "Manual paragraph 30." in first
    assert "Changed on main after the branch" not in sent(stub.requests)
    assert {r.header("authorization") for r in stub.requests} == {f"Bearer {MODEL_KEY}"}
    assert stub.requests[0].body["model"] == "gpt-4.1-mini"
    # Memory went to the local store, in the local change's own layer of its repository.
    store = RepositoryStore(
        store=LocalDirectoryStore(tmp_path / "store"), repository="github.com/octo/demo"
    )
    [entry] = store.entries()
    assert entry.key.startswith(LOCAL_OVERLAY)
    assert store.read_entry(entry.key)["AGENTS.md"] == LESSON
    assert f"Saved memory as {entry.key}" in err
    # Nothing asked GitHub, nothing changed in the checkout, no secret was shown.
    assert len(no_github.calls) == 0
    assert repo.git("status", "--porcelain") == ""
    assert repo.git("rev-parse", "HEAD") == head_before
    assert MODEL_KEY not in out + err


def test_the_next_local_review_starts_from_what_the_last_one_learned(
    capsys: pytest.CaptureFixture[str], repo: GitRepo, stub: OpenAIStub, tmp_path: Path
) -> None:
    stub.add_replies(*learns(), report_reply("Still fine."))

    first = review_local(capsys, stub, tmp_path / "store")
    second = review_local(capsys, stub, tmp_path / "store")

    assert first[0] == second[0] == 0, first[1:] + second[1:]
    assert second[1] == "Still fine.\n"
    system_prompt = stub.requests[-1].body["messages"][0]["content"]
    assert "Deleting lines needs a reason in the description." in system_prompt
    assert f"Restored memory from key {LOCAL_OVERLAY}" in second[2]


def test_no_save_leaves_the_store_empty(
    capsys: pytest.CaptureFixture[str], repo: GitRepo, stub: OpenAIStub, tmp_path: Path
) -> None:
    stub.add_replies(*learns())

    code, out, err = review_local(capsys, stub, tmp_path / "store", "--no-save")

    assert code == 0, out + err
    assert "--no-save was given" in out + err
    assert LocalDirectoryStore(tmp_path / "store").entries() == []


@pytest.mark.usefixtures("repo")
def test_a_github_model_uses_the_github_token_and_nothing_else(
    capsys: pytest.CaptureFixture[str],
    stub: OpenAIStub,
    no_github: responses.RequestsMock,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MEMORY_AGENT_MODEL_API_KEY")
    monkeypatch.setenv("GITHUB_TOKEN", GITHUB_TOKEN)
    stub.add_replies(report_reply(ANSWER))

    code, out, err = review_local(
        capsys, stub, tmp_path / "store", model="github:openai/gpt-4.1-mini"
    )

    assert code == 0, out + err
    assert out == f"{ANSWER}\n"
    [request] = stub.requests
    assert request.header("authorization") == f"Bearer {GITHUB_TOKEN}"
    assert request.body["model"] == "openai/gpt-4.1-mini"
    assert len(no_github.calls) == 0
    assert GITHUB_TOKEN not in out + err


def test_a_github_model_without_a_token_is_one_line(
    capsys: pytest.CaptureFixture[str], repo: GitRepo, stub: OpenAIStub, tmp_path: Path
) -> None:
    code, out, err = review_local(
        capsys, stub, tmp_path / "store", model="github:openai/gpt-4.1-mini"
    )

    assert (code, out) == (2, "")
    line = one_error_line(err)
    assert "needs a GitHub token: set GITHUB_TOKEN (e.g. GITHUB_TOKEN=$(gh auth token))" in line
    assert stub.requests == []


@pytest.mark.usefixtures("repo")
def test_an_openai_model_without_a_key_is_one_line(
    capsys: pytest.CaptureFixture[str],
    stub: OpenAIStub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MEMORY_AGENT_MODEL_API_KEY")
    monkeypatch.setenv("GITHUB_TOKEN", GITHUB_TOKEN)  # not a key for OpenAI

    code, out, err = review_local(capsys, stub, tmp_path / "store")

    assert (code, out) == (2, "")
    assert one_error_line(err) == (
        "Error: model=openai:gpt-4.1-mini needs an API key: set MEMORY_AGENT_MODEL_API_KEY "
        "or OPENAI_API_KEY (any value if the server needs none)."
    )
    assert stub.requests == []


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--base", "no-such-branch"], "Error: --base no-such-branch names no commit in "),
        (["--base", "feature"], "Error: Nothing to review: git diff feature...HEAD is empty"),
        (["--pr", "7"], "Error: --local reviews the current checkout: leave out --repo and --pr"),
        (["--repo", "octo/demo"], "Error: --local reviews the current checkout: leave out"),
    ],
    ids=["unknown base", "empty diff", "with --pr", "with --repo"],
)
@pytest.mark.usefixtures("repo")
def test_refused_reviews_are_one_line_and_exit_code_2(
    capsys: pytest.CaptureFixture[str],
    stub: OpenAIStub,
    tmp_path: Path,
    flags: list[str],
    expected: str,
) -> None:
    code, out, err = review_local(capsys, stub, tmp_path / "store", *flags)

    assert (code, out) == (2, "")
    assert one_error_line(err).startswith(expected)
    assert stub.requests == []
    assert not (tmp_path / "store").exists()


def test_on_the_default_branch_there_is_nothing_to_review(
    capsys: pytest.CaptureFixture[str], repo: GitRepo, stub: OpenAIStub, tmp_path: Path
) -> None:
    repo.git("switch", "--quiet", "main")

    code, out, err = review_local(capsys, stub, tmp_path / "store")

    assert (code, out) == (2, "")
    assert one_error_line(err).startswith("Error: Nothing to review: git diff main...HEAD")


@pytest.mark.usefixtures("repo")
def test_outside_a_checkout_is_one_line(
    capsys: pytest.CaptureFixture[str],
    stub: OpenAIStub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)

    code, out, err = review_local(capsys, stub, tmp_path / "store")

    assert (code, out) == (2, "")
    assert f"{elsewhere} is not inside a git checkout" in one_error_line(err)


def test_base_without_local_and_review_without_a_target(
    capsys: pytest.CaptureFixture[str], repo: GitRepo
) -> None:
    code, out, err = run_cli(capsys, "review", "--base", "main")

    assert (code, out) == (2, "")
    assert (
        one_error_line(err) == "Error: --base goes with --local: add --local, or leave out --base."
    )

    code, out, err = run_cli(capsys, "review")

    assert (code, out) == (2, "")
    assert one_error_line(err) == (
        "Error: review needs --repo OWNER/NAME and --pr N, or --local for the current checkout."
    )


def test_the_review_help_documents_local(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "review", "--help")

    assert code == 0
    for text in ("--local", "--base", "BASE...HEAD", "MEMORY_AGENT_MODEL_API_KEY"):
        assert text in out


def test_a_local_review_never_posts_a_comment() -> None:
    """There is no pull request on GitHub to post to: the settings say so before anything runs."""
    args = build_parser().parse_args(["review", "--local"])

    assert settings_from_flags(args, {}).post_comment is False


def test_the_local_reader_lists_the_click_pull_requests_as_the_github_fake_does(
    click_corpus: ClickCorpus, tmp_path: Path
) -> None:
    """Six real pull requests (3 to 34 files): the same files, statuses, counts, patches and
    contents as the corpus's GitHub fake, whose list follows GitHub's API."""
    git = GitCheckout(click_corpus.repo, isolated_git_env(tmp_path / "home"))
    for pull in click_corpus.pulls:
        merge_base = git.merge_base(pull.base_sha, pull.head_sha)
        assert merge_base is not None
        change = LocalChange(git, f"base-{pull.tag}", pull.base_sha, merge_base, pull.head_sha)

        listed = [
            (f.path, f.status, f.additions, f.deletions, f.patch, f.previous_path)
            for f in change.changed_files()
        ]

        assert listed == [
            (
                f["filename"],
                f["status"],
                f["additions"],
                f["deletions"],
                f.get("patch"),
                f.get("previous_filename"),
            )
            for f in pull.files
        ], pull.tag
        some = pull.paths[0]
        assert change.file_content(some) == _text(pull.head.get(some))
        assert change.base_file_content(some) == _text(pull.base.get(some))
        assert change.info().title == pull.title


def _text(data: bytes | None) -> str | None:
    return data.decode() if data is not None else None
