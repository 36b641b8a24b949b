"""The room a request keeps for the diff is what the validation of max_memory_kb promises: the
fixed part of a review request (system prompt, memory guidelines, tools, the pull request's
header and file list) stays under REVIEW_OVERHEAD_TOKENS even for a long description and many
files."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from memory_action.agent.pr_tools import make_pr_tools
from memory_action.agent.prompts import system_prompt
from memory_action.github.pull_request import PullRequestInfo
from memory_action.memory.render import render_memory_block
from memory_action.memory.sources import MemoryFiles
from memory_action.memory.tools import make_memory_tools
from memory_action.model.profile import REVIEW_OVERHEAD_TOKENS
from memory_action.model.tokens import TokenEstimator
from memory_action.review.budget import tool_schema
from memory_action.review.messages import (
    LIST_CHARS,
    BatchView,
    batch_message,
    description_chars,
    header,
)
from memory_action.review.selection import Skipped
from memory_action.run.settings import Mode
from tests.fakes.static_reader import StaticPullRequest


def test_the_fixed_part_of_a_request_fits_the_overhead_the_inputs_are_checked_against(
    tmp_path: Path,
) -> None:
    info = PullRequestInfo(
        number=12345,
        title="T" * 200,
        body="A long description. " * 400,
        author="someone-with-a-long-login",
        html_url="https://github.com/o/r/pull/12345",
        head_sha="a" * 40,
        head_ref="feature/" + "x" * 60,
        base_ref="main",
    )
    names = [f"src/package/module_{n:03d}/implementation_file.py" for n in range(200)]
    view = BatchView(
        index=1,
        count=9,
        diff="",
        elsewhere=names,
        skipped=[Skipped(path=n, reason="over max_model_calls (11)") for n in names],
    )
    chars = description_chars(8_000, TokenEstimator())
    pr_header = header(info, "some-organisation/some-repository", description_chars=chars)
    frame = batch_message(pr_header, view, memory=True, budget_bytes=7 * 1024, extra="")
    system = system_prompt(Mode.REVIEW, "memory-agent", "Focus on correctness.")
    system += "\n\n" + render_memory_block([], ".agent-memory/AGENTS.md")
    files = MemoryFiles(
        workspace=tmp_path,
        read_only=(),
        writable=PurePosixPath(".agent-memory/AGENTS.md"),
        max_bytes=7 * 1024,
    )
    tools = [tool_schema(t) for t in make_pr_tools(StaticPullRequest([]), include_listing=False)]
    tools += [tool_schema(t) for t in make_memory_tools(files)]
    fixed = TokenEstimator().count_request(system, [frame], tools)
    assert fixed <= REVIEW_OVERHEAD_TOKENS, fixed
    # Long lists are cut, not sent whole.
    assert re.search(r"implementation_file.py and 1\d\d more\n", frame)
    assert len(frame) < 2 * LIST_CHARS + chars + 2_000
