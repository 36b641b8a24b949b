"""Each masked-value pass of the outgoing gate, and each layer that keeps a masked value out of
saved memory, proven on its own (issue 31).

A value the run masked (the model's API key, registered with ``::add-mask::``) that no format rule
recognises is planted where it reaches one path of the gate and no earlier redaction: a cache key
(a step output), a changed file's name (the sticky comment's list of files not reviewed), a
refused entry's key (a comment command's reply). Where earlier layers always redact first (saved
memory: the detector in ``write_file``, the redaction of the final memory, the gate at save), the
test turns the other layers off and shows that the one left keeps the value out alone. Every test
reads what a user meets: the step output, the posted comment, the reply, the saved entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_action import gha, pipeline
from memory_action.lifecycle import layers
from memory_action.memory import middleware, tools
from memory_action.publish import report
from memory_action.safety import outgoing, scrub
from memory_action.store.local import LocalDirectoryStore
from tests.fakes.github_api import FakeGitHub, FakePullRequest, changed_file
from tests.fakes.runner import (
    ActionRunner,
    RunOutcome,
    comment_event,
    pull_request_event,
    push_event,
)
from tests.fakes.scripted_model import ScriptedChatModel, tool_call
from tests.fakes.secrets_corpus import MASKED_VALUES

# Given as model_api_key, so the run masks it; no format rule knows it (checked below).
MASKED = MASKED_VALUES[1]
MEMORY = ".agent-memory/AGENTS.md"
MAIN, PR_REF = "refs/heads/main", "refs/pull/7/merge"
COMMITTED = "memory-agent/v1/memory-agent/repo/committed/"
OVERLAY = "memory-agent/v1/memory-agent/repo/pr-7/"
PATCH = "@@ -0,0 +1,1 @@\n+x = 1\n"


def test_the_planted_value_is_found_only_as_a_masked_value() -> None:
    assert scrub.find_secrets(f"- uses {MASKED} here", ()) == []
    assert scrub.find_secrets(f"- uses {MASKED} here", (MASKED,))


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub(permissions={"mona": "write"})
    fake.add_pull(FakePullRequest(files=[changed_file("src/a.py", PATCH)]))
    with fake.serve():
        yield fake


@pytest.fixture
def runner(tmp_path: Path) -> ActionRunner:
    """The local directory store, committed memory in it (not on a git branch)."""
    return ActionRunner(
        tmp_path, inputs={"model_api_key": MASKED, "memory_store": "cache", "exclude": "docs/**"}
    )


def ran(outcome: RunOutcome) -> RunOutcome:
    assert outcome.exit_code == 0, outcome.stdout + outcome.stderr
    return outcome


def plant(runner: ActionRunner, key: str, agents_md: bytes) -> None:
    folder = runner.root / "planted"
    folder.mkdir(exist_ok=True)
    (folder / "AGENTS.md").write_bytes(agents_md)
    assert LocalDirectoryStore(runner.store_dir).save(key, folder).saved


# --- the outgoing gate's masked pass, one path at a time -----------------------------------------


def test_a_step_output_never_carries_a_masked_value(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    """main.py: the key a run restored is a step output; a pull request's own workflow can
    save an entry under any key in its scope, a masked value in it."""
    planted = f"{OVERLAY}{MASKED}"
    plant(runner, planted, b"- Retries use tenacity.\n")
    model = ScriptedChatModel.from_script("Looks fine.")

    outcome = ran(runner.run("pull_request", pull_request_event(), PR_REF, model))

    assert outcome.outputs["memory_key"].startswith(OVERLAY)  # the planted entry was restored
    output_file = next(runner.root.glob("run-*/output")).read_text(encoding="utf-8")
    assert MASKED not in output_file
    assert MASKED not in "".join(outcome.outputs.values())


def test_the_sticky_comment_never_carries_a_masked_value(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    """publish/report.py: a changed file's name is the pull request author's text; one the
    review skips is listed in the comment as not reviewed."""
    github.pulls[7].files = [changed_file(f"docs/{MASKED}.md", PATCH)]

    ran(runner.run("pull_request", pull_request_event(), PR_REF, ScriptedChatModel.from_script()))

    [body] = github.bodies(7)
    assert "Not reviewed (1 file)" in body
    assert MASKED not in body


def test_a_commands_reply_never_carries_a_masked_value(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    """commands/route.py: a reply saying memory could not be read names the entry's key."""
    plant(runner, f"{COMMITTED}{MASKED}", b"\xff\xfe not UTF-8\n")
    event = comment_event("@memory-agent memory", association="MEMBER", number=12)
    event["issue"].pop("pull_request")

    ran(runner.run("issue_comment", event, MAIN, ScriptedChatModel.from_script()))

    [reply] = github.bodies(12)
    assert "could not be read" in reply
    assert MASKED not in reply


def without_summary_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    """The outgoing gate of the job summary (``report.safe_summary``), as if given no masked
    value."""

    def gate(text: str, masked: Iterable[str] = (), **how: Any) -> outgoing.SafeText:
        return outgoing.gate(text, (), **how)

    monkeypatch.setattr(report, "gate", gate)


