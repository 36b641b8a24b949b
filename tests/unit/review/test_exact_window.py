"""Requests for a model whose tokenizer ships with the package never go over its window, counted
by that tokenizer as OpenAI counts a chat request, even for code far denser than the estimate's
3 characters a token (issue 26: a 413 is a wasted request of the day's 150)."""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from memory_action.agent.pr_tools import make_pr_tools
from memory_action.agent.prompts import system_prompt
from memory_action.github.pull_request import ChangedFile
from memory_action.model.profile import profile_for
from memory_action.model.tokenizer import O200K, Tokenizer
from memory_action.review.budget import message_text
from memory_action.review.engine import ReviewEngine, ReviewSetup
from memory_action.run.settings import Mode
from tests.fakes.scripted_model import ScriptedChatModel
from tests.fakes.static_reader import StaticPullRequest

WINDOW = 8_000
O200K_COUNT = Tokenizer(encoding=O200K)  # its own instance: nothing shared with the engine's


def _openai_count(messages: list[BaseMessage], tools: list[dict[str, object]]) -> int:
    """A chat request as OpenAI's cookbook counts it: 3 tokens a message, its role and its
    text, 3 for the reply; the tools' schemas as JSON (more than OpenAI's rendering of them)."""
    roles = {SystemMessage: "system", HumanMessage: "user", AIMessage: "assistant"}
    total = 3
    for message in messages:
        role = roles.get(type(message), "tool" if isinstance(message, ToolMessage) else "user")
        total += 3 + O200K_COUNT.count(role) + O200K_COUNT.count(message_text(message))
    return total + (O200K_COUNT.count(json.dumps(tools)) if tools else 0)


def _dense_file(path: str, kind: str, lines: int, seed: int) -> ChangedFile:
    rng = random.Random(seed)  # noqa: S311 - reproducible test data, not secrets
    if kind == "base64":
        made = [base64.b64encode(rng.randbytes(45)).decode() for _ in range(lines)]
    elif kind == "symbols":
        made = ["".join(rng.choice("{}[]()<>=!&|;:-+*/%^~@#$?.,'\"\\") for _ in range(60))] * lines
    else:  # CJK
        made = ["".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(30)) for _ in range(lines)]
    body = "".join(f"+{line}\n" for line in made)
    return ChangedFile(
        path=path,
        status="added",
        additions=lines,
        deletions=0,
        patch=f"@@ -0,0 +1,{lines} @@\n{body}",
    )


def _pull() -> StaticPullRequest:
    kinds = ["base64", "symbols", "cjk"]
    return StaticPullRequest(
        [_dense_file(f"assets/blob{n}.txt", kinds[n % 3], 45, seed=n) for n in range(9)]
    )


def _setup(calls: int) -> ReviewSetup:
    return ReviewSetup(
        profile=profile_for("github", "openai/gpt-4o-mini"),
        max_model_calls=calls,
        exclude=(),
        timeout_s=600,
        repository="octo-org/octo-repo",
        system_prompt=system_prompt(Mode.REVIEW, "memory-agent", "", memory=False),
        memory_budget_bytes=7 * 1024,
        memory=False,
    )


def _many_small() -> StaticPullRequest:
    """400 one-line files with long names: batches fill to the token, and the list of the files
    left over is long."""
    kinds = ["base64", "symbols", "cjk"]
    return StaticPullRequest(
        [
            _dense_file(f"src/a_long_folder_name/{n:03d}/a_long_module_name_{n}.txt", kind, 1, n)
            for n, kind in enumerate(kinds * 134)
        ][:400]
    )


def _requests(calls: int, pull: Callable[[], StaticPullRequest] = _pull) -> list[int]:
    reader = pull()
    model = ScriptedChatModel.from_script(*["Nothing to change."] * (calls + 2))
    engine = ReviewEngine(
        model,
        _setup(calls),
        memory=None,
        tools=make_pr_tools(reader, include_listing=False),
    )
    result = engine.review(reader)
    assert result.files_reviewed, result.note
    return [
        _openai_count(messages, tools)
        for messages, tools in zip(model.seen, model.seen_tools, strict=True)
    ]


def test_the_profile_of_a_github_openai_model_counts_with_its_tokenizer() -> None:
    assert profile_for("github", "openai/gpt-4o-mini").encoding == O200K
    assert profile_for("github", "openai/gpt-4").encoding == "cl100k_base"
    assert profile_for("anthropic", "claude-sonnet-4").encoding == ""
    assert profile_for("github", "meta/llama-3.3-70b-instruct").encoding == ""


def test_code_denser_than_the_estimate_never_makes_a_request_over_the_window() -> None:
    """Base64, dense symbols and CJK tokenize at 1.3 to 2 characters a token; the plan is
    made by the tokenizer, so every request is under the window by the tokenizer too."""
    sizes = _requests(calls=12)
    assert len(sizes) > 2
    assert max(sizes) <= WINDOW, sizes


def test_the_batches_of_dense_code_still_fill_the_window() -> None:
    sizes = _requests(calls=12)
    batches = sizes[:-1]  # the last request writes the review's summary
    assert min(batches[:-1]) >= 0.9 * WINDOW, sizes


def test_the_list_of_files_left_over_has_room_in_every_batch() -> None:
    """Too few calls for every file: each batch also lists the files no batch holds, and that
    list was planned for (else the engine's last check refuses to send the batches)."""
    sizes = _requests(calls=3, pull=_many_small)
    assert max(sizes) <= WINDOW, sizes