def without_summary_mask(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner's masking of what the job summary file gets (``Workflow.append_summary``)."""
    monkeypatch.setattr(gha.Workflow, "_mask", lambda self, text: text)


SUMMARY_LAYERS = {
    "the gate of the job summary": without_summary_mask,
    "the mask of the job summary file": without_summary_gate,
}


@pytest.mark.parametrize("kept", list(SUMMARY_LAYERS))
def test_each_layer_alone_keeps_a_masked_value_out_of_the_job_summary(
    kept: str, runner: ActionRunner, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """publish/report.py and gha.py: the job summary lists the files not reviewed, whose names
    the pull request's author chose; each of the two layers keeps a masked value out alone."""
    SUMMARY_LAYERS[kept](monkeypatch)
    github.pulls[7].files = [changed_file(f"docs/{MASKED}.md", PATCH)]

    outcome = ran(
        runner.run("pull_request", pull_request_event(), PR_REF, ScriptedChatModel.from_script())
    )

    assert "Not reviewed (1 file)" in outcome.summary
    assert MASKED not in outcome.summary


# --- saved memory: each layer alone --------------------------------------------------------------

BENIGN = "- Retries use tenacity.\n"
LEAKY = f"{BENIGN}- Deploy with {MASKED}.\n"


def without_masked_detector(monkeypatch: pytest.MonkeyPatch) -> None:
    """The memory tools' detector, as if it were given no masked value."""

    def find(text: str, masked: Iterable[str] = ()) -> list[scrub.SecretFinding]:
        return scrub.find_secrets(text, ())

    monkeypatch.setattr(tools, "find_secrets", find)


def without_final_redaction(monkeypatch: pytest.MonkeyPatch) -> None:
    """The redaction of the run's final memory, as if it were given no masked value."""

    def redact(text: str, masked: Iterable[str] = ()) -> tuple[str, list[scrub.SecretFinding]]:
        return scrub.redact(text, ())

    monkeypatch.setattr(pipeline, "redact", redact)


def without_gate_at_save(monkeypatch: pytest.MonkeyPatch) -> None:
    """The outgoing gate at save (``write_entry``), as if it were given no masked value."""

    def gate(text: str, masked: Iterable[str] = (), **how: Any) -> outgoing.SafeText:
        return outgoing.gate(text, (), **how)

    monkeypatch.setattr(layers, "gate", gate)


LAYERS = {
    "detector in write_file": without_masked_detector,
    "redaction of the final memory": without_final_redaction,
    "gate at save": without_gate_at_save,
}


def saved_memory(runner: ActionRunner) -> str:
    store = LocalDirectoryStore(runner.store_dir)
    [entry] = store.entries(COMMITTED)
    return store.read_entry(entry.key)["AGENTS.md"]


@pytest.mark.parametrize("kept", list(LAYERS))
def test_each_layer_alone_keeps_a_masked_value_out_of_saved_memory(
    kept: str, runner: ActionRunner, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, turn_off in LAYERS.items():
        if name != kept:
            turn_off(monkeypatch)
    model = ScriptedChatModel.from_script(
        tool_call("write_file", {"file_path": MEMORY, "content": BENIGN}),
        tool_call("edit_file", {"file_path": MEMORY, "old_string": BENIGN, "new_string": LEAKY}),
        "Done.",
    )

    outcome = ran(runner.run("push", push_event(), MAIN, model))

    assert outcome.outputs["saved_key"], outcome.stdout
    saved = saved_memory(runner)
    assert BENIGN in saved
    assert MASKED not in saved


def without_fetch_redaction(monkeypatch: pytest.MonkeyPatch) -> None:
    """The redaction of restored memory (``layers.fetch``), as if given no masked value."""

    def redact(text: str, masked: Iterable[str] = ()) -> tuple[str, list[scrub.SecretFinding]]:
        return scrub.redact(text, ())

    monkeypatch.setattr(layers, "redact", redact)


def without_prompt_redaction(monkeypatch: pytest.MonkeyPatch) -> None:
    """The redaction of memory as the prompt shows it (``MemoryMiddleware``), likewise."""

    def redact(text: str, masked: Iterable[str] = ()) -> tuple[str, list[scrub.SecretFinding]]:
        return scrub.redact(text, ())

    monkeypatch.setattr(middleware, "redact", redact)


PROMPT_LAYERS = {
    "redaction of restored memory": without_fetch_redaction,
    "redaction of memory in the prompt": without_prompt_redaction,
}


@pytest.mark.parametrize("kept", list(PROMPT_LAYERS))
def test_each_layer_alone_keeps_a_masked_value_in_restored_memory_from_the_model(
    kept: str, runner: ActionRunner, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Restored memory is untrusted: an entry may hold a masked value; the model (another
    party: the provider) must never be sent it."""
    for name, turn_off in PROMPT_LAYERS.items():
        if name != kept:
            turn_off(monkeypatch)
    plant(runner, f"{COMMITTED}1-1-review-00000000", LEAKY.encode())
    model = ScriptedChatModel.from_script("Nothing to learn.")

    ran(runner.run("push", push_event(), MAIN, model))

    [prompt] = model.system_prompts
    assert "Retries use tenacity" in prompt  # the restored memory is in the prompt
    assert MASKED not in prompt
